import { expect, it } from 'vitest';
import { harnessWithReceiver, queueDue, startTestWorker } from '../support/worker.js';

/**
 * The worker's concurrency bound, with a real store, the real runner and sender, and a real
 * HTTPS receiver that takes 150 ms to answer: never more than `concurrency` attempts are open
 * at once, the bound is used in full, and every delivery is recorded as delivered.
 */

const env = harnessWithReceiver();

it('keeps at most `concurrency` attempts open, refills freed slots, and records every delivery', async () => {
  const { h, receiver } = env;
  const DELAY = 150;
  const CONCURRENCY = 4;
  receiver.script('/slow', [{ status: 200, delayMs: DELAY }]);
  const { accountId } = await h.account({ name: 'Bounds' });
  const ids = await queueDue(h, accountId, receiver.url('/slow'), 24);
  const worker = startTestWorker(h.deps, { concurrency: CONCURRENCY });
  try {
    const got = await receiver.waitFor((r) => r.filter((x) => x.path === '/slow').length >= ids.length, 20_000);
    // Every request stays open DELAY ms: the most arrivals inside any window shorter than
    // that is the most attempts that were open together.
    const at = got
      .filter((x) => x.path === '/slow')
      .map((x) => x.at)
      .sort((a, b) => a - b);
    let open = 0;
    for (let i = 0; i < at.length; i++)
      open = Math.max(open, at.filter((t) => t >= at[i]! && t < at[i]! + DELAY - 30).length);
    expect(open).toBe(CONCURRENCY);
    for (const until = Date.now() + 10_000; ;) {
      const states = await Promise.all(ids.map((id) => h.deps.store.deliveries.get(id)));
      if (states.every((d) => d?.status === 'delivered')) break;
      if (Date.now() > until) throw new Error(`not all recorded: ${states.map((d) => d?.status).join(', ')}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  } finally {
    await worker.stop();
  }
  expect(
    new Set(receiver.received.filter((x) => x.path === '/slow').map((x) => x.headers['x-service-delivery-id'])),
  ).toEqual(new Set(ids));
});
