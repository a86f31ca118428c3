import { DEFAULT_QUOTAS } from '../../domain/quotas.js';
import { requireAccount } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';

export type Usage = { used: number; quota: number };
export type AccountUsage = { accountId: string; polls: Usage; members: Usage; liveKeys: Usage };

/**
 * How much of each of its quotas the account uses, for any member: a script can look before it
 * creates rather than meet 409 limit_reached. Live keys are those limited to the account, as
 * the quota counts them.
 */
export async function getAccountUsage(deps: Deps, caller: Caller, accountId: string): Promise<AccountUsage> {
  await requireAccount(deps.store, caller, accountId, 'read');
  const quotas = deps.quotas ?? DEFAULT_QUOTAS;
  const used = await deps.store.accounts.usage(accountId);
  return {
    accountId,
    polls: { used: used.polls, quota: quotas.pollsPerAccount },
    members: { used: used.members, quota: quotas.membersPerAccount },
    liveKeys: { used: used.liveKeys, quota: quotas.liveKeysPerAccount },
  };
}
