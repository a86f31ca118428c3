import { randomUUID } from 'node:crypto';
import { newId } from '../domain/ids.js';
import { decide, describeOutcome, type Decision } from '../domain/retry-policy.js';
import { newSigningSecret, signatureHeader } from '../domain/signature.js';
import type { AttemptResult, ClaimedDelivery, SendResult } from './delivery-ports.js';
import type { Deps } from './ports.js';

/** How long a claimed delivery stays leased: the attempt's deadline plus room to record it. */
export const leaseMs = (deps: Deps) => deps.delivery.deliveryTimeoutMs * 2 + 5_000;

export async function claimDeliveries(deps: Deps, limit: number): Promise<ClaimedDelivery[]> {
  const now = deps.clock.now();
  return deps.store.deliveries.claim(now, limit, new Date(now.getTime() + leaseMs(deps)), randomUUID());
}

/** Accounts whose webhooks predate signing get their secret at first delivery (SPEC §2.3). */
async function secretFor(deps: Deps, d: ClaimedDelivery): Promise<string> {
  if (d.signingSecret) return d.signingSecret;
  await deps.store.accounts.setSigningSecretIfMissing(d.accountId, newSigningSecret(), deps.clock.now());
  const account = await deps.store.accounts.get(d.accountId);
  return account!.signingSecret!;
}

/** SPEC §6.2: the headers of one attempt, signed afresh with its own t. */
export function attemptHeaders(deps: Deps, d: ClaimedDelivery, secret: string, sentAt: Date): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': deps.delivery.userAgent,
    'x-service-signature': signatureHeader(secret, sentAt.getTime(), d.body),
    'x-service-delivery-id': d.id,
    'x-service-attempt': String(d.attemptCount),
    'x-service-triggered-at': sentAt.toISOString(),
  };
  // Legacy header: saved webhooks only, never logic-triggered deliveries.
  if (d.source === 'webhook' && d.legacySecret) headers['x-service-secret'] = d.legacySecret;
  return headers;
}

function resultOf(decision: Decision, now: Date): AttemptResult {
  switch (decision.next) {
    case 'delivered':
    case 'rejected':
    case 'given_up':
      return { status: decision.next, nextAttemptAt: null, finishedAt: now, dnsFailure: false };
    case 'retry':
      return { status: 'pending', nextAttemptAt: new Date(now.getTime() + decision.delayMs), finishedAt: null, dnsFailure: false };
  }
}

export type AttemptReport = { deliveryId: string; attempt: number; decision: Decision; applied: boolean };

/** Sends one attempt of a claimed delivery and records what came of it. */
export async function attemptDelivery(deps: Deps, d: ClaimedDelivery): Promise<AttemptReport> {
  const sender = deps.sender;
  if (!sender) throw new Error('attemptDelivery needs an HttpSender');
  const secret = await secretFor(deps, d);
  const sentAt = deps.clock.now();
  const sent: SendResult = await sender.send({ url: d.url, body: d.body, headers: attemptHeaders(deps, d, secret, sentAt), timeoutMs: deps.delivery.deliveryTimeoutMs });
  return recordAttempt(deps, d, sentAt, sent);
}

export async function recordAttempt(deps: Deps, d: ClaimedDelivery, sentAt: Date, sent: SendResult): Promise<AttemptReport> {
  const decision = decide(sent.outcome, d.attemptCount, deps.delivery);
  const now = deps.clock.now();
  const applied = await deps.store.transaction(async (store) => {
    await store.deliveries.insertAttempt({
      id: newId('att', sentAt.getTime()),
      deliveryId: d.id,
      number: d.attemptCount,
      sentAt,
      statusCode: sent.outcome.kind === 'response' ? sent.outcome.statusCode : null,
      error: sent.outcome.kind === 'error' ? sent.outcome.error : sent.outcome.statusCode >= 300 && sent.outcome.statusCode < 400 ? 'redirect' : null,
      durationMs: Math.round(sent.durationMs),
      responseExcerpt: sent.excerpt,
    });
    const result = { ...resultOf(decision, now), dnsFailure: sent.outcome.kind === 'error' && sent.outcome.error === 'dns' };
    // A lost lease (we were too slow and another worker took over, or the webhook was
    // deleted) means this result no longer decides anything; the attempt stays in the log.
    const ok = await store.deliveries.finish(d.id, d.leaseToken, result);
    if (!ok) return false;
    if (decision.next === 'delivered') await store.endpoints.recordSuccess(d.endpointId, now);
    if (decision.next === 'rejected' || decision.next === 'given_up') await store.endpoints.recordGivenUp(d.endpointId, now, describeOutcome(sent.outcome));
    return true;
  });
  return { deliveryId: d.id, attempt: d.attemptCount, decision, applied };
}
