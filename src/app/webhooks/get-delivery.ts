import { notFound } from '../../domain/errors.js';
import { membershipOf, requireAccount } from '../access.js';
import type { Attempt, DeliveryEvent } from '../../domain/delivery.js';
import type { Caller, Deps } from '../ports/index.js';
import { summary, type DeliveryView } from './list-deliveries.js';

export type DeliveryDetail = DeliveryView & {
  payload: unknown;
  attempts: Omit<Attempt, 'id' | 'deliveryId'>[];
  /** What people did to it: a resend or recover (with the attempt that followed, and who), or a test event. */
  events: { kind: DeliveryEvent['kind']; attemptNumber: number; by: string | null; at: Date }[];
  test: boolean;
};

export async function getDelivery(deps: Deps, caller: Caller, deliveryId: string): Promise<DeliveryDetail> {
  const d = await deps.store.deliveries.get(deliveryId);
  if (!d || !(await membershipOf(deps.store, caller, d.accountId))) throw notFound('delivery');
  await requireAccount(deps.store, caller, d.accountId, 'manage_webhooks');
  const attempts = await deps.store.deliveries.attempts(d.id);
  const events = await deps.store.deliveries.events(d.id);
  return {
    ...summary(d),
    payload: JSON.parse(d.body) as unknown,
    attempts: attempts.map(({ id: _i, deliveryId: _d, ...a }) => a),
    events: events.map((e) => ({ kind: e.kind, attemptNumber: e.attemptNumber, by: e.userEmail, at: e.createdAt })),
    test: events.some((e) => e.kind === 'test'),
  };
}
