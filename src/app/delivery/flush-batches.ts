import { randomUUID } from 'node:crypto';
import { MAX_RESPONDENT_BYTES } from '../../domain/answer.js';
import type { Batch, ClaimedDelivery, NewDelivery } from '../../domain/delivery.js';
import { leaseMs } from './claim-deliveries.js';
import { newDelivery } from './new-delivery.js';
import type { Deps } from '../ports/index.js';
import { byRespondent, respondentKey } from '../responses/submit-responses.js';

/**
 * The delivery runner of the flushing process, which takes the flush's deliveries without
 * claiming them: they are queued already leased to it, so none waits for a claim after its
 * window ends (docs/performance.md, "The batch flush").
 */
export type Handoff = {
  /** Promises up to `max` attempt slots to this flush; how many (0 when full, not started or stopping). */
  reserve(max: number): number;
  /** Takes the committed leased deliveries into promised slots (they start as slots free), and gives `unused` back. */
  start(deliveries: readonly ClaimedDelivery[], unused: number): Promise<void>;
};

/**
 * Turns batches whose window has passed into deliveries. Claim, insert and delete happen in
 * one transaction, so a crash either flushes a batch entirely or leaves it to flush again.
 *
 * What the batches need is read a statement per kind, not per batch: their polls with slides
 * and webhooks, then their respondents and answers together. Read batch by batch (five round
 * trips each), the flush cannot keep up with the submissions the API takes, and deliveries fall
 * further behind under load (docs/performance.md, "The batch flush").
 */
export async function flushDueBatches(deps: Deps, limit = 500): Promise<number> {
  return (await flushSomeBatches(deps, limit)).deliveries;
}

/**
 * One flush of at most `limit` batches: the deliveries it queued, those of them it handed to
 * `handoff` leased, and the batches it took. Fewer batches than the limit means none was left
 * due (or another flusher holds the rest). With `handoff`, it must not run inside another
 * transaction: the attempts start as soon as its own commits.
 */
export async function flushSomeBatches(
  deps: Deps,
  limit: number,
  handoff?: Handoff,
): Promise<{ deliveries: number; batches: number; leased: number }> {
  // Slots promised by the runner, and what goes into them once the flush has committed. A crash
  // after the commit leaves the deliveries leased: due again when the lease ends, as after a claim.
  let held = 0;
  let leased: ClaimedDelivery[] = [];
  try {
    const flushed = await deps.store.transaction((store) =>
      flushInTransaction(deps, store, limit, handoff && ((n) => (held = handoff.reserve(n)))),
    );
    leased = flushed.leased;
    return { deliveries: flushed.deliveries, batches: flushed.batches, leased: leased.length };
  } finally {
    if (held) await handoff!.start(leased, held - leased.length);
  }
}

async function flushInTransaction(
  deps: Deps,
  store: Deps['store'],
  limit: number,
  reserve: ((max: number) => number) | undefined,
): Promise<{ deliveries: number; batches: number; leased: ClaimedDelivery[] }> {
  const now = deps.clock.now();
  const claimed = await store.batches.claimDue(now, limit);
  if (!claimed.length) return { deliveries: 0, batches: 0, leased: [] };
  // The rest stay locked, unflushed, until this commits, and go to the next flush, which the
  // count of those claimed calls for at once. The claim holds each poll under a key share lock
  // (batches.ts), so the polls read here stay as they are until this commits.
  const due = withinBytes(claimed);
  const polls = new Map(
    (await store.polls.getForSubmission([...new Set(due.map((b) => b.pollId))])).map((p) => [p.poll.id, p]),
  );
  const overlapSince = new Date(now.getTime() - deps.delivery.secretOverlapMs);
  const contents = await store.batches.contentsOf(due, reserve && { secretsOverlapSince: overlapSince });
  const handOver = new Map(contents.handOver.map((w) => [w.id, w.url]));
  const participants = new Map(contents.participants.map((p) => [respondentKey(p.pollId, p.id), p]));
  const responses = new Map(contents.responses.map((r) => [r.id, r]));
  const respondents = byRespondent(contents.responses);
  const deliveries: { delivery: NewDelivery; legacySecret: string | null; handOver: boolean }[] = [];
  for (const b of due) {
    const found = polls.get(b.pollId);
    const webhook = found?.webhooks.find((w) => w.id === b.webhookId);
    const participant = participants.get(respondentKey(b.pollId, b.participantId));
    // In the order they were added to the batch: the last is the latest (its metadata goes out).
    // Ids made in the same millisecond do not sort in that order.
    const answers = b.responseIds.flatMap((id) => responses.get(id) ?? []);
    // The poll or webhook was deleted meanwhile (its batches go with it), or its answers are gone.
    // A batch made with no answers is the completion of a respondent by an empty submission. A
    // webhook changed to "send only if fully completed" meanwhile sends it no partial event.
    if (!found || !webhook || webhook.deliveryRule !== 'partial' || !participant) continue;
    if (b.responseIds.length && !answers.length) continue;
    // The event is the batch's latest submission: an answer, or a completion with no answer. A
    // completion after the batch opened joined it (a completing submission joins the open batch
    // until a flush claims it, under that flush's lock); one before it opened is older.
    const completed = participant.completedAt;
    const latest = completed && completed > b.createdAt ? completed : b.createdAt;
    const at = answers.reduce((t, r) => (r.createdAt > t ? r.createdAt : t), latest);
    // Handed over, it goes to the URL read under the webhook's lock; queued due, a claim sends it
    // to the webhook's URL of the moment (delivery-queue.ts).
    const lockedUrl = handOver.get(webhook.id);
    deliveries.push({
      delivery: newDelivery({
        poll: found.poll,
        slides: found.slides,
        participant,
        responses: answers,
        respondent: respondents.get(respondentKey(b.pollId, b.participantId)) ?? answers,
        type: 'submitted-responses',
        target: { endpointId: webhook.id, webhookId: webhook.id, source: 'webhook', url: lockedUrl ?? webhook.url },
        at,
      }),
      legacySecret: webhook.legacySecret,
      handOver: lockedUrl !== undefined,
    });
  }
  // Those of a paused webhook (or one being changed) are queued due, for a claim to park,
  // cancel or send (claim-deliveries.ts).
  let lease = reserve?.(deliveries.filter((d) => d.handOver).length) ?? 0;
  const leaseToken = randomUUID();
  const leaseUntil = new Date(now.getTime() + leaseMs(deps));
  const secrets = new Map(contents.secrets.map((a) => [a.accountId, a]));
  const leased: ClaimedDelivery[] = [];
  // Delivery ids carry the event time, but they are due now.
  const queued = deliveries.map(({ delivery, legacySecret, handOver }): NewDelivery => {
    if (!handOver || lease === 0) return { ...delivery, nextAttemptAt: now };
    lease--;
    const account = secrets.get(delivery.accountId);
    leased.push({
      id: delivery.id,
      accountId: delivery.accountId,
      endpointId: delivery.endpointId,
      source: delivery.source,
      url: delivery.url,
      attemptCount: 1,
      body: delivery.body,
      leaseToken,
      signingSecret: account?.signingSecret ?? null,
      previousSecret: account?.previousSecret ?? null,
      legacySecret,
      ladderBase: 0,
      paused: false,
      webhookGone: false,
    });
    return { ...delivery, nextAttemptAt: leaseUntil, leaseToken };
  });
  await store.batches.flush(
    due.map((b) => b.id),
    queued,
  );
  return { deliveries: deliveries.length, batches: claimed.length, leased };
}

/**
 * What a flush reads of its respondents' stored answers at most, whatever its batch limit (a
 * payload's addresses are gathered from every answer of the respondent): a flush holds them all
 * at once. One batch is always taken.
 */
export const FLUSH_BYTES = 16 * MAX_RESPONDENT_BYTES;

/** The first batches whose respondents' answers fit FLUSH_BYTES, each respondent counted once. */
function withinBytes<B extends Batch & { respondentBytes: number | null }>(batches: readonly B[]): B[] {
  const counted = new Set<string>();
  let total = 0;
  const out: B[] = [];
  for (const b of batches) {
    const key = respondentKey(b.pollId, b.participantId);
    if (!counted.has(key)) {
      // Not counted yet (answered before migration 019, or by a research run that did not count): as much as a
      // respondent may hold now.
      const bytes = b.respondentBytes ?? MAX_RESPONDENT_BYTES;
      if (out.length && total + bytes > FLUSH_BYTES) break;
      counted.add(key);
      total += bytes;
    }
    out.push(b);
  }
  return out;
}
