import { newId } from '../../domain/ids.js';
import { decide, describeOutcome, type Decision } from '../../domain/retry-policy.js';
import { storableText } from '../../domain/sanitize.js';
import type { Attempt } from '../../domain/delivery.js';
import type { AttemptResult, Deps } from '../ports/index.js';
import type { SentAttempt } from './send-attempt.js';

function resultOf(decision: Decision, now: Date): AttemptResult {
  switch (decision.next) {
    case 'delivered':
    case 'rejected':
    case 'given_up':
      return { status: decision.next, nextAttemptAt: null, finishedAt: now, dnsFailure: false };
    case 'retry':
      return {
        status: 'pending',
        nextAttemptAt: new Date(now.getTime() + decision.delayMs),
        finishedAt: null,
        dnsFailure: false,
      };
  }
}

/**
 * What a recorded attempt came to. One not applied decided nothing: its delivery was cancelled
 * while it was out (a deletion), or another worker had taken it over (its lease ran out).
 */
export type AttemptReport = {
  deliveryId: string;
  attempt: number;
  decision: Decision;
  applied: boolean;
  cancelled?: boolean;
};

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
  // A resent delivery's ladder starts at its resend: the attempt's place on the ladder, not its number.
  const decisions = items.map((a) =>
    decide(a.sent.outcome, a.delivery.attemptCount - a.delivery.ladderBase, deps.delivery),
  );
  const rows = items.map((a, i) => ({
    attempt: attemptRow(a),
    leaseToken: a.delivery.leaseToken,
    result: {
      ...resultOf(decisions[i]!, now),
      dnsFailure: a.sent.outcome.kind === 'error' && a.sent.outcome.error === 'dns',
    },
  }));
  const ends = (i: number) => decisions[i]!.next === 'rejected' || decisions[i]!.next === 'given_up';
  // The usual batch (successes and retries) is one statement; a give-up also updates its
  // endpoint's health, in the same transaction.
  const applied = !items.some((_, i) => ends(i))
    ? await deps.store.deliveries.recordResults(rows, now)
    : await deps.store.transaction(async (store) => {
        // The statement locks its successes' endpoints, then the give-ups below theirs, each set in
        // id order but not the two together: two workers' batches may deadlock here, and the one
        // aborted is recorded again (result-batcher.ts). Locking every endpoint first would put
        // endpoints before deliveries, against the order a webhook's deletion takes them.
        const done = await store.deliveries.recordResults(rows, now);
        // A test event that failed lost no respondent's answer: it charges no endpoint (alerts).
        const tests = await store.deliveries.testsAmong(items.filter((_, i) => ends(i)).map((a) => a.delivery.id));
        // By endpoint and the URL attempted: one changed while the attempt was out is not charged
        // with its old URL's failure (an alert would name the new URL for it).
        const failed = new Map<string, { id: string; url: string; failure: string }>();
        items.forEach((a, i) => {
          const { endpointId: id, url } = a.delivery;
          if (done.has(a.delivery.id) && ends(i) && !tests.has(a.delivery.id))
            failed.set(`${id}\u0000${url}`, { id, url, failure: describeOutcome(a.sent.outcome) });
        });
        for (const [, f] of [...failed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
          await store.endpoints.recordGivenUp(f.id, now, f.failure, f.url);
        return done;
      });
  // Rare (a deletion, a lease run out): read afterwards, off the batch's own statement.
  const missed = items.filter((a) => !applied.has(a.delivery.id)).map((a) => a.delivery.id);
  // Only for counting: a failed read counts them as leases lost rather than fail a committed batch.
  const cancelled = missed.length
    ? await deps.store.deliveries.cancelledAmong(missed).catch(() => new Set<string>())
    : new Set<string>();
  return items.map((a, i) => ({
    deliveryId: a.delivery.id,
    attempt: a.delivery.attemptCount,
    decision: decisions[i]!,
    applied: applied.has(a.delivery.id),
    ...(cancelled.has(a.delivery.id) ? { cancelled: true } : {}),
  }));
}
