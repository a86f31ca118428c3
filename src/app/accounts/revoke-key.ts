import { authorize, noHigher } from '../../domain/access.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { membershipOf, type Actor } from '../access.js';
import type { Deps } from '../ports/index.js';

export type KeyRevocation = { id: string; revoked: boolean; withdrawnFrom: string[] };

/**
 * Revokes a key at once: the next request with it is refused. An API caller may revoke their
 * own keys. Another member's key they revoke when they own or administer (on premium or up)
 * every account it opens and are not outranked there: a key limited to one account, that
 * account; a key of the user's own, each of the user's accounts. Where such a key also opens
 * accounts the caller is not in, it is withdrawn from the caller's accounts instead and keeps
 * opening the others: every account can cut a key off from itself, and none can cut another
 * account's member off from that account (docs/operations.md, "API keys across accounts").
 * A key that opens none of the caller's accounts answers 404, as a missing one does.
 */
export async function revokeKey(deps: Deps, actor: Actor, keyId: string): Promise<KeyRevocation> {
  return deps.store.transaction(async (store) => {
    const key = await store.keys.get(keyId);
    if (!key) throw notFound('key');
    const now = deps.clock.now();
    // The caller's own key, or (from a key not limited to one account) any key of their own;
    // a limited key reaches only keys limited to its account.
    const own =
      actor !== 'operator' &&
      key.userId === actor.userId &&
      (key.id === actor.keyId || !actor.accountId || key.accountId === actor.accountId);
    if (actor === 'operator' || own) {
      await store.keys.revoke({ id: key.id }, now);
      return { id: key.id, revoked: true, withdrawnFrom: [] };
    }
    // The accounts the key is for (withdrawn from or not, so that revoking again answers alike).
    const reaches = (await store.users.memberships(key.userId)).filter(
      (m) => !key.accountId || m.accountId === key.accountId,
    );
    const memberships = await Promise.all(reaches.map((theirs) => membershipOf(store, actor, theirs.accountId)));
    const shared = reaches.flatMap((theirs, i) => (memberships[i] ? [{ theirs, mine: memberships[i] }] : []));
    if (!shared.length) throw notFound('key');
    for (const { theirs, mine } of shared) {
      const role = authorize(mine, 'manage_account').role;
      if (!noHigher(theirs.role, role)) {
        throw new DomainError('role_forbidden', `the ${role} role may not revoke the key of a member who outranks it`);
      }
    }
    const elsewhere = reaches.filter((m, i) => !memberships[i] && !key.withdrawnFrom.includes(m.accountId));
    if (!elsewhere.length) {
      await store.keys.revoke({ id: key.id }, now);
      return { id: key.id, revoked: true, withdrawnFrom: [] };
    }
    const withdrawnFrom = shared.map(({ theirs }) => theirs.accountId);
    await store.keys.withdraw(key.id, withdrawnFrom, now);
    return { id: key.id, revoked: false, withdrawnFrom };
  });
}
