import { checkWindow } from '../../domain/time-window.js';
import { DomainError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import { requireWebhook } from './webhook-view.js';

export type RecoverInput = { webhookId?: string; pollId?: string; since: Date; until?: Date };

/**
 * Lists every rejected or given-up delivery of a target created in [since, until) for resending
 * (test events aside: they lost no answer), but those a recover under way has listed already,
 * in one transaction, and answers how many. The resending is done by the scheduler (see
 * runRecoveries), each delivery in the transaction that removes it from the list, so a restart
 * carries on with what is left and no delivery is resent twice by one recover.
 * The target is a saved webhook, or (with pollId) the logic-triggered targets of a poll.
 */
export async function recoverDeliveries(deps: Deps, caller: Caller, input: RecoverInput): Promise<{ resent: number }> {
  if (!input.webhookId === !input.pollId) {
    throw new DomainError('validation_failed', 'give webhookId or pollId, not both', [
      { path: '/webhookId', message: 'exactly one of webhookId and pollId is required' },
    ]);
  }
  checkWindow({ start: input.since, end: input.until }, { start: 'since', end: 'until', endPath: '/until' });
  return deps.store.transaction(async (store) => {
    const accountId = input.webhookId
      ? (await requireWebhook(store, caller, input.webhookId)).accountId
      : (await requirePoll(store, caller, input.pollId!, 'manage_webhooks')).accountId;
    const now = deps.clock.now();
    const resent = await store.recoveries.create(
      { id: newId('rcv', now.getTime()), accountId, userId: caller.userId, createdAt: now },
      input,
    );
    return { resent };
  });
}
