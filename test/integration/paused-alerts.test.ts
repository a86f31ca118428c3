import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideAlert } from '../../src/domain/alert-policy.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import { createWebhook, visiblePoll } from '../support/fixtures.js';

// A paused webhook's endpoint gets no failure alert while paused, and the time it was paused is
// not counted as quiet time once it is resumed.

let h: Harness;
let acct: TestAccount;
const DAY = 86_400_000;

beforeAll(async () => {
  h = await harness();
  acct = await h.account();
});
afterAll(() => h?.close());

const pause = (webhookId: string, paused: boolean) =>
  h.app.inject({ method: 'POST', url: '/webhooks/update', headers: bearer(acct.key), payload: { webhookId, paused } });
const candidates = async (quietBefore: Date, reminderBefore = new Date(0)) =>
  h.deps.store.transaction(async (store) =>
    (await store.alerts.claimCandidates(h.clock.now(), quietBefore, reminderBefore, 50)).map((e) => e.id),
  );
const windows = { quietMs: DAY, reminderMs: 7 * DAY };

describe('failure alerts of a paused webhook', () => {
  it('are not due while it is paused, and quiet time counts from the resume', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = (await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/paused')).data.id;
    await h.deps.store.endpoints.recordGivenUp(hook, h.clock.now(), 'HTTP 500');
    h.clock.advance(2 * DAY);
    const quietBefore = () => new Date(h.clock.now().getTime() - DAY);
    expect(await candidates(quietBefore())).toContain(hook);

    expect((await pause(hook, true)).statusCode).toBe(200);
    h.clock.advance(3 * DAY);
    expect(await candidates(quietBefore())).not.toContain(hook);

    expect((await pause(hook, false)).statusCode).toBe(200);
    expect(await candidates(quietBefore())).not.toContain(hook);
    const [endpoint] = await h.deps.store.endpoints.getMany(acct.accountId, [hook]);
    expect(decideAlert(endpoint!, h.clock.now(), { quietMs: DAY, reminderMs: 7 * DAY })).toEqual({ send: null });

    h.clock.advance(DAY);
    expect(await candidates(quietBefore())).toContain(hook);
    expect(decideAlert(endpoint!, h.clock.now(), { quietMs: DAY, reminderMs: 7 * DAY })).toEqual({ send: 'first' });
  });

  it('send no reminder within a quiet period of the resume, however long the pause', async () => {
    const poll = await visiblePoll(h, acct);
    const hook = (await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/paused-alerted')).data.id;
    await h.deps.store.endpoints.recordGivenUp(hook, h.clock.now(), 'HTTP 500');
    h.clock.advance(2 * DAY);
    await h.deps.store.alerts.markAlerted(hook, 1, h.clock.now());
    const due = async () => {
      const now = h.clock.now().getTime();
      const ids = await candidates(new Date(now - windows.quietMs), new Date(now - windows.reminderMs));
      const [endpoint] = await h.deps.store.endpoints.getMany(acct.accountId, [hook]);
      return { listed: ids.includes(hook), decision: decideAlert(endpoint!, h.clock.now(), windows).send };
    };

    expect((await pause(hook, true)).statusCode).toBe(200);
    h.clock.advance(8 * DAY);
    expect((await due()).listed).toBe(false);
    expect((await pause(hook, false)).statusCode).toBe(200);
    expect(await due()).toEqual({ listed: false, decision: null });

    h.clock.advance(DAY);
    expect(await due()).toEqual({ listed: true, decision: 'reminder' });
  });
});
