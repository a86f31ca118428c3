import { isoTime } from '../../domain/iso-time.js';
import { newSigningSecret, signatureHeader } from '../../domain/signature.js';
import type { ClaimedDelivery } from '../../domain/delivery.js';
import type { SendResult, Deps } from '../ports/index.js';

/** An account whose webhooks predate signing has no secret yet: it gets one at its first delivery. */
async function secretFor(deps: Deps, d: ClaimedDelivery): Promise<string> {
  if (d.signingSecret) return d.signingSecret;
  await deps.store.accounts.setSigningSecretIfMissing(d.accountId, newSigningSecret(), deps.clock.now());
  const account = await deps.store.accounts.get(d.accountId);
  return account!.signingSecret!;
}

/**
 * The headers of one attempt (docs/receiving-webhooks.md lists them), signed afresh with its
 * own t: the signature's t and X-Service-Triggered-At are the same instant.
 */
export function attemptHeaders(deps: Deps, d: ClaimedDelivery, secret: string, sentAt: Date): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': deps.delivery.userAgent,
    'x-service-signature': signatureHeader(secret, sentAt.getTime(), d.body, d.previousSecret),
    'x-service-delivery-id': d.id,
    'x-service-attempt': String(d.attemptCount),
    'x-service-triggered-at': isoTime(sentAt),
  };
  // Legacy header: saved webhooks only, never logic-triggered deliveries.
  if (d.source === 'webhook' && d.legacySecret) headers['x-service-secret'] = d.legacySecret;
  return headers;
}

/** One attempt that has been sent and awaits recording. */
export type SentAttempt = { delivery: ClaimedDelivery; sentAt: Date; sent: SendResult };

/**
 * Sends one attempt of a claimed delivery, signed as it is written (it may first wait for a
 * connection to its origin): its t, X-Service-Triggered-At and recorded sentAt are the write's.
 * One never written keeps the time it was queued.
 */
export async function sendAttempt(deps: Deps, d: ClaimedDelivery): Promise<SentAttempt> {
  const sender = deps.sender;
  if (!sender) throw new Error('sendAttempt needs an HttpSender');
  const secret = d.signingSecret ?? (await secretFor(deps, d));
  let sentAt = deps.clock.now();
  const sent = await sender.send({
    url: d.url,
    body: d.body,
    headers: () => attemptHeaders(deps, d, secret, (sentAt = deps.clock.now())),
    timeoutMs: deps.delivery.deliveryTimeoutMs,
  });
  return { delivery: d, sentAt, sent };
}
