import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deps } from '../../../src/app/ports/index.js';
import { createSubmissionQueue } from '../../../src/app/responses/submission-queue.js';
import { BATCH_FLUSH, startScheduler } from '../../../src/worker/scheduler.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';

// A batch is delivered as its window ends, not at the scheduler's next tick: the flush loop
// sleeps until the earliest window's end when that comes before the tick.
describe('the batch flush wakes when a window ends', () => {
  let h: Harness;
  let acme: TestAccount;
  beforeAll(async () => {
    h = await harness();
    acme = await h.account({ name: 'Acme' });
  });
  afterAll(() => h?.close());

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
