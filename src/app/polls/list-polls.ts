import { requireAccount } from '../access.js';
import type { Caller, Deps, Page, PageRequest, PollRow } from '../ports/index.js';
import { logicViewFor } from './webhook-urls.js';

export async function listPolls(
  deps: Deps,
  caller: Caller,
  accountId: string,
  page: PageRequest,
): Promise<Page<PollRow>> {
  await requireAccount(deps.store, caller, accountId, 'read');
  const view = await logicViewFor(deps.store, caller, accountId);
  const found = await deps.store.polls.listByAccount(accountId, page);
  return { ...found, data: found.data.map((p) => view.poll(p)) };
}
