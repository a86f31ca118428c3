import { beforeAll, describe, expect, it } from 'vitest';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import {
  acme,
  call,
  expectProblem,
  h,
  HOOK,
  keys,
  rival,
  useWebhooksApi,
  type Json,
} from '../../support/webhooks-api.js';

/**
 * Route tests for the delivery log (src/app/webhooks/{list-deliveries,get-delivery}.ts):
 * GET /webhooks/deliveries by webhook or poll, newest first, filtered and paged, and
 * GET /webhooks/delivery with the payload and attempts. The batch window is 0, so a submission
 * makes its delivery at once.
 */

useWebhooksApi();

describe('the delivery log', () => {
  let poll: Awaited<ReturnType<typeof visiblePoll>>;
  let hook: { id: string };
  let completeHook: { id: string };
  let participantId: string;

  beforeAll(async () => {
    poll = await visiblePoll(h, acme);
    hook = (await createWebhook(h, acme, poll.pollId, HOOK)).data;
    completeHook = (await createWebhook(h, acme, poll.pollId, `${HOOK}/complete`, 'complete')).data;
    h.clock.advance(60_000);
    const p = await answer(h, {
      pollId: poll.pollId,
      participantId: 'customer-42',
      answers: [{ slideId: poll.q1, value: 'A friend' }],
      metadata: { page: '/checkout' },
    });
    participantId = p.participantId;
  });

  it('a submission (batch window 0) makes one pending delivery per partial webhook, with the Delivery fields', async () => {
    const res = await call('GET', `/webhooks/deliveries?webhookId=${hook.id}`, acme.key);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ hasNextPage: false });
    expect(body.data).toHaveLength(1);
    const d = body.data[0];
    expect(d).toMatchObject({
      id: expect.stringMatching(/^dlv_[0-9A-Za-z]{22}$/),
      webhookId: hook.id,
      source: 'webhook',
      url: HOOK,
      pollId: poll.pollId,
      participantId: 'customer-42',
      type: 'submitted-responses',
      status: 'pending',
      attemptCount: 0,
      nextAttemptAt: h.clock.now().toISOString(),
      createdAt: h.clock.now().toISOString(),
      finishedAt: null,
    });
    // The list is a summary: no payload, no internals.
    expect(d).not.toHaveProperty('payload');
    expect(d).not.toHaveProperty('body');
    expect(d).not.toHaveProperty('endpointId');
    expect(d).not.toHaveProperty('leaseToken');
    // Nothing yet for the complete-only webhook.
    expect((await call('GET', `/webhooks/deliveries?webhookId=${completeHook.id}`, acme.key)).json().data).toEqual([]);
  });

  it('GET /webhooks/delivery?deliveryId answers the delivery with its payload and attempts []', async () => {
    const [d] = (await call('GET', `/webhooks/deliveries?webhookId=${hook.id}`, acme.key)).json().data;
    const res = await call('GET', `/webhooks/delivery?deliveryId=${d.id}`, acme.key);
    expect(res.statusCode, res.body).toBe(200);
    const detail = res.json().data;
    expect(detail).toMatchObject({ ...d, attempts: [] });
    expect(detail.payload).toEqual({
      type: 'submitted-responses',
      accountId: acme.accountId,
      pollId: poll.pollId,
      participantId: 'customer-42',
      metadata: { page: '/checkout' },
      responses: {
        [poll.q1]: {
          slideId: poll.q1,
          title: 'What brought you here?',
          type: 'short-answer',
          value: 'A friend',
          createdAt: h.clock.now().toISOString(),
        },
      },
      submissionsComplete: false,
      timestamp: h.clock.now().getTime(),
      email: null,
      emails: [],
    });
  });

  it('completion makes a completed-survey delivery with all the answers; status and pollId filters work', async () => {
    h.clock.advance(1_000);
    await answer(h, { pollId: poll.pollId, participantId, answers: [{ slideId: poll.q2, value: 'Ann@Example.com' }] });
    const done = (await call('GET', `/webhooks/deliveries?webhookId=${completeHook.id}`, acme.key)).json().data;
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({
      type: 'completed-survey',
      webhookId: completeHook.id,
      url: `${HOOK}/complete`,
      status: 'pending',
    });
    const payload = (await call('GET', `/webhooks/delivery?deliveryId=${done[0].id}`, acme.key)).json().data.payload;
    expect(Object.keys(payload.responses).sort()).toEqual([poll.q1, poll.q2].sort());
    expect(payload).toMatchObject({ submissionsComplete: true, email: 'ann@example.com', emails: ['ann@example.com'] });

    const byPoll = (await call('GET', `/webhooks/deliveries?pollId=${poll.pollId}`, acme.key)).json().data;
    expect(byPoll).toHaveLength(3);
    // Newest first.
    const ids = byPoll.map((x: Json) => x.id as string);
    expect(ids).toEqual([...ids].sort().reverse());

    expect(
      (await call('GET', `/webhooks/deliveries?pollId=${poll.pollId}&status=pending`, acme.key)).json().data,
    ).toHaveLength(3);
    expect(
      (await call('GET', `/webhooks/deliveries?pollId=${poll.pollId}&status=delivered`, acme.key)).json().data,
    ).toEqual([]);
    expect(
      (await call('GET', `/webhooks/deliveries?webhookId=${hook.id}&status=pending`, acme.key)).json().data,
    ).toHaveLength(2);
    expectProblem(
      await call('GET', `/webhooks/deliveries?pollId=${poll.pollId}&status=lost`, acme.key),
      400,
      'validation_failed',
    );
  });

  it('pages newest first with startCursor and limit', async () => {
    const all = (await call('GET', `/webhooks/deliveries?pollId=${poll.pollId}`, acme.key))
      .json()
      .data.map((x: Json) => x.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const page: { data: Json[]; hasNextPage: boolean; endCursor: string | null } = (
        await call(
          'GET',
          `/webhooks/deliveries?pollId=${poll.pollId}&limit=1${cursor ? `&startCursor=${cursor}` : ''}`,
          acme.key,
        )
      ).json();
      seen.push(...page.data.map((x) => x.id as string));
      if (!page.hasNextPage) break;
      cursor = page.endCursor;
    }
    expect(seen).toEqual(all);
  });

  it('needs webhookId or pollId; unknown ids → 404', async () => {
    expectProblem(await call('GET', '/webhooks/deliveries', acme.key), 400, 'validation_failed');
    expectProblem(await call('GET', '/webhooks/delivery', acme.key), 400, 'validation_failed');
    expectProblem(
      await call('GET', '/webhooks/deliveries?webhookId=whk_0000000000000000000000', acme.key),
      404,
      'not_found',
    );
    expectProblem(
      await call('GET', '/webhooks/deliveries?pollId=poll_0000000000000000000000', acme.key),
      404,
      'not_found',
    );
    expectProblem(
      await call('GET', '/webhooks/delivery?deliveryId=dlv_0000000000000000000000', acme.key),
      404,
      'not_found',
    );
  });

  it('another account’s key → 404 on the list and the detail, exactly as for missing ones', async () => {
    const [d] = (await call('GET', `/webhooks/deliveries?webhookId=${hook.id}`, acme.key)).json().data;
    const a = expectProblem(
      await call('GET', `/webhooks/deliveries?webhookId=${hook.id}`, rival.key),
      404,
      'not_found',
    );
    const b = expectProblem(
      await call('GET', '/webhooks/deliveries?webhookId=whk_0000000000000000000000', rival.key),
      404,
      'not_found',
    );
    expect(a.detail).toBe(b.detail);
    expectProblem(await call('GET', `/webhooks/deliveries?pollId=${poll.pollId}`, rival.key), 404, 'not_found');
    const c = expectProblem(await call('GET', `/webhooks/delivery?deliveryId=${d.id}`, rival.key), 404, 'not_found');
    const m = expectProblem(
      await call('GET', '/webhooks/delivery?deliveryId=dlv_0000000000000000000000', rival.key),
      404,
      'not_found',
    );
    expect(c.detail).toBe(m.detail);
    expect(c.detail).not.toContain(d.id);
  });

  it('editor and read_only → 403 role_forbidden on the detail', async () => {
    const [d] = (await call('GET', `/webhooks/deliveries?webhookId=${hook.id}`, acme.key)).json().data;
    expectProblem(await call('GET', `/webhooks/delivery?deliveryId=${d.id}`, keys.editor), 403, 'role_forbidden');
    expectProblem(await call('GET', `/webhooks/delivery?deliveryId=${d.id}`, keys.read_only), 403, 'role_forbidden');
    expect((await call('GET', `/webhooks/delivery?deliveryId=${d.id}`, keys.billing_admin)).statusCode).toBe(200);
  });
});
