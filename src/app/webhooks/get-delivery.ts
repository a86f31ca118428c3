import { notFound } from '../../domain/errors.js';
import { requireAccount } from '../access.js';
import type { Attempt } from '../../domain/delivery.js';
import type { Caller, Deps } from '../ports/index.js';
import { summary, type DeliveryView } from './list-deliveries.js';

export type DeliveryDetail = DeliveryView & { payload: unknown; attempts: Omit<Attempt, 'id' | 'deliveryId'>[] };

export async function getDelivery(deps: Deps, caller: Caller, deliveryId: string): Promise<DeliveryDetail> {
  const d = await deps.store.deliveries.get(deliveryId);
  if (!d || !(await deps.store.users.membership(d.accountId, caller.userId))) throw notFound('delivery');
  await requireAccount(deps.store, caller, d.accountId, 'manage_webhooks');
  const attempts = await deps.store.deliveries.attempts(d.id);
  return {
    ...summary(d),
    payload: JSON.parse(d.body) as unknown,
    attempts: attempts.map(({ id: _i, deliveryId: _d, ...a }) => a),
  };
}
