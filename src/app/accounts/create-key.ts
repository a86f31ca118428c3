import type { Role } from '../../domain/access.js';
import { notFound } from '../../domain/errors.js';
import type { Deps } from '../ports/index.js';
import { issueKey, userFor } from './issue-key.js';

/** Adds the member if new (or changes their role) and issues them a new key. */
export async function createKey(deps: Deps, input: { accountId: string; email: string; role: Role }) {
  return deps.store.transaction(async (store) => {
    const now = deps.clock.now();
    if (!(await store.accounts.get(input.accountId))) throw notFound('account');
    const userId = await userFor(store, input.email, now);
    const membership = await store.users.membership(input.accountId, userId);
    if (!membership)
      await store.users.addMembership({ accountId: input.accountId, userId, role: input.role, createdAt: now });
    else if (membership.role !== input.role) await store.users.setRole(input.accountId, userId, input.role);
    return { userId, apiKey: await issueKey(store, userId, now), role: input.role };
  });
}
