import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { claimDeliveries } from '../../../src/app/delivery/claim-deliveries.js';
import { recordAttempts } from '../../../src/app/delivery/record-attempts.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';

// A test event (POST /webhooks/test) carries no respondent's answer: when its endpoint refuses it,
// no response is lost, so it counts in neither the alert's trigger nor its "responses lost". When
// its endpoint takes it, it is a successful delivery like any other, and any success clears an
// alert: a mended endpoint is shown to work without waiting for a respondent.

let h: Harness;
let acct: TestAccount;
let poll: Awaited<ReturnType<typeof visiblePoll>>;
let hook: string;

// A harness of its own for each test: the endpoint's health is the test's alone.
beforeEach(async () => {
  h = await harness();
  acct = await h.account();
  poll = await visiblePoll(h, acct);
  hook = (await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/not-yet', 'complete')).data.id;
});
afterEach(() => h?.close());

/** One attempt of the delivery, answered `statusCode` by its endpoint, recorded as a worker would. */
async function answerWith(deliveryId: string, statusCode: number) {
  const [claimed] = (await claimDeliveries(h.deps, 1000)).filter((d) => d.id === deliveryId);
  const sent = { outcome: { kind: 'response' as const, statusCode }, durationMs: 5, excerpt: null };
  const [report] = await recordAttempts(h.deps, [{ delivery: claimed!, sentAt: h.clock.now(), sent }]);
  expect(report).toMatchObject({ applied: true });
  return report!;
}

/** A test event of the webhook; its delivery's id. */
async function testEvent(): Promise<string> {
  const test = await h.app.inject({
    method: 'POST',
    url: '/webhooks/test',
    headers: bearer(acct.key),
    payload: { webhookId: hook },
  });
  expect(test.statusCode, test.body).toBe(202);
  return test.json().data.id as string;
}

/** A respondent's delivery to the webhook; its id. */
async function respondentDelivery(): Promise<string> {
  await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }], complete: true });
  const queued = await sql<{ id: string }>`SELECT delivery_id AS id FROM delivery_queue WHERE delivery_id IN
    (SELECT id FROM deliveries WHERE endpoint_id = ${hook} AND participant_id NOT LIKE 'test_%')`.execute(
    h.database.db,
  );
  expect(queued.rows).toHaveLength(1);
  return queued.rows[0]!.id;
}

const health = async () =>
  (
    (await h.app.inject({ url: `/webhooks?pollId=${poll.pollId}`, headers: bearer(acct.key) })).json().data as {
      health: { state: string; lastSuccessAt: string | null; lastGivenUpAt: string | null; alertEmailsSent: number };
    }[]
  )[0]!.health;

it("a refused test event charges no endpoint and is not lost; a respondent's refused delivery is", async () => {
  const lost = async () =>
    (
      await sql<{ n: number }>`SELECT count(*)::int AS n FROM lost_deliveries WHERE endpoint_id = ${hook}`.execute(
        h.database.db,
      )
    ).rows[0]!.n;

  expect(await answerWith(await testEvent(), 404)).toMatchObject({ decision: { next: 'rejected' } });
  expect((await health()).lastGivenUpAt).toBeNull();
  expect(await lost()).toBe(0);

  expect(await answerWith(await respondentDelivery(), 404)).toMatchObject({ decision: { next: 'rejected' } });
  expect((await health()).lastGivenUpAt).not.toBeNull();
  expect(await lost()).toBe(1);
});

it('a test event taken by an alerted endpoint clears its alert, as any successful delivery does', async () => {
  await answerWith(await respondentDelivery(), 404);
  // The alert check emailed about the refused delivery (README, failure alerts).
  await sql`UPDATE endpoints SET state = 'alerted', alert_emails_sent = 1, last_alert_at = now() WHERE id = ${hook}`.execute(
    h.database.db,
  );
  expect(await health()).toMatchObject({ state: 'alerted', lastSuccessAt: null, alertEmailsSent: 1 });
  h.clock.advance(2_000);
  await answerWith(await testEvent(), 200);
  expect(await health()).toMatchObject({
    state: 'healthy',
    lastSuccessAt: h.clock.now().toISOString(),
    alertEmailsSent: 0,
  });
});
