import { noHigher } from '../../domain/access.js';
import { addressForms, comparableAddress } from '../../domain/email-address.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { lockedRole, type Actor } from '../access.js';
import { dropRecipient } from './drop-recipient.js';
import type { Deps } from '../ports/index.js';

/**
 * Removes a member from an account. Their access to it ends at once (every request checks the
 * membership); their keys made for it, and the keys they made for its other members, are revoked;
 * a user left in no account has every key revoked, and their address leaves the account's alert
 * recipients. The last owner stays: an account is never without one.
 */
export async function removeMember(
  deps: Deps,
  actor: Actor,
  input: { accountId: string; email: string },
): Promise<{ accountId: string; email: string; removed: true; revokedKeys: number }> {
  return deps.store.transaction(async (store) => {
    // Removals and role changes of one account queue on its lock, so "the last owner stays" holds.
    const own = await lockedRole(store, actor, input.accountId);
    // Either form of an internationalised domain names the member.
    const email = input.email.trim();
    const user = await store.users.findByEmail(addressForms(email), comparableAddress(email));
    const membership = user && (await store.users.membership(input.accountId, user.id));
    if (!user || !membership) throw notFound('member');
    if (!noHigher(membership.role, own)) {
      throw new DomainError('role_forbidden', `the ${own} role may not remove a member who outranks it`);
    }
    if (membership.role === 'owner' && (await store.users.countOwners(input.accountId)) <= 1) {
      throw new DomainError('conflict', 'this is the account’s last owner; make another member owner first');
    }
    await store.users.removeMembership(input.accountId, user.id);
    const now = deps.clock.now();
    // Their keys made for this account go; keys of their own go too once no account is left. So
    // do the keys they made for other members of it, which were shown to them.
    const revokedKeys =
      ((await store.users.memberships(user.id)).length
        ? await store.keys.revoke({ userId: user.id, accountId: input.accountId }, now)
        : await store.keys.revoke({ userId: user.id }, now)) +
      (await store.keys.revoke({ madeBy: user.id, accountId: input.accountId }, now));
    // Nor do they go on getting the account's failure alerts, which name its endpoints' URLs.
    await dropRecipient(store, input.accountId, user.email, now);
    return { accountId: input.accountId, email: user.email, removed: true as const, revokedKeys };
  });
}
