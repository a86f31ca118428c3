import { requireAccount } from '../access.js';
import type { Caller, Deps, Page, PageRequest, PollRow } from '../ports/index.js';

export async function listPolls(
  deps: Deps,
  caller: Caller,
  accountId: string,
  page: PageRequest,
): Promise<Page<PollRow>> {
  await requireAccount(deps.store, caller, accountId, 'read');
  return deps.store.polls.listByAccount(accountId, page);
}
