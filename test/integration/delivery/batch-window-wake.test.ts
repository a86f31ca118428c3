import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deps, Store } from '../../../src/app/ports/index.js';
import { createSubmissionQueue } from '../../../src/app/responses/submission-queue.js';
import { BATCH_FLUSH, batchFlushTask, startScheduler } from '../../../src/worker/scheduler.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';

// One database for the file: each test makes its own poll.
let h: Harness;
let acme: TestAccount;
beforeAll(async () => {
  h = await harness();
  acme = await h.account({ name: 'Acme' });
});
afterAll(() => h?.close());

// A batch is delivered as its window ends, not at the scheduler's next tick: the flush loop
// sleeps until the earliest window's end when that comes before the tick.
describe('the batch flush wakes when a window ends', () => {
  it('flushes a batch whose window ends long before the next tick', async () => {
    const p = await visiblePoll(h, acme);
    const webhookId = (await createWebhook(h, acme, p.pollId, 'https://hooks.example.com/a')).data.id;
    const deps: Deps = {
      ...h.deps,
      clock: { now: () => new Date() },
      delivery: { ...h.deps.delivery, batchWindowMs: 2_000 },
    };
    await createSubmissionQueue(deps).submit(null, {
      pollId: p.pollId,
      participantId: 'r1',
      answers: [{ slideId: p.q1, value: 'hello' }],
    });
    const controller = new AbortController();
    // The tick is a minute: only a wake at the window's end delivers within the wait below.
    const scheduler = startScheduler(deps, controller.signal, {
      tickMs: 60_000,
      tasks: [BATCH_FLUSH],
      logger: pino({ level: 'silent' }),
    });
    try {
      const deadline = Date.now() + 20_000;
      let made = 0;
      while (Date.now() < deadline) {
        made = (await deps.store.deliveries.list({ accountIds: [acme.accountId], webhookId }, { limit: 10 })).data
          .length;
        if (made) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(made).toBe(1);
    } finally {
      controller.abort();
      await scheduler;
    }
  });
});

/**
 * The real store, with the flush's claims counted; `asleep` resolves when the flush loop asks
 * when the next window ends, which it does only on its way to sleep.
 */
function countingFlushes(deps: Deps) {
  let claims = 0;
  let slept!: () => void;
  const asleep = new Promise<void>((resolve) => (slept = resolve));
  const wrap = (store: Store): Store => ({
    ...store,
    batches: {
      ...store.batches,
      claimDue: (now, limit) => (claims++, store.batches.claimDue(now, limit)),
      nextFlushAt: () => (slept(), store.batches.nextFlushAt()),
    },
    transaction: (fn) => store.transaction((tx) => fn(wrap(tx))),
  });
  return { deps: { ...deps, store: wrap(deps.store) }, claims: () => claims, asleep };
}

// A pass that took fewer batches than its limit took every one due: the loop sleeps rather than
// open another transaction that finds none. A full pass may have left more: it goes again at once.
describe('the batch flush passes again at once only after a full pass', () => {
  async function twoBatchesDue() {
    const p = await visiblePoll(h, acme);
    const webhookId = (await createWebhook(h, acme, p.pollId, 'https://hooks.example.com/b')).data.id;
    const submissions = createSubmissionQueue(h.deps);
    for (const participantId of ['r1', 'r2'])
      await submissions.submit(null, { pollId: p.pollId, participantId, answers: [{ slideId: p.q1, value: 'hi' }] });
    h.clock.advance(h.deps.delivery.batchWindowMs + 1);
    return webhookId;
  }

  async function flushUntilAsleep(limit: number) {
    const webhookId = await twoBatchesDue();
    const counted = countingFlushes(h.deps);
    const controller = new AbortController();
    const scheduler = startScheduler(counted.deps, controller.signal, {
      tickMs: 60_000,
      tasks: [batchFlushTask(limit)],
      logger: pino({ level: 'silent' }),
    });
    try {
      await counted.asleep;
      const made = await h.deps.store.deliveries.list({ accountIds: [acme.accountId], webhookId }, { limit: 10 });
      return { claims: counted.claims(), delivered: made.data.length };
    } finally {
      controller.abort();
      await scheduler;
    }
  }

  it('takes both batches in one pass of 500 and sleeps without a second claim', async () => {
    expect(await flushUntilAsleep(500)).toEqual({ claims: 1, delivered: 2 });
  });

  it('with passes of one, goes again at once until a pass comes back short', async () => {
    // One batch, one batch, then none: three claims before it sleeps.
    expect(await flushUntilAsleep(1)).toEqual({ claims: 3, delivered: 2 });
  });
});
