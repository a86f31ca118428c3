import { requireAccount } from '../access.js';
import type { Caller, Deps, Page, PageRequest, PollRow } from '../ports/index.js';
import { logicViewFor } from './webhook-urls.js';

/**
 * What one page of polls may hold of their stored bodies: a poll keeps up to 1 MiB of
 * translations beside its settings, and 100 such in one answer would take hundreds of MiB to
 * read, serialise and send.
 */
export const POLLS_PAGE_BYTES = 8 * 1024 * 1024;

export async function listPolls(
  deps: Deps,
  caller: Caller,
  accountId: string,
  page: PageRequest,
): Promise<Page<PollRow>> {
  await requireAccount(deps.store, caller, accountId, 'read');
  const view = await logicViewFor(deps.store, caller, accountId);
  const found = await deps.store.polls.listByAccount(accountId, page, POLLS_PAGE_BYTES);
  return { ...found, data: found.data.map((p) => view.poll(p)) };
}
