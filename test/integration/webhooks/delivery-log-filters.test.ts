import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';

let h: Harness;
let acct: TestAccount;

beforeAll(async () => {
  h = await harness({ delivery: { batchWindowMs: 0 } });
  acct = await h.account();
});
afterAll(() => h?.close());

describe('GET /webhooks/deliveries time filters', () => {
  it('keeps deliveries created inside (createdAfter, createdBefore)', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/log');
    const times: string[] = [];
    for (let i = 0; i < 3; i++) {
      times.push(h.clock.now().toISOString());
      await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: `answer ${i}` }] });
      h.clock.advance(60_000);
    }
    const list = async (q: string) => {
      const res = await h.app.inject({
        url: `/webhooks/deliveries?webhookId=${hook.data.id}${q}`,
        headers: bearer(acct.key),
      });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().data as { createdAt: string }[]).map((d) => d.createdAt);
    };
    expect(await list('')).toEqual([...times].reverse());
    const after = new Date(Date.parse(times[0]!) + 1).toISOString();
    const before = new Date(Date.parse(times[2]!) - 1).toISOString();
    expect(await list(`&createdAfter=${after}`)).toEqual([times[2], times[1]]);
    expect(await list(`&createdAfter=${after}&createdBefore=${before}`)).toEqual([times[1]]);
    // Times no id can tell (before 1970, after the year 8888) still bound only by time.
    expect(await list('&createdAfter=0001-01-01T00:00:00Z&createdBefore=9999-12-31T00:00:00Z')).toEqual(
      [...times].reverse(),
    );
    expect(await list('&createdAfter=9000-01-01T00:00:00Z')).toEqual([]);
    const bad = await h.app.inject({
      url: `/webhooks/deliveries?webhookId=${hook.data.id}&createdAfter=yesterday`,
      headers: bearer(acct.key),
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].path).toBe('query:/createdAfter');
    // An end not after the start selects nothing: a swapped pair, refused rather than empty.
    for (const [start, end] of [
      [before, after],
      [after, after],
    ]) {
      const swapped = await h.app.inject({
        url: `/webhooks/deliveries?webhookId=${hook.data.id}&createdAfter=${start}&createdBefore=${end}`,
        headers: bearer(acct.key),
      });
      expect(swapped.statusCode, swapped.body).toBe(400);
      expect(swapped.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'query:/createdBefore' }] });
    }
  });
});
