import { DomainError, notFound } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { membershipOf, requireAccount } from '../access.js';
import type { Caller, Deps, Store } from '../ports/index.js';
import { summary, type DeliveryView } from './list-deliveries.js';

/**
 * Queues a finished delivery again, as a recover does each of its deliveries: the same id and
 * body bytes, the next attempt number, signed afresh, a fresh retry ladder; the log keeps who
 * asked. Returns the attempt number that follows, or undefined when it is not finished.
 */
export async function reopenDelivery(
  store: Store,
  d: { id: string; accountId: string },
  by: { kind: 'resend' | 'recover'; userId: string | null },
  now: Date,
): Promise<number | undefined> {
  // A recover resends what it listed as failed: one resent and delivered since is left alone.
  const next = await store.deliveries.reopen(d.id, now, by.kind === 'recover');
  if (next === undefined) return undefined;
  await store.deliveries.addEvents([
    {
      id: newId('dev', now.getTime()),
      deliveryId: d.id,
      accountId: d.accountId,
      kind: by.kind,
      userId: by.userId,
      attemptNumber: next,
      createdAt: now,
    },
  ]);
  return next;
}

/** Why a finished delivery could not be queued again, as its row reads now. */
function notReopened(d: { status: string; webhookId: string | null }): string {
  if (d.status === 'cancelled') return 'the delivery was cancelled (its webhook or poll is gone); it cannot be resent';
  if (d.status === 'pending' || d.status === 'in_flight')
    return `the delivery is ${d.status}; only a finished one can be resent`;
  return d.webhookId === null
    ? 'the delivery’s poll or Trigger webhook action is gone (removed, or moved to another URL); it cannot be resent'
    : 'the delivery’s webhook or poll is gone; it cannot be resent';
}

/** A delivered, rejected or given-up delivery, again. One still on its way, or cancelled, is a conflict. */
export async function resendDelivery(deps: Deps, caller: Caller, deliveryId: string): Promise<DeliveryView> {
  return deps.store.transaction(async (store) => {
    const d = await store.deliveries.get(deliveryId);
    if (!d || !(await membershipOf(store, caller, d.accountId))) throw notFound('delivery');
    await requireAccount(store, caller, d.accountId, 'manage_webhooks');
    if (d.status === 'cancelled') throw new DomainError('conflict', notReopened(d));
    const now = deps.clock.now();
    if ((await reopenDelivery(store, d, { kind: 'resend', userId: caller.userId }, now)) === undefined) {
      // The reopen waited for a change of the row under way (another resend, the retention
      // purge): the answer is told from the row as it is now, not as first read.
      const found = await store.deliveries.get(deliveryId);
      if (!found) throw notFound('delivery');
      throw new DomainError('conflict', notReopened(found));
    }
    // A paused webhook's delivery waits for the resume, as one the worker claims would.
    await store.deliveries.parkIfPaused([deliveryId]);
    const again = await store.deliveries.get(deliveryId);
    // Marked as the log marks it: a resent test event is still a test.
    const test = (await store.deliveries.events(deliveryId)).some((e) => e.kind === 'test');
    return { ...summary(again!), test };
  });
}
