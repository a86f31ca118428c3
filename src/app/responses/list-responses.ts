import type { Caller, Deps, Page, PageRequest, ResponseFilter } from '../ports/index.js';
import type { ResponseRow } from '../../domain/response.js';
import { authorizeScope } from './authorize-scope.js';
import { CREATED, checkWindow } from '../../domain/time-window.js';

export async function listResponses(
  deps: Deps,
  caller: Caller,
  filter: ResponseFilter,
  page: PageRequest,
): Promise<Page<ResponseRow>> {
  checkWindow({ start: filter.createdAfter, end: filter.createdBefore }, CREATED);
  const scope = await authorizeScope(deps, caller, filter);
  return deps.store.responses.list({ ...filter, ...scope }, page);
}
