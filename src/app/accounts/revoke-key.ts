import { may, noHigher } from '../../domain/access.js';
import { DomainError, notFound } from '../../domain/errors.js';
import type { Deps } from '../ports/index.js';
import type { Actor } from './list-keys.js';

/**
 * Revokes a key at once: the next request with it is refused. An API caller may revoke their
 * own keys, and the keys of members of an account they own or administer whose role is no
 * higher than theirs. A key the caller cannot see answers 404, as a missing one does.
 */
export async function revokeKey(deps: Deps, actor: Actor, keyId: string): Promise<{ id: string; revoked: true }> {
  return deps.store.transaction(async (store) => {
    const key = await store.keys.get(keyId);
    if (!key) throw notFound('key');
    if (actor !== 'operator' && key.userId !== actor.userId) {
      const theirs = await store.users.memberships(key.userId);
      const mine = new Map((await store.users.memberships(actor.userId)).map((m) => [m.accountId, m]));
      const shared = theirs.filter((t) => mine.has(t.accountId));
      if (!shared.length) throw notFound('key');
      const allowed = shared.some((t) => {
        const m = mine.get(t.accountId)!;
        return may(m.role, 'manage_account') && noHigher(t.role, m.role);
      });
      if (!allowed) {
        throw new DomainError(
          'role_forbidden',
          'only an owner or admin of the key’s account, not outranked by its member, may revoke it',
        );
      }
    }
    await store.keys.revoke({ id: key.id }, deps.clock.now());
    return { id: key.id, revoked: true as const };
  });
}
