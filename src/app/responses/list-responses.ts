import type { Caller, Deps, Page, PageRequest, ResponseFilter } from '../ports/index.js';
import type { ResponseRow } from '../../domain/response.js';
import { authorizeScope } from './authorize-scope.js';

export async function listResponses(
  deps: Deps,
  caller: Caller,
  filter: ResponseFilter,
  page: PageRequest,
): Promise<Page<ResponseRow>> {
  const scope = await authorizeScope(deps, caller, filter);
  return deps.store.responses.list({ ...filter, ...scope }, page);
}
