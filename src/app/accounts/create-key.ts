import { may, noHigher, ROLES, type Role } from '../../domain/access.js';
import { DomainError } from '../../domain/errors.js';
import { lockedRole, type Actor } from '../access.js';
import type { Deps, Store } from '../ports/index.js';
import { issueKey, userFor } from './issue-key.js';
import { dropRecipient } from './drop-recipient.js';
import { DEFAULT_QUOTAS, type Quotas } from '../../domain/quotas.js';

/**
 * Adds the member if new (or changes their role) and issues them a new key, shown only in this
 * answer. An API caller (owner or admin) may give no role higher than their own, and may not
 * change the role of a member who outranks them; the key they make opens this account only,
 * whatever else its user belongs to. The operator's keys are the user's, in every account.
 */
export async function createKey(deps: Deps, actor: Actor, input: { accountId: string; email: string; role: Role }) {
  return deps.store.transaction(async (store) => {
    const now = deps.clock.now();
    // Role changes of one account queue on its lock, so "the last owner stays" holds under
    // concurrency, and the caller's own role is the one read under it.
    const own = await lockedRole(store, actor, input.accountId);
    const userId = await userFor(store, input.email, now);
    const membership = await store.users.membership(input.accountId, userId);
    if (!noHigher(input.role, own) || (membership && !noHigher(membership.role, own))) {
      throw new DomainError('role_forbidden', `the ${own} role may not give or change a role higher than its own`);
    }
    const quotas = deps.quotas ?? DEFAULT_QUOTAS;
    if (actor !== 'operator' && !membership) await checkMembersQuota(store, input.accountId, quotas);
    if (!membership) {
      await store.users.addMembership({ accountId: input.accountId, userId, role: input.role, createdAt: now });
      // Listed as an alert recipient before joining in a role that may not see webhook URLs,
      // which the alerts name: taken off the list, as on a demotion.
      if (!may(input.role, 'manage_webhooks')) await dropRecipient(store, input.accountId, input.email, now);
    } else if (membership.role !== input.role) {
      if (membership.role === 'owner' && (await store.users.countOwners(input.accountId)) === 1) {
        throw new DomainError('conflict', 'this is the account’s only owner; make another member owner first');
      }
      await store.users.setRole(input.accountId, userId, input.role);
      await afterRoleChange(
        store,
        { accountId: input.accountId, userId, email: input.email },
        membership.role,
        input.role,
        now,
      );
    }
    // After the role change's revocations, which may free the room its new key needs: a
    // compromised admin can be demoted at the quota.
    if (actor !== 'operator') await checkLiveKeysQuota(store, input.accountId, quotas);
    const apiKey =
      actor === 'operator'
        ? await issueKey(store, userId, now)
        : await issueKey(store, userId, now, input.accountId, actor.userId, actor.keyId);
    return { userId, apiKey, role: input.role };
  });
}

/**
 * An API caller's new member and key (limited to this account, so a budget of the rate limit of
 * its own) count against the account's quotas; the operator's do not. Checked under the
 * account's lock, so concurrent calls cannot pass them together; counted as GET /account/usage
 * counts them, by the one statement both read.
 */
async function checkMembersQuota(store: Store, accountId: string, quotas: Quotas) {
  if ((await store.accounts.usage(accountId)).members >= quotas.membersPerAccount)
    throw new DomainError(
      'limit_reached',
      `an account has at most ${quotas.membersPerAccount} members; remove one first`,
    );
}

async function checkLiveKeysQuota(store: Store, accountId: string, quotas: Quotas) {
  if ((await store.accounts.usage(accountId)).liveKeys >= quotas.liveKeysPerAccount)
    throw new DomainError(
      'limit_reached',
      `an account has at most ${quotas.liveKeysPerAccount} live keys; revoke one first`,
    );
}

/**
 * What a member's new role takes back. Every key made through the API was shown to its maker,
 * who holds what it opens:
 * - promoted, their keys in the account made by another member go (this answer's key replaces
 *   them), or the maker would hold the new role through one;
 * - demoted, the keys they made for members who now outrank them go (all they made, once they
 *   may not manage the account), with every key made with those;
 * - below the roles that see webhook URLs, their address leaves the failure-alert recipients,
 *   which name those URLs.
 */
async function afterRoleChange(
  store: Store,
  member: { accountId: string; userId: string; email: string },
  from: Role,
  to: Role,
  now: Date,
): Promise<void> {
  const { accountId, userId } = member;
  if (!noHigher(to, from)) await store.keys.revoke({ madeFor: userId, accountId }, now);
  else if (!may(to, 'manage_account')) await store.keys.revoke({ madeBy: userId, accountId }, now);
  else await store.keys.revoke({ madeBy: userId, accountId, roles: ROLES.filter((r) => !noHigher(r, to)) }, now);
  if (may(from, 'manage_webhooks') && !may(to, 'manage_webhooks'))
    await dropRecipient(store, accountId, member.email, now);
}
