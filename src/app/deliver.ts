import { randomUUID } from 'node:crypto';
import { newId } from '../domain/ids.js';
import { isoTime } from '../domain/iso-time.js';
import { decide, describeOutcome, type Decision } from '../domain/retry-policy.js';
import { storableText } from '../domain/sanitize.js';
import { newSigningSecret, signatureHeader } from '../domain/signature.js';
import type { Attempt, AttemptResult, ClaimedDelivery, SendResult } from './delivery-ports.js';
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
    'x-service-triggered-at': isoTime(sentAt),
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

/** One attempt that has been sent and awaits recording. */
export type SentAttempt = { delivery: ClaimedDelivery; sentAt: Date; sent: SendResult };

/** Sends one attempt of a claimed delivery, signed now with the secret current now. */
export async function sendAttempt(deps: Deps, d: ClaimedDelivery): Promise<SentAttempt> {
  const sender = deps.sender;
  if (!sender) throw new Error('sendAttempt needs an HttpSender');
  const secret = d.signingSecret ?? (await secretFor(deps, d));
  const sentAt = deps.clock.now();
  const sent = await sender.send({ url: d.url, body: d.body, headers: attemptHeaders(deps, d, secret, sentAt), timeoutMs: deps.delivery.deliveryTimeoutMs });
  return { delivery: d, sentAt, sent };
}

function attemptRow(a: SentAttempt): Attempt {
  const o = a.sent.outcome;
  return {
    id: newId('att', a.sentAt.getTime()),
    deliveryId: a.delivery.id,
    number: a.delivery.attemptCount,
    sentAt: a.sentAt,
    statusCode: o.kind === 'response' ? o.statusCode : null,
    error: o.kind === 'error' ? o.error : o.statusCode >= 300 && o.statusCode < 400 ? 'redirect' : null,
    durationMs: Math.round(a.sent.durationMs),
    // The answer body is the endpoint's, whatever it holds: the log keeps what it can store.
    responseExcerpt: a.sent.excerpt === null ? null : storableText(a.sent.excerpt),
  };
}

/**
 * Records many sent attempts in one transaction: the attempt rows, each delivery's next state,
 * and the health of the endpoints involved. Until this commits a delivery stays leased, so a
 * crash before it only means the attempt is sent again (at-least-once), never lost.
 * A result whose lease was lost (another worker took over, or the webhook was deleted)
 * decides nothing; its attempt still goes into the log.
 */
export async function recordAttempts(deps: Deps, items: readonly SentAttempt[]): Promise<AttemptReport[]> {
  if (!items.length) return [];
  const now = deps.clock.now();
  const decisions = items.map((a) => decide(a.sent.outcome, a.delivery.attemptCount, deps.delivery));
  const rows = items.map((a, i) => ({
    attempt: attemptRow(a),
    leaseToken: a.delivery.leaseToken,
    result: { ...resultOf(decisions[i]!, now), dnsFailure: a.sent.outcome.kind === 'error' && a.sent.outcome.error === 'dns' },
  }));
  const ends = (i: number) => decisions[i]!.next === 'rejected' || decisions[i]!.next === 'given_up';
  // The usual batch (successes and retries) is one statement; a give-up also updates its
  // endpoint's health, in the same transaction.
  const applied = !items.some((_, i) => ends(i))
    ? await deps.store.deliveries.recordResults(rows, now)
    : await deps.store.transaction(async (store) => {
        const done = await store.deliveries.recordResults(rows, now);
        const failed = new Map<string, string>();
        items.forEach((a, i) => {
          if (done.has(a.delivery.id) && ends(i)) failed.set(a.delivery.endpointId, describeOutcome(a.sent.outcome));
        });
        for (const [id, failure] of [...failed].sort()) await store.endpoints.recordGivenUp(id, now, failure);
        return done;
      });
  return items.map((a, i) => ({ deliveryId: a.delivery.id, attempt: a.delivery.attemptCount, decision: decisions[i]!, applied: applied.has(a.delivery.id) }));
}
