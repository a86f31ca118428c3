import { DomainError } from '../../domain/errors.js';
import { inNamedAccount, requireAccount, requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';

export type Scope = { pollId?: string; accountId?: string };

export async function authorizeScope(deps: Deps, caller: Caller, scope: Scope): Promise<Scope> {
  if (scope.pollId) {
    const poll = await requirePoll(deps.store, caller, scope.pollId, 'read');
    inNamedAccount(scope.accountId, poll.accountId, 'poll');
    return { pollId: scope.pollId };
  }
  if (scope.accountId) {
    await requireAccount(deps.store, caller, scope.accountId, 'read');
    return { accountId: scope.accountId };
  }
  throw new DomainError('validation_failed', 'give pollId or accountId', [
    { path: 'query:/pollId', message: 'pollId or accountId is required' },
  ]);
}
