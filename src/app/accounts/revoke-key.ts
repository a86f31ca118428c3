import { authorize, noHigher } from '../../domain/access.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { keyOpens, membershipOf, type Actor } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';

export type KeyRevocation = { id: string; revoked: boolean; withdrawnFrom: string[] };

type Key = { id: string; userId: string; accountId: string | null };

/**
 * The caller's own key, or (from a key not limited to one account) any key of their own that
 * their key may reach: a limited key reaches only keys limited to its account, and a key
 * withdrawn from an account no key limited to it.
 */
const ownKey = (caller: Caller, key: Key): boolean =>
  key.userId === caller.userId &&
  (key.id === caller.keyId ||
    (!caller.accountId && (!key.accountId || keyOpens(caller, key.accountId))) ||
    key.accountId === caller.accountId);

/**
 * Revokes a key at once: the next request with it is refused. An API caller may revoke their
 * own keys. Another member's key they revoke when they own or administer (on premium or up)
 * every account it opens and are not outranked there: a key limited to one account, that
 * account; a key of the user's own, each of the user's accounts. Otherwise it is withdrawn from
 * those of the caller's accounts where they may do so, and keeps opening the others: every
 * account can cut a key off from itself, and none can cut another account's member off from
 * that account, nor stop it doing so (docs/operations.md, "API keys across accounts").
 * A key that opens none of the caller's accounts answers 404, as a missing one does.
 */
export async function revokeKey(deps: Deps, actor: Actor, keyId: string): Promise<KeyRevocation> {
  return deps.store.transaction(async (store) => {
    const key = await store.keys.get(keyId);
    if (!key) throw notFound('key');
    const now = deps.clock.now();
    const revoked = async (): Promise<KeyRevocation> => {
      await store.keys.revoke({ id: key.id }, now);
      return { id: key.id, revoked: true, withdrawnFrom: [] };
    };
    if (actor === 'operator' || ownKey(actor, key)) return revoked();
    // The accounts the key is for (withdrawn from or not, so that asking again answers alike).
    const reaches = (await store.users.memberships(key.userId)).filter(
      (m) => !key.accountId || m.accountId === key.accountId,
    );
    const memberships = await Promise.all(reaches.map((theirs) => membershipOf(store, actor, theirs.accountId)));
    const shared = reaches.flatMap((theirs, i) => (memberships[i] ? [{ theirs, mine: memberships[i] }] : []));
    if (!shared.length) throw notFound('key');
    // Where the caller may act: managing the account, not outranked by the key's member there.
    let refusal: DomainError | undefined;
    const actable = shared.filter(({ theirs, mine }) => {
      try {
        const role = authorize(mine, 'manage_account').role;
        if (noHigher(theirs.role, role)) return true;
        refusal ??= new DomainError(
          'role_forbidden',
          `the ${role} role may not revoke the key of a member who outranks it`,
        );
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        refusal ??= err;
      }
      return false;
    });
    if (!actable.length) throw refusal!;
    if (key.revokedAt) return { id: key.id, revoked: true, withdrawnFrom: [] };
    const acting = new Set(actable.map(({ theirs }) => theirs.accountId));
    if (reaches.every((m) => acting.has(m.accountId) || key.withdrawnFrom.includes(m.accountId))) return revoked();
    const withdrawnFrom = [...acting];
    await store.keys.withdraw(key.id, withdrawnFrom, now);
    return { id: key.id, revoked: false, withdrawnFrom };
  });
}
