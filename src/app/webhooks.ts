import { DomainError, notFound } from '../domain/errors.js';
import { newId, randomBase62 } from '../domain/ids.js';
import { requireAccount, requirePoll } from './access.js';
import { checkTargetUrl } from './check-target.js';
import { ensureSigningSecret } from './signing-secret.js';
import type { DeliveryRule, Endpoint, Webhook } from './delivery-ports.js';
import type { Caller, Deps, Page, PageRequest, Store } from './ports.js';

export const WEBHOOKS_PER_SURVEY = 20;

export type WebhookView = Webhook & {
  health: { state: Endpoint['state']; lastSuccessAt: Date | null; lastGivenUpAt: Date | null; alertEmailsSent: number };
};

function view(w: Webhook, e: Endpoint | undefined): WebhookView {
  return {
    ...w,
    health: { state: e?.state ?? 'healthy', lastSuccessAt: e?.lastSuccessAt ?? null, lastGivenUpAt: e?.lastGivenUpAt ?? null, alertEmailsSent: e?.alertEmailsSent ?? 0 },
  };
}

export async function createWebhook(deps: Deps, caller: Caller, input: { pollId: string; url: string; deliveryRule: DeliveryRule }): Promise<{ webhook: WebhookView; signingSecret?: string }> {
  // Access first (a stranger learns nothing about the URL rules), then DNS outside the transaction.
  await requirePoll(deps.store, caller, input.pollId, 'manage_webhooks');
  const url = await checkTargetUrl(deps, input.url.trim(), 'url');
  return deps.store.transaction(async (store) => {
    const poll = await requirePoll(store, caller, input.pollId, 'manage_webhooks');
    // Locking the poll row serialises concurrent creations on one survey, so the cap holds.
    await store.polls.lock(poll.id);
    if ((await store.webhooks.countByPoll(poll.id)) >= WEBHOOKS_PER_SURVEY) {
      throw new DomainError('limit_reached', `a survey has at most ${WEBHOOKS_PER_SURVEY} webhooks`);
    }
    const now = deps.clock.now();
    const webhook: Webhook = { id: newId('whk', now.getTime()), accountId: poll.accountId, pollId: poll.id, url, deliveryRule: input.deliveryRule, legacySecret: randomBase62(32), createdAt: now };
    await store.webhooks.insert(webhook);
    const endpoint: Endpoint = {
      id: webhook.id, accountId: poll.accountId, pollId: poll.id, webhookId: webhook.id, source: 'webhook', slideId: null, url,
      state: 'healthy', lastSuccessAt: null, lastGivenUpAt: null, lastFailure: null, alertEmailsSent: 0, lastAlertAt: null, createdAt: now,
    };
    await store.endpoints.insert(endpoint);
    const signingSecret = await ensureSigningSecret(store, poll.accountId, now);
    return { webhook: view(webhook, endpoint), ...(signingSecret ? { signingSecret } : {}) };
  });
}

async function requireWebhook(store: Store, caller: Caller, id: string): Promise<Webhook> {
  const w = await store.webhooks.get(id);
  if (!w) throw notFound('webhook');
  const m = await store.users.membership(w.accountId, caller.userId);
  if (!m) throw notFound('webhook');
  await requireAccount(store, caller, w.accountId, 'manage_webhooks');
  return w;
}

export async function deleteWebhook(deps: Deps, caller: Caller, id: string): Promise<{ id: string; deleted: true; cancelledDeliveries: number }> {
  return deps.store.transaction(async (store) => {
    const w = await requireWebhook(store, caller, id);
    const cancelledDeliveries = await store.deliveries.cancel({ webhookId: w.id }, deps.clock.now());
    await store.webhooks.delete(w.id);
    // Its health goes too: nothing is configured there any more to alert about.
    await store.endpoints.delete(w.id);
    return { id: w.id, deleted: true as const, cancelledDeliveries };
  });
}

export async function listWebhooks(deps: Deps, caller: Caller, filter: { pollId?: string; accountId?: string }, page: PageRequest): Promise<Page<WebhookView>> {
  let accountId: string;
  if (filter.pollId) accountId = (await requirePoll(deps.store, caller, filter.pollId, 'manage_webhooks')).accountId;
  else if (filter.accountId) accountId = (await requireAccount(deps.store, caller, filter.accountId, 'manage_webhooks')).accountId;
  else throw new DomainError('validation_failed', 'give pollId or accountId', [{ path: 'query:/pollId', message: 'pollId or accountId is required' }]);
  const result = await deps.store.webhooks.list(filter, page);
  const endpoints = await deps.store.endpoints.getMany(accountId, result.data.map((w) => w.id));
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  return { ...result, data: result.data.map((w) => view(w, byId.get(w.id))) };
}
