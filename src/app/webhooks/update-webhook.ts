import type { DeliveryRule } from '../../domain/webhook.js';
import type { Caller, Deps } from '../ports/index.js';
import { checkTargetUrl } from './check-target.js';
import { requireWebhook, view, type WebhookView } from './webhook-view.js';

export type WebhookPatch = { webhookId: string; url?: string; deliveryRule?: DeliveryRule; paused?: boolean };

/**
 * Changes a webhook in place, so its id and its deliveries' ids stay:
 * - a new URL (checked as at creation) applies to every unfinished delivery from its next
 *   attempt, and the endpoint's alert state starts afresh;
 * - a delivery rule applies to events from then on;
 * - pausing parks its queued deliveries (no attempt, no ladder step, no alerts); resuming makes
 *   every one that waited due at once (oldest first, a microsecond apart), and alert quiet time
 *   counts from then.
 */
export async function updateWebhook(deps: Deps, caller: Caller, patch: WebhookPatch): Promise<WebhookView> {
  // Access first (a stranger learns nothing about the URL rules), then DNS outside the transaction.
  await requireWebhook(deps.store, caller, patch.webhookId);
  const url = patch.url === undefined ? undefined : await checkTargetUrl(deps, patch.url.trim(), '/url');
  return deps.store.transaction(async (store) => {
    // Locked, then read again under the lock: concurrent changes (a pause and a resume) queue
    // rather than each deciding from what the other is about to change.
    await requireWebhook(store, caller, patch.webhookId);
    await store.webhooks.lock(patch.webhookId);
    const current = await requireWebhook(store, caller, patch.webhookId);
    const now = deps.clock.now();
    const pausedAt =
      patch.paused === undefined || patch.paused === (current.pausedAt !== null)
        ? current.pausedAt
        : patch.paused
          ? now
          : null;
    const next = {
      ...current,
      url: url ?? current.url,
      deliveryRule: patch.deliveryRule ?? current.deliveryRule,
      pausedAt,
    };
    await store.webhooks.update(current.id, { url: next.url, deliveryRule: next.deliveryRule, pausedAt });
    if (next.url !== current.url) {
      await store.deliveries.retarget(current.id, next.url);
      await store.endpoints.moveTo(current.id, next.url, now);
    }
    if (pausedAt !== current.pausedAt) {
      if (pausedAt) await store.deliveries.parkWebhook(current.id);
      else {
        await store.deliveries.unparkWebhook(current.id, now);
        await store.endpoints.restartQuiet(current.id, now);
      }
    }
    const [endpoint] = await store.endpoints.getMany(current.accountId, [current.id]);
    return view(next, endpoint);
  });
}
