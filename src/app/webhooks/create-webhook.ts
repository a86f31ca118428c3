import { DomainError } from '../../domain/errors.js';
import { newId, randomBase62 } from '../../domain/ids.js';
import { requirePoll, requirePollForUpdate } from '../access.js';
import { checkTargetUrl } from './check-target.js';
import { ensureSigningSecret } from '../accounts/ensure-signing-secret.js';
import type { DeliveryRule, Endpoint, Webhook } from '../../domain/webhook.js';
import type { Caller, Deps } from '../ports/index.js';
import { type WebhookView, view } from './webhook-view.js';

export const WEBHOOKS_PER_SURVEY = 20;

export async function createWebhook(
  deps: Deps,
  caller: Caller,
  input: { pollId: string; url: string; deliveryRule: DeliveryRule },
): Promise<{ webhook: WebhookView; signingSecret?: string }> {
  // Access first (a stranger learns nothing about the URL rules), then DNS outside the transaction.
  await requirePoll(deps.store, caller, input.pollId, 'manage_webhooks');
  const url = await checkTargetUrl(deps, input.url.trim(), '/url');
  return deps.store.transaction(async (store) => {
    // Locking the poll row serialises concurrent creations on one survey, so the cap holds; read
    // again under the lock, a poll deleted meanwhile is a 404.
    const poll = await requirePollForUpdate(store, caller, input.pollId, 'manage_webhooks');
    if ((await store.webhooks.countByPoll(poll.id)) >= WEBHOOKS_PER_SURVEY) {
      throw new DomainError('limit_reached', `a survey has at most ${WEBHOOKS_PER_SURVEY} webhooks`);
    }
    const now = deps.clock.now();
    const webhook: Webhook = {
      id: newId('whk', now.getTime()),
      accountId: poll.accountId,
      pollId: poll.id,
      url,
      deliveryRule: input.deliveryRule,
      legacySecret: randomBase62(32),
      pausedAt: null,
      createdAt: now,
    };
    await store.webhooks.insert(webhook);
    const endpoint: Endpoint = {
      id: webhook.id,
      accountId: poll.accountId,
      pollId: poll.id,
      webhookId: webhook.id,
      source: 'webhook',
      slideId: null,
      url,
      state: 'healthy',
      lastSuccessAt: null,
      lastGivenUpAt: null,
      lastFailure: null,
      alertEmailsSent: 0,
      lastAlertAt: null,
      quietSince: null,
      createdAt: now,
    };
    await store.endpoints.insert(endpoint);
    const signingSecret = await ensureSigningSecret(store, poll.accountId, now);
    return { webhook: view(webhook, endpoint), ...(signingSecret ? { signingSecret } : {}) };
  });
}
