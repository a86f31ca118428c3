import { authorize, may, rolesFor, type Membership, type Need, type Role } from '../domain/access.js';
import { DomainError, notFound } from '../domain/errors.js';
import { hashApiKey } from '../domain/api-key.js';
import { webhookRulesChanged, type Action } from '../domain/logic.js';
import type { UrlPolicy } from '../domain/url-policy.js';
import type { AccountMembership, Caller, Deps, PollRow, Store } from './ports/index.js';

/** The caller a key belongs to; a revoked key is refused from the next request on. */
export async function authenticate(deps: Pick<Deps, 'store' | 'clock'>, apiKey: string | undefined): Promise<Caller> {
  if (!apiKey) throw new DomainError('unauthenticated', 'send an API key as "Authorization: Bearer <key>"');
  const found = await deps.store.keys.findByHash(hashApiKey(apiKey));
  if (!found) throw new DomainError('unauthenticated', 'the API key is unknown or revoked');
  const now = deps.clock.now();
  if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() >= 60_000)
    await deps.store.keys.touch(found.keyId, now);
  return { userId: found.userId, keyId: found.keyId, accountId: found.accountId, withdrawnFrom: found.withdrawnFrom };
}

/** Whether the caller's key opens the account, membership aside: not limited elsewhere, not withdrawn from it. */
export const keyOpens = (caller: Caller, accountId: string): boolean =>
  (!caller.accountId || caller.accountId === accountId) && !caller.withdrawnFrom?.includes(accountId);

/**
 * The caller's membership of an account, as far as their key reaches: a key limited to one
 * account, or withdrawn from this one, finds no membership here (so the account is a plain 404).
 */
export async function membershipOf(store: Store, caller: Caller, accountId: string): Promise<Membership | undefined> {
  if (!keyOpens(caller, accountId)) return undefined;
  return store.users.membership(accountId, caller.userId);
}

/** The accounts the caller's key reaches, with the caller's role in each. */
export async function membershipsOf(store: Store, caller: Caller): Promise<AccountMembership[]> {
  return (await store.users.memberships(caller.userId)).filter((m) => keyOpens(caller, m.accountId));
}

/** Who acts: an API caller (checked against the account), or the operator at the CLI (trusted). */
export type Actor = Caller | 'operator';

/** For the operator, who needs no membership: the account exists. */
export async function requireAccountExists(store: Store, accountId: string): Promise<void> {
  if (!(await store.accounts.get(accountId))) throw notFound('account');
}

/**
 * The actor's role in an account to manage its members and keys, read under the account's lock
 * (requireAccountLocked): the operator's is owner, once the account is found to exist.
 */
export async function lockedRole(store: Store, actor: Actor, accountId: string): Promise<Role> {
  if (actor !== 'operator') return (await requireAccountLocked(store, actor, accountId, 'manage_account')).role;
  await requireAccountExists(store, accountId);
  await store.accounts.lock(accountId);
  return 'owner';
}

export async function requireAccount(store: Store, caller: Caller, accountId: string, need: Need): Promise<Membership> {
  return authorize(await membershipOf(store, caller, accountId), need);
}

/**
 * requireAccount for a change to an account's members, keys or settings: the account is locked
 * (changes of one account queue there) and the caller checked again under the lock, so a request
 * that waited behind the caller's removal or demotion acts on the membership that committed, not
 * on the one it read before waiting (it could otherwise put a removed member back).
 */
export async function requireAccountLocked(
  store: Store,
  caller: Caller,
  accountId: string,
  need: Need,
): Promise<Membership> {
  // Checked first too: a caller who is no member queues behind no one.
  await requireAccount(store, caller, accountId, need);
  await store.accounts.lock(accountId);
  return requireAccount(store, caller, accountId, need);
}

/** Loads a poll and checks the caller's access to its account; another account's poll is a plain 404. */
export async function requirePoll(store: Store, caller: Caller, pollId: string, need: Need): Promise<PollRow> {
  const poll = await store.polls.get(pollId);
  if (!poll) throw notFound('poll');
  const membership = await membershipOf(store, caller, poll.accountId);
  if (!membership) throw notFound('poll');
  authorize(membership, need);
  return poll;
}

/**
 * requirePoll for a read-modify-write: the poll row is locked for the rest of the transaction
 * and read again under the lock, so concurrent changes to one poll (its settings, translations,
 * slide order, the point-of-sale rule) queue instead of overwriting each other.
 */
export async function requirePollForUpdate(
  store: Store,
  caller: Caller,
  pollId: string,
  need: Need = 'write',
): Promise<PollRow> {
  await requirePoll(store, caller, pollId, need);
  await store.polls.lock(pollId);
  const poll = await store.polls.get(pollId);
  if (!poll) throw notFound('poll');
  return poll;
}

type Rules = readonly { action: Action }[];

/** The refusal of webhook management to a role without it; `more` says what the caller can still do. */
function webhookRoleForbidden(role: string, what: string, more = ''): DomainError {
  return new DomainError(
    'role_forbidden',
    `the ${role} role may not ${what} (needs one of: ${rolesFor('manage_webhooks').join(', ')})${more}`,
  );
}

/**
 * Saving, changing or removing a Trigger webhook action is webhook management: it points the
 * account's responses, signed with its secret, at a URL. Only the roles that manage webhooks may;
 * an editor may still change every other rule. Call with the caller's write access checked.
 */
export async function requireWebhookRuleAccess(
  store: Store,
  caller: Caller,
  accountId: string,
  before: Rules,
  after: Rules,
  policy: UrlPolicy,
): Promise<void> {
  if (!webhookRulesChanged(before, after, policy)) return;
  const membership = await requireAccount(store, caller, accountId, 'write');
  if (!may(membership.role, 'manage_webhooks')) {
    throw webhookRoleForbidden(
      membership.role,
      'save, change or remove a Trigger webhook action',
      '; the other logic can be saved without it',
    );
  }
}

/**
 * Deleting a poll deletes its webhooks and its Trigger webhook actions with it: webhook
 * management, so a poll that has any is deleted only by the roles that manage webhooks. Call
 * with the caller's write access to the poll checked.
 */
export async function requireWebhookAccessToDelete(
  store: Store,
  caller: Caller,
  poll: PollRow,
  policy: UrlPolicy,
): Promise<void> {
  const membership = await requireAccount(store, caller, poll.accountId, 'write');
  if (may(membership.role, 'manage_webhooks')) return;
  const slides = await store.slides.listByPoll(poll.id);
  const hasRules = [poll.actionLogic, ...slides.map((s) => s.logic)].some((rules) =>
    webhookRulesChanged(rules, [], policy),
  );
  if (hasRules || (await store.webhooks.countByPoll(poll.id)) > 0)
    throw webhookRoleForbidden(membership.role, 'delete a poll that has webhooks or Trigger webhook actions');
}

/**
 * A read scoped by a poll or webhook that also names an account: the resource is looked for in
 * that account, so one of another account is not found there (rather than the account ignored,
 * or an empty page).
 */
export function inNamedAccount(named: string | undefined, actual: string, what: string): void {
  if (named !== undefined && named !== actual) throw notFound(what);
}
