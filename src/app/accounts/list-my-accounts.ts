import { membershipsOf } from '../access.js';
import type { AccountMembership, Caller, Deps } from '../ports/index.js';

export async function listMyAccounts(deps: Deps, caller: Caller): Promise<AccountMembership[]> {
  return membershipsOf(deps.store, caller);
}
