import { authorize, noHigher } from '../../domain/access.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { membershipOf, type Actor } from '../access.js';
import type { Deps } from '../ports/index.js';

/**
 * Revokes a key at once: the next request with it is refused. An API caller may revoke their
 * own keys, and another member's when they own or administer every account the key opens (on
 * premium or up) and are not outranked there: a key limited to one account, that account; a key
 * of the user's own, each of the user's accounts. So no account can cut off another's member.
 * A key the caller may not see (GET /keys) answers 404, as a missing one does.
 */
export async function revokeKey(deps: Deps, actor: Actor, keyId: string): Promise<{ id: string; revoked: true }> {
  return deps.store.transaction(async (store) => {
    const key = await store.keys.get(keyId);
    if (!key) throw notFound('key');
    // The caller's own key, or (from a key not limited to one account) any key of their own;
    // a limited key reaches only keys limited to its account.
    const own =
      actor !== 'operator' &&
      key.userId === actor.userId &&
      (key.id === actor.keyId || !actor.accountId || key.accountId === actor.accountId);
    if (actor !== 'operator' && !own) {
      const opens = (await store.users.memberships(key.userId)).filter(
        (m) => !key.accountId || m.accountId === key.accountId,
      );
      if (!opens.length) throw notFound('key');
      // Not a member of every account the key opens: the key is not this caller's to see. All
      // are checked before any role, so a 403 never tells such a caller that the key exists.
      const memberships = await Promise.all(opens.map((theirs) => membershipOf(store, actor, theirs.accountId)));
      if (memberships.some((m) => !m)) throw notFound('key');
      for (const [i, theirs] of opens.entries()) {
        const mine = authorize(memberships[i], 'manage_account');
        if (!noHigher(theirs.role, mine.role)) {
          throw new DomainError(
            'role_forbidden',
            `the ${mine.role} role may not revoke the key of a member who outranks it`,
          );
        }
      }
    }
    await store.keys.revoke({ id: key.id }, deps.clock.now());
    return { id: key.id, revoked: true as const };
  });
}
