import type { Plan, Role } from '../domain/access.js';
import { hashApiKey, newApiKey } from '../domain/api-key.js';
import { notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { newSigningSecret } from '../domain/signature.js';
import type { Deps, Store } from './ports.js';

/** Operator commands (CLI): no caller, the operator is trusted. */

async function issueKey(store: Store, userId: string, now: Date): Promise<string> {
  const apiKey = newApiKey();
  await store.keys.insert({ id: newId('key', now.getTime()), userId, keyHash: hashApiKey(apiKey), createdAt: now });
  return apiKey;
}

async function userFor(store: Store, email: string, now: Date): Promise<string> {
  const normalised = email.trim().toLowerCase();
  const existing = await store.users.findByEmail(normalised);
  if (existing) return existing.id;
  const id = newId('usr', now.getTime());
  await store.users.insert({ id, email: normalised, createdAt: now });
  return id;
}

export async function createAccount(deps: Deps, input: { name: string; ownerEmail: string; plan: Plan }) {
  return deps.store.transaction(async (store) => {
    const now = deps.clock.now();
    const accountId = newId('acc', now.getTime());
    await store.accounts.insert({ id: accountId, name: input.name.trim(), plan: input.plan, createdAt: now, updatedAt: now });
    const userId = await userFor(store, input.ownerEmail, now);
    await store.users.addMembership({ accountId, userId, role: 'owner', createdAt: now });
    return { accountId, userId, apiKey: await issueKey(store, userId, now) };
  });
}

export async function setPlan(deps: Deps, accountId: string, plan: Plan) {
  if (!(await deps.store.accounts.setPlan(accountId, plan, deps.clock.now()))) throw notFound('account');
  return { accountId, plan };
}

/** Adds the member if new (or changes their role) and issues them a new key. */
export async function createKey(deps: Deps, input: { accountId: string; email: string; role: Role }) {
  return deps.store.transaction(async (store) => {
    const now = deps.clock.now();
    if (!(await store.accounts.get(input.accountId))) throw notFound('account');
    const userId = await userFor(store, input.email, now);
    const membership = await store.users.membership(input.accountId, userId);
    if (!membership) await store.users.addMembership({ accountId: input.accountId, userId, role: input.role, createdAt: now });
    else if (membership.role !== input.role) await store.users.setRole(input.accountId, userId, input.role);
    return { userId, apiKey: await issueKey(store, userId, now), role: input.role };
  });
}

/** First start of an empty embedded database: a Default premium account to try things with. */
export async function seedDefaultAccount(deps: Deps) {
  if ((await deps.store.accounts.count()) > 0) return undefined;
  return createAccount(deps, { name: 'Default', ownerEmail: 'owner@localhost', plan: 'premium' });
}


/** Support-only rotation (SPEC §6.3 rule 7); queued retries pick the new secret up at once. */
export async function rotateSigningSecret(deps: Deps, accountId: string) {
  if (!(await deps.store.accounts.get(accountId))) throw notFound('account');
  const signingSecret = newSigningSecret();
  await deps.store.accounts.setSigningSecret(accountId, signingSecret, deps.clock.now());
  return { accountId, signingSecret };
}
