import type { AccountMembership, Caller, Deps } from '../ports/index.js';

export async function listMyAccounts(deps: Deps, caller: Caller): Promise<AccountMembership[]> {
  return deps.store.users.memberships(caller.userId);
}
