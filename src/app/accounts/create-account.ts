import type { Plan } from '../../domain/access.js';
import { newId } from '../../domain/ids.js';
import type { Deps } from '../ports/index.js';
import { issueKey, userFor } from './issue-key.js';

export async function createAccount(deps: Deps, input: { name: string; ownerEmail: string; plan: Plan }) {
  return deps.store.transaction(async (store) => {
    const now = deps.clock.now();
    const accountId = newId('acc', now.getTime());
    await store.accounts.insert({
      id: accountId,
      name: input.name.trim(),
      plan: input.plan,
      createdAt: now,
      updatedAt: now,
    });
    const userId = await userFor(store, input.ownerEmail, now);
    await store.users.addMembership({ accountId, userId, role: 'owner', createdAt: now });
    return { accountId, userId, apiKey: await issueKey(store, userId, now) };
  });
}
