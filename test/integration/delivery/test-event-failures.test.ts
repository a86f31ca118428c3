import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { claimDeliveries } from '../../../src/app/delivery/claim-deliveries.js';
import { recordAttempts } from '../../../src/app/delivery/record-attempts.js';
import { bearer, harness } from '../../support/app.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';

// A test event (POST /webhooks/test) carries no respondent's answer: when its endpoint refuses it,
// no response is lost, so it counts in neither the alert's trigger nor its "responses lost". When
// its endpoint takes it, it is a successful delivery like any other, and any success clears an
// alert: a mended endpoint is shown to work without waiting for a respondent.
it("a refused test event charges no endpoint and is not lost; a respondent's refused delivery is", async () => {
  const h = await harness();
  try {
    const acct = await h.account();
    const poll = await visiblePoll(h, acct);
    const hook = (await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/not-yet', 'complete')).data.id;
    const refuse = async (deliveryId: string) => {
      const [claimed] = (await claimDeliveries(h.deps, 1000)).filter((d) => d.id === deliveryId);
      const sent = { outcome: { kind: 'response' as const, statusCode: 404 }, durationMs: 5, excerpt: null };
      const [report] = await recordAttempts(h.deps, [{ delivery: claimed!, sentAt: h.clock.now(), sent }]);
      expect(report).toMatchObject({ decision: { next: 'rejected' }, applied: true });
    };
    const lastGivenUp = async () =>
      (
        (await h.app.inject({ url: `/webhooks?pollId=${poll.pollId}`, headers: bearer(acct.key) })).json().data as {
          health: { lastGivenUpAt: string | null };
        }[]
      )[0]!.health.lastGivenUpAt;
    const lost = async () =>
      (
        await sql<{ n: number }>`SELECT count(*)::int AS n FROM lost_deliveries WHERE endpoint_id = ${hook}`.execute(
          h.database.db,
        )
      ).rows[0]!.n;

    const test = await h.app.inject({
      method: 'POST',
      url: '/webhooks/test',
      headers: bearer(acct.key),
      payload: { webhookId: hook },
    });
    expect(test.statusCode, test.body).toBe(202);
    await refuse(test.json().data.id as string);
    expect(await lastGivenUp()).toBeNull();
    expect(await lost()).toBe(0);

    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }], complete: true });
    const [real] = (await h.deps.store.deliveries.list({ accountIds: [acct.accountId] }, { limit: 10 })).data.filter(
      (d) => d.id !== test.json().data.id,
    );
    await refuse(real!.id);
    expect(await lastGivenUp()).not.toBeNull();
    expect(await lost()).toBe(1);
  } finally {
    await h.close();
  }
});

it('a test event taken by an alerted endpoint clears its alert, as any successful delivery does', async () => {
  const h = await harness();
  try {
    const acct = await h.account();
    const poll = await visiblePoll(h, acct);
    const hook = (await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/not-yet', 'complete')).data.id;
    const answerWith = async (deliveryId: string, statusCode: number) => {
      const [claimed] = (await claimDeliveries(h.deps, 1000)).filter((d) => d.id === deliveryId);
      const sent = { outcome: { kind: 'response' as const, statusCode }, durationMs: 5, excerpt: null };
      const [report] = await recordAttempts(h.deps, [{ delivery: claimed!, sentAt: h.clock.now(), sent }]);
      expect(report).toMatchObject({ applied: true });
    };
    const health = async () =>
      (
        (await h.app.inject({ url: `/webhooks?pollId=${poll.pollId}`, headers: bearer(acct.key) })).json().data as {
          health: { state: string; lastSuccessAt: string | null; alertEmailsSent: number };
        }[]
      )[0]!.health;

    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }], complete: true });
    const [real] = (await h.deps.store.deliveries.list({ accountIds: [acct.accountId] }, { limit: 10 })).data;
    await answerWith(real!.id, 404);
    // The alert check emailed about the refused delivery (as alerts.test.ts shows it doing).
    await sql`UPDATE endpoints SET state = 'alerted', alert_emails_sent = 1, last_alert_at = now() WHERE id = ${hook}`.execute(
      h.database.db,
    );
    expect(await health()).toMatchObject({ state: 'alerted', lastSuccessAt: null, alertEmailsSent: 1 });
    h.clock.advance(2_000);
    const test = await h.app.inject({
      method: 'POST',
      url: '/webhooks/test',
      headers: bearer(acct.key),
      payload: { webhookId: hook },
    });
    expect(test.statusCode, test.body).toBe(202);
    await answerWith(test.json().data.id as string, 200);
    expect(await health()).toMatchObject({
      state: 'healthy',
      lastSuccessAt: h.clock.now().toISOString(),
      alertEmailsSent: 0,
    });
  } finally {
    await h.close();
  }
});
