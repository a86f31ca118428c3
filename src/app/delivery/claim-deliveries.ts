import { randomUUID } from 'node:crypto';
import type { ClaimedDelivery } from '../../domain/delivery.js';
import type { Deps } from '../ports/index.js';

/** How long a claimed delivery stays leased: the attempt's deadline plus room to record it. */
export const leaseMs = (deps: Deps) => deps.delivery.deliveryTimeoutMs * 2 + 5_000;

export async function claimDeliveries(deps: Deps, limit: number): Promise<ClaimedDelivery[]> {
  const now = deps.clock.now();
  return deps.store.deliveries.claim(now, limit, new Date(now.getTime() + leaseMs(deps)), randomUUID());
}
