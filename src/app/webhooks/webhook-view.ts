import { notFound } from '../../domain/errors.js';
import { membershipOf, requireAccount } from '../access.js';
import type { Endpoint, Webhook } from '../../domain/webhook.js';
import type { Caller, Store } from '../ports/index.js';

export type WebhookView = Webhook & {
  paused: boolean;
  health: { state: Endpoint['state']; lastSuccessAt: Date | null; lastGivenUpAt: Date | null; alertEmailsSent: number };
};

export function view(w: Webhook, e: Endpoint | undefined): WebhookView {
  return {
    ...w,
    paused: w.pausedAt !== null,
    health: {
      state: e?.state ?? 'healthy',
      lastSuccessAt: e?.lastSuccessAt ?? null,
      lastGivenUpAt: e?.lastGivenUpAt ?? null,
      alertEmailsSent: e?.alertEmailsSent ?? 0,
    },
  };
}

export async function requireWebhook(store: Store, caller: Caller, id: string): Promise<Webhook> {
  const w = await store.webhooks.get(id);
  if (!w) throw notFound('webhook');
  const m = await membershipOf(store, caller, w.accountId);
  if (!m) throw notFound('webhook');
  await requireAccount(store, caller, w.accountId, 'manage_webhooks');
  return w;
}
