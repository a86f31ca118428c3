import { beforeAll, describe, expect, it } from 'vitest';
import { submitGroup } from '../../../src/app/responses/submit-responses.js';
import type { DeliveryStatus } from '../../../src/domain/delivery.js';
import { bearer, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { answer, visiblePoll } from '../../support/fixtures.js';
import { untilSettledOrWaiting } from '../../support/races.js';
import { liveDelivery } from '../../support/worker.js';

/**
 * A write that removes a Trigger webhook action (POST /poll/update, POST /slide/update, DELETE
 * /slide) cancels the deliveries it queued that are still waiting for a retry, as deleting a
 * webhook does (README, Webhooks): they are `cancelled` and never attempted again. Those of an
 * action that stays (the same URL kept, or on another slide) go on. The real worker sends them
 * to a receiver that answers 503. PGlite, or PostgreSQL with CANVASS_TEST_PG_URL (which also
 * races the write against a submission that has stored its answers, docs/architecture.md).
 */

const live = liveDelivery();
let h: Harness;
let acct: TestAccount;
let receiver: typeof live.receiver;
beforeAll(() => ({ h, acct, receiver } = live));

type Json = Record<string, unknown>;

async function call(method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Json) {
  const res = await h.app.inject({ method, url, headers: bearer(acct.key), ...(payload ? { payload } : {}) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

const hook = (path: string) => ({ type: 'trigger-webhook', url: receiver.url(path) });
const onAnswer = (path: string) => ({ match: 'all', conditions: [{ op: 'answered' }], action: hook(path) });

/** The poll's deliveries as its log lists them, for one respondent. */
async function deliveriesOf(pollId: string, participantId: string): Promise<{ id: string; url: string }[]> {
  const all = (await call('GET', `/webhooks/deliveries?pollId=${pollId}&limit=100`)) as Json[];
  return all.filter((d) => d.participantId === participantId).map((d) => ({ id: String(d.id), url: String(d.url) }));
}

/** Waits until each delivery has had `attempts` attempts recorded and waits for its next (the 503 was retried). */
async function retrying(ids: string[], attempts: number): Promise<void> {
  for (let i = 0; ; i++) {
    const rows = await Promise.all(ids.map((id) => h.deps.store.deliveries.get(id)));
    if (rows.every((d) => d?.status === 'pending' && d.attemptCount === attempts && d.nextAttemptAt)) return;
    if (i > 400) throw new Error(`not retrying: ${JSON.stringify(rows.map((d) => [d?.status, d?.attemptCount]))}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const status = async (id: string): Promise<DeliveryStatus | undefined> =>
  (await h.deps.store.deliveries.get(id))?.status;

/** Brings the retries of these deliveries, if still queued, forward to now. */
const dueNow = (ids: string[]) =>
  h.database.db
    .updateTable('delivery_queue')
    .set({ next_attempt_at: new Date() })
    .where('delivery_id', 'in', ids)
    .execute();

const sentTimes = (id: string) => receiver.received.filter((r) => r.headers['x-service-delivery-id'] === id).length;

describe('removing a Trigger webhook action cancels its deliveries waiting for a retry', () => {
  it('POST /poll/update: an action removed from survey action logic, then the whole logic replaced', async () => {
    receiver.script('/survey-gone', [{ status: 503 }]);
    receiver.script('/survey-kept', [{ status: 503 }]);
    const poll = await visiblePoll(h, acct);
    const rules = (...paths: string[]) => paths.map((p) => ({ on: 'complete', action: hook(p) }));
    await call('POST', '/poll/update', { pollId: poll.pollId, actionLogic: rules('/survey-gone', '/survey-kept') });
    const p = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'hi' }], complete: true });
    const queued = await deliveriesOf(poll.pollId, p.participantId);
    const gone = queued.find((d) => d.url.endsWith('/survey-gone'))!.id;
    const kept = queued.find((d) => d.url.endsWith('/survey-kept'))!.id;
    await retrying([gone, kept], 1);

    await call('POST', '/poll/update', { pollId: poll.pollId, actionLogic: rules('/survey-kept') });
    const listed = (await call('GET', `/webhooks/deliveries?pollId=${poll.pollId}&limit=100`)) as Json[];
    expect(listed.find((d) => d.id === gone)).toMatchObject({ status: 'cancelled', attemptCount: 1 });
    expect(listed.find((d) => d.id === kept)).toMatchObject({ status: 'pending', attemptCount: 1 });

    // Both retries brought forward: the kept action's goes out, the removed one's never does.
    await dueNow([gone, kept]);
    await retrying([kept], 2);
    expect(sentTimes(kept)).toBe(2);
    expect(sentTimes(gone)).toBe(1);
    expect(await status(gone)).toBe('cancelled');

    await call('POST', '/poll/update', { pollId: poll.pollId, actionLogic: [] });
    expect(await status(kept)).toBe('cancelled');
  });

  it('POST /slide/update with a new URL and DELETE /slide; the same URL on another slide is kept until its slide goes', async () => {
    receiver.script('/question', [{ status: 503 }]);
    const poll = await visiblePoll(h, acct);
    await call('POST', '/slide/update', { slideId: poll.q1, logic: [onAnswer('/question')] });
    await call('POST', '/slide/update', { slideId: poll.q2, logic: [onAnswer('/question')] });
    const p1 = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'hi' }] });
    const p2 = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q2, value: 'a@example.com' }] });
    const [fromQ1] = (await deliveriesOf(poll.pollId, p1.participantId)).map((d) => d.id);
    const [fromQ2] = (await deliveriesOf(poll.pollId, p2.participantId)).map((d) => d.id);
    await retrying([fromQ1!, fromQ2!], 1);

    // q1's action now points elsewhere; q2's, at the same URL, is another target and stays.
    await call('POST', '/slide/update', { slideId: poll.q1, logic: [onAnswer('/question-moved')] });
    expect(await status(fromQ1!)).toBe('cancelled');
    expect(await status(fromQ2!)).toBe('pending');
    await dueNow([fromQ1!, fromQ2!]);
    await retrying([fromQ2!], 2);
    expect(sentTimes(fromQ2!)).toBe(2);
    expect(sentTimes(fromQ1!)).toBe(1);

    await call('DELETE', `/slide?slideId=${poll.q2}`);
    expect(await status(fromQ2!)).toBe('cancelled');
    const left = await h.database.db
      .selectFrom('delivery_queue')
      .select('delivery_id')
      .where('delivery_id', 'in', [fromQ1!, fromQ2!])
      .execute();
    expect(left).toEqual([]);
  });

  it('a write that keeps every action cancels nothing', async () => {
    receiver.script('/unchanged', [{ status: 503 }]);
    const poll = await visiblePoll(h, acct);
    await call('POST', '/slide/update', { slideId: poll.q1, logic: [onAnswer('/unchanged')] });
    const p = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'hi' }] });
    const [id] = (await deliveriesOf(poll.pollId, p.participantId)).map((d) => d.id);
    await retrying([id!], 1);
    // Another rule added beside it, the title changed, the poll's own logic saved empty.
    await call('POST', '/slide/update', {
      slideId: poll.q1,
      title: 'Renamed',
      logic: [
        onAnswer('/unchanged'),
        { match: 'all', conditions: [{ op: 'equals', value: 'x' }], action: { type: 'end-survey' } },
      ],
    });
    await call('POST', '/poll/update', { pollId: poll.pollId, actionLogic: [] });
    expect(await status(id!)).toBe('pending');
  });
});

describe('a finished delivery of a removed action', () => {
  it('is neither resent nor listed by a recover; one of an action that stands is', async () => {
    receiver.script('/rejects-moved', [{ status: 404 }]);
    receiver.script('/rejects-kept', [{ status: 404 }]);
    const poll = await visiblePoll(h, acct);
    const rules = (...paths: string[]) => paths.map((p) => ({ on: 'complete', action: hook(p) }));
    await call('POST', '/poll/update', { pollId: poll.pollId, actionLogic: rules('/rejects-moved', '/rejects-kept') });
    await call('POST', '/slide/update', { slideId: poll.q1, logic: [onAnswer('/rejects-moved')] });
    const p = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'hi' }], complete: true });
    const ds = await deliveriesOf(poll.pollId, p.participantId);
    expect(ds).toHaveLength(3);
    for (let i = 0; (await Promise.all(ds.map((d) => status(d.id)))).some((s) => s !== 'rejected'); i++) {
      if (i > 400) throw new Error('the deliveries were not rejected');
      await new Promise((r) => setTimeout(r, 25));
    }
    // Both actions to /rejects-moved move elsewhere; the survey logic's /rejects-kept stays.
    await call('POST', '/poll/update', { pollId: poll.pollId, actionLogic: rules('/moved', '/rejects-kept') });
    await call('POST', '/slide/update', { slideId: poll.q1, logic: [onAnswer('/moved')] });
    const kept = ds.find((d) => d.url.endsWith('/rejects-kept'))!.id;
    const moved = ds.filter((d) => d.url.endsWith('/rejects-moved')).map((d) => d.id);
    for (const id of moved) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/webhooks/delivery/resend',
        headers: bearer(acct.key),
        payload: { deliveryId: id },
      });
      expect(res.statusCode, res.body).toBe(409);
      expect(await status(id)).toBe('rejected');
    }
    const recovered = await h.app.inject({
      method: 'POST',
      url: '/webhooks/recover',
      headers: bearer(acct.key),
      payload: { pollId: poll.pollId, since: new Date(Date.now() - 3_600_000).toISOString() },
    });
    expect(recovered.statusCode, recovered.body).toBe(202);
    expect(recovered.json().data).toEqual({ resent: 1 });
    // The worker's scheduler resends the one it listed; the moved actions' URL hears nothing more.
    await receiver.waitFor(() => sentTimes(kept) === 2, 20_000);
    for (const id of moved) expect(sentTimes(id)).toBe(1);
  });
});

describe.skipIf(!onPostgres)('removing an action while a submission queues one of its deliveries (PostgreSQL)', () => {
  it('the write waits for a submission that has stored its answers, and cancels what it queued', async () => {
    receiver.script('/race', [{ status: 503 }]);
    const poll = await visiblePoll(h, acct);
    await call('POST', '/poll/update', {
      pollId: poll.pollId,
      actionLogic: [{ on: 'complete', action: hook('/race') }],
    });
    let removal: ReturnType<typeof call> | undefined;
    let participantId = '';
    await h.deps.store.transaction(async (store) => {
      // Nested, so the submission does not send its COMMIT along (store.ts): the race is held open.
      const [res] = await submitGroup({ ...h.deps, store }, [
        { caller: null, input: { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'hi' }], complete: true } },
      ]);
      participantId = res?.ok ? res.value.participantId : '';
      removal = call('POST', '/poll/update', { pollId: poll.pollId, actionLogic: [] });
      await untilSettledOrWaiting(h.database.db, removal, 'for update');
    });
    await removal;
    const [queued] = await deliveriesOf(poll.pollId, participantId);
    expect(await status(queued!.id)).toBe('cancelled');
  });
});
