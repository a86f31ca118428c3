import { describe, expect, it } from 'vitest';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import { acme, call, expectProblem, h, HOOK, useWebhooksApi, type Json } from '../../support/webhooks-api.js';

/**
 * What DELETE /poll does to the poll's webhooks (src/app/polls/delete-poll.ts): they are deleted,
 * and their pending deliveries cancelled. The rest of DELETE /poll is in polls.test.ts.
 */

useWebhooksApi();

describe('DELETE /poll', () => {
  it('deletes its webhooks and cancels their pending deliveries', async () => {
    const poll = await visiblePoll(h, acme);
    const hooks = [
      (await createWebhook(h, acme, poll.pollId, HOOK)).data,
      (await createWebhook(h, acme, poll.pollId, HOOK, 'complete')).data,
    ];
    const p = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'one' }], complete: true });
    const before = (await call('GET', `/webhooks/deliveries?pollId=${poll.pollId}`, acme.key)).json().data;
    expect(before.map((d: Json) => d.type).sort()).toEqual(['completed-survey', 'submitted-responses']);

    const res = await call('DELETE', `/poll?pollId=${poll.pollId}`, acme.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ id: poll.pollId, deleted: true });

    const all = (await call('GET', `/webhooks?accountId=${acme.accountId}&limit=100`, acme.key)).json().data;
    expect(all.filter((w: Json) => w.pollId === poll.pollId)).toEqual([]);
    for (const w of hooks) {
      expectProblem(await call('DELETE', `/webhooks?id=${w.id}`, acme.key), 404, 'not_found');
      expect(await h.deps.store.webhooks.get(w.id)).toBeUndefined();
    }
    for (const d of before) {
      const row = await h.deps.store.deliveries.get(d.id);
      expect(row?.status).toBe('cancelled');
    }
    expect(p.complete).toBe(true);
    expectProblem(await call('GET', `/webhooks?pollId=${poll.pollId}`, acme.key), 404, 'not_found');
  });
});
