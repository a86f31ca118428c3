import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Deps, HttpSender, Store } from '../../../src/app/ports/index.js';
import type { NewDelivery } from '../../../src/domain/delivery.js';
import { flushSomeBatches } from '../../../src/app/delivery/flush-batches.js';
import { createH1Sender } from '../../../src/infra/http-sender/h1-sender.js';
import { startDeliveryRunner, type Runner } from '../../../src/worker/delivery-runner.js';
import { batchFlushTask, startScheduler } from '../../../src/worker/scheduler.js';
import { verifySignature } from '../../../src/verify.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { untilSettledOrWaiting } from '../../support/races.js';
import { startReceiver } from '../../support/receiver.js';
import { countingClaims, queueDue } from '../../support/worker.js';

/**
 * The batch flush hands its deliveries to the runner of its own process: they are queued
 * leased to it and attempted once the flush commits, with no claim in between. What the
 * runner has no room for, and what a paused webhook holds, stays due for a claim.
 */

const WINDOW_MS = 300;
// Webhooks to the loopback receiver: private targets allowed. A real clock: the runner's leases
// and due times must line up with wall time.
const env = {} as { h: Harness; receiver: Awaited<ReturnType<typeof startReceiver>> };
beforeAll(async () => {
  env.h = await harness({ allowPrivateTargets: true, delivery: { batchWindowMs: WINDOW_MS } });
  env.h.deps.clock = { now: () => new Date() };
  env.receiver = await startReceiver();
});
afterAll(async () => {
  await env.receiver?.close();
  await env.h?.close();
});
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/** A runner on `deps` with `concurrency` slots, stopped after the test. */
function runner(
  deps: Deps,
  concurrency: number,
  startAfter?: Promise<unknown>,
): Runner & { stopping: AbortController } {
  const controller = new AbortController();
  const r = startDeliveryRunner(deps, controller.signal, {
    concurrency,
    claimBatch: concurrency,
    idleMs: 20,
    drainMs: 5_000,
    logger: pino({ level: 'silent' }),
    startAfter,
  });
  stops.push(async () => {
    controller.abort();
    await r.done;
    await deps.sender?.close();
  });
  return { ...r, stopping: controller };
}

/** `deps` whose flushes run `flush` in place of the repository's last statement (`tx`: the flush's own). */
function withFlush(deps: Deps, flush: (tx: Store, ids: string[], queued: NewDelivery[]) => Promise<void>): Deps {
  return {
    ...deps,
    store: {
      ...deps.store,
      transaction: (fn) =>
        deps.store.transaction((tx) =>
          fn({ ...tx, batches: { ...tx.batches, flush: (ids, queued) => flush(tx, ids, queued) } }),
        ),
    },
  };
}

const until = async (what: string, fn: () => Promise<boolean>) => {
  for (let i = 0; !(await fn()); i++) {
    if (i > 400) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** A poll with a `partial` webhook to `path`, and `n` respondents who answered it. */
async function answered(path: string, n: number) {
  const { h, receiver } = env;
  const acct = await h.account({ name: path });
  const poll = await visiblePoll(h, acct);
  const hook = await createWebhook(h, acct, poll.pollId, receiver.url(path));
  for (let i = 0; i < n; i++) await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: `r${i}` }] });
  const windowsEnd = Date.now() + WINDOW_MS;
  const deliveries = async () =>
    (await h.deps.store.deliveries.list({ accountIds: [acct.accountId], webhookId: hook.data.id }, { limit: 50 })).data;
  const windowsEnded = () => until('the batch windows to end', async () => Date.now() > windowsEnd);
  return { acct, hook, deliveries, windowsEnded };
}

it('sends what a flush hands over once each, signed, without a claim returning any of it', async () => {
  const { h, receiver } = env;
  receiver.script('/handed', [{ status: 200 }]);
  const { hook, deliveries } = await answered('/handed', 3);
  const { deps, claimed } = countingClaims(h, createH1Sender({ allowPrivateTargets: true }));
  const r = runner(deps, 16);
  const controller = new AbortController();
  const scheduler = startScheduler(deps, controller.signal, {
    tickMs: 20,
    tasks: [batchFlushTask(500, r)],
    logger: pino({ level: 'silent' }),
    onWork: () => r.wake(),
  });
  stops.push(async () => {
    controller.abort();
    await scheduler;
  });
  const sent = await receiver.waitFor((x) => x.filter((y) => y.path === '/handed').length >= 3, 20_000);
  await until('the outcomes', async () => (await deliveries()).every((d) => d.status === 'delivered'));
  const made = await deliveries();
  expect(made).toHaveLength(3);
  expect(made.map((d) => d.attemptCount)).toEqual([1, 1, 1]);
  expect(made.filter((d) => claimed.has(d.id))).toEqual([]);
  for (const req of sent.filter((y) => y.path === '/handed')) {
    expect(req.headers['x-service-attempt']).toBe('1');
    expect(req.headers['x-service-secret']).toBe(hook.data.legacySecret);
    verifySignature({ secret: hook.signingSecret!, header: req.headers['x-service-signature'], rawBody: req.rawBody });
  }
});

it('hands over as many as the runner has free slots, and leaves the rest due for a claim', async () => {
  const { h, receiver } = env;
  receiver.script('/full', [{ status: 200 }]);
  const { deliveries, windowsEnded } = await answered('/full', 5);
  const { deps, claimed } = countingClaims(h, createH1Sender({ allowPrivateTargets: true }));
  const r = runner(deps, 2);
  await windowsEnded();
  const flushed = await flushSomeBatches(deps, 500, r);
  expect(flushed).toEqual({ deliveries: 5, batches: 5, leased: 2 });
  await receiver.waitFor((x) => x.filter((y) => y.path === '/full').length >= 5, 20_000);
  await until('the outcomes', async () => (await deliveries()).every((d) => d.status === 'delivered'));
  const made = await deliveries();
  expect(made.filter((d) => claimed.has(d.id))).toHaveLength(3);
  expect(made.map((d) => d.attemptCount)).toEqual([1, 1, 1, 1, 1]);
});

it('hands over nothing of a paused webhook: its deliveries are queued due and parked by the claim', async () => {
  const { h, receiver } = env;
  const { acct, hook, deliveries, windowsEnded } = await answered('/paused', 2);
  const paused = await h.app.inject({
    method: 'POST',
    url: '/webhooks/update',
    headers: { authorization: `Bearer ${acct.key}` },
    payload: { webhookId: hook.data.id, paused: true },
  });
  expect(paused.statusCode, paused.body).toBe(200);
  const { deps, claimed } = countingClaims(h, createH1Sender({ allowPrivateTargets: true }));
  const r = runner(deps, 16);
  const asked: number[] = [];
  await windowsEnded();
  const watched = { reserve: (n: number) => (asked.push(n), r.reserve(n)), start: r.start };
  expect(await flushSomeBatches(deps, 500, watched)).toEqual({ deliveries: 2, batches: 2, leased: 0 });
  expect(asked).toEqual([0]);
  await until('the claim to park them', async () => (await deliveries()).every((d) => claimed.has(d.id)));
  await until('them parked', async () => (await deliveries()).every((d) => d.nextAttemptAt === null));
  expect((await deliveries()).map((d) => [d.status, d.attemptCount])).toEqual([
    ['pending', 0],
    ['pending', 0],
  ]);
  expect(receiver.received.filter((y) => y.path === '/paused')).toHaveLength(0);
});

it('gives back the slots it held when the flush fails, and the runner fills them by claiming', async () => {
  const { h, receiver } = env;
  receiver.script('/given-back', [{ status: 200 }]);
  const { deliveries, windowsEnded } = await answered('/given-back', 1);
  const { deps } = countingClaims(h, createH1Sender({ allowPrivateTargets: true }));
  const r = runner(deps, 1);
  const failing = withFlush(deps, () => {
    // Every slot is held for this flush now: the runner has none left to give.
    expect(r.reserve(1)).toBe(0);
    throw new Error('the database refused the flush');
  });
  await windowsEnded();
  await expect(flushSomeBatches(failing, 500, r)).rejects.toThrow('the database refused the flush');
  // The batch is still open; two deliveries due beside it go out through the slot given back.
  expect(await deliveries()).toHaveLength(0);
  const { accountId } = await h.account({ name: 'GivenBack' });
  const ids = await queueDue(h, accountId, receiver.url('/given-back'), 2);
  await receiver.waitFor((x) => x.filter((y) => y.path === '/given-back').length >= 2, 20_000);
  await until('the outcomes', async () =>
    (await Promise.all(ids.map((id) => h.deps.store.deliveries.get(id)))).every((d) => d?.status === 'delivered'),
  );
  // The batch the failed flush left open flushes whole at the next one.
  expect(await flushSomeBatches(deps, 500, r)).toMatchObject({ deliveries: 1, batches: 1 });
  await until('its delivery', async () => {
    const made = await deliveries();
    return made.length === 1 && made[0]!.status === 'delivered';
  });
});

it('cancels a handed-over delivery whose webhook is deleted while it is in flight: its result decides nothing', async () => {
  const { h, receiver } = env;
  // The endpoint answers late: the deletion lands while the attempt waits for it.
  receiver.script('/deleted', [{ status: 200, delayMs: 3_000 }]);
  const { acct, hook, deliveries, windowsEnded } = await answered('/deleted', 1);
  const { deps } = countingClaims(h, createH1Sender({ allowPrivateTargets: true }));
  const r = runner(deps, 4);
  await windowsEnded();
  expect(await flushSomeBatches(deps, 500, r)).toMatchObject({ deliveries: 1, leased: 1 });
  await receiver.waitFor((x) => x.some((y) => y.path === '/deleted'), 20_000);
  const [made] = await deliveries();
  const deleted = await h.app.inject({
    method: 'DELETE',
    url: `/webhooks?id=${hook.data.id}`,
    headers: { authorization: `Bearer ${acct.key}` },
  });
  expect(deleted.statusCode, deleted.body).toBe(200);
  expect(deleted.json().data.cancelledDeliveries).toBe(1);
  // The answer comes and its attempt is logged, but the delivery stays cancelled.
  await until('the attempt to be logged', async () => (await h.deps.store.deliveries.attempts(made!.id)).length === 1);
  const after = await h.deps.store.deliveries.get(made!.id);
  expect(after?.status).toBe('cancelled');
  expect((await h.deps.store.deliveries.attempts(made!.id))[0]?.statusCode).toBe(200);
});

it('never has more attempts in flight than its concurrency when a flush hands over during a claim', async () => {
  const { h, receiver } = env;
  receiver.script('/during-claim', [{ status: 200, delayMs: 100 }]);
  const { deliveries, windowsEnded } = await answered('/during-claim', 2);
  const { accountId } = await h.account({ name: 'DuringClaim' });
  const due = await queueDue(h, accountId, receiver.url('/during-claim'), 2);
  const real = createH1Sender({ allowPrivateTargets: true });
  let sending = 0;
  let most = 0;
  const sender: HttpSender = {
    send: async (req) => {
      most = Math.max(most, ++sending);
      try {
        return await real.send(req);
      } finally {
        sending--;
      }
    },
    close: () => real.close(),
  };
  // The runner's first claim (which wants both slots) waits until the flush has handed over.
  let enter!: () => void;
  let leave!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const gate = new Promise<void>((resolve) => (leave = resolve));
  const store = h.deps.store;
  const deps: Deps = {
    ...h.deps,
    sender,
    store: {
      ...store,
      deliveries: {
        ...store.deliveries,
        claim: async (...args) => (enter(), await gate, store.deliveries.claim(...args)),
      },
    },
  };
  await windowsEnded();
  const r = runner(deps, 2);
  await entered;
  expect(await flushSomeBatches(deps, 500, r)).toEqual({ deliveries: 2, batches: 2, leased: 2 });
  leave();
  await until('all four delivered', async () => {
    const made = [...(await deliveries()), ...(await Promise.all(due.map((id) => store.deliveries.get(id))))];
    return made.length === 4 && made.every((d) => d?.status === 'delivered');
  });
  expect(most).toBe(2);
});

it('hands nothing over before startAfter settles, as it claims nothing', async () => {
  const { h } = env;
  let counted!: () => void;
  const firstCount = new Promise<void>((resolve) => (counted = resolve));
  const r = runner({ ...h.deps, sender: createH1Sender({ allowPrivateTargets: true }) }, 4, firstCount);
  expect(r.reserve(1)).toBe(0);
  counted();
  await until('the runner to start', async () => r.reserve(1) === 1);
  await r.start([], 1);
});

it('gives the leases back instead of sending when the deliveries come after it began to stop', async () => {
  const { h, receiver } = env;
  const { deliveries, windowsEnded } = await answered('/stopping', 1);
  const r = runner({ ...h.deps, sender: createH1Sender({ allowPrivateTargets: true }) }, 4);
  await windowsEnded();
  const late = {
    reserve: r.reserve,
    start: (claimed: Parameters<Runner['start']>[0], unused: number) => (r.stopping.abort(), r.start(claimed, unused)),
  };
  expect(await flushSomeBatches(h.deps, 500, late)).toEqual({ deliveries: 1, batches: 1, leased: 1 });
  await r.done;
  const [made] = await deliveries();
  // Due again at once for another worker, uncounted: never sent, its first attempt is still to come.
  expect(made).toMatchObject({ status: 'pending', attemptCount: 0 });
  expect(made!.nextAttemptAt!.getTime()).toBeLessThanOrEqual(Date.now());
  expect(receiver.received.filter((y) => y.path === '/stopping')).toHaveLength(0);
  // The worker that claims it next makes its first attempt.
  runner({ ...h.deps, sender: createH1Sender({ allowPrivateTargets: true }) }, 4);
  await receiver.waitFor((all) => all.some((y) => y.path === '/stopping'), 10_000);
  const [first] = receiver.received.filter((y) => y.path === '/stopping');
  expect(first!.headers['x-service-attempt']).toBe('1');
});

describe.skipIf(!onPostgres)('a pause racing a flush that hands over (PostgreSQL)', () => {
  const pause = (acct: TestAccount, webhookId: string) =>
    env.h.app.inject({
      method: 'POST',
      url: '/webhooks/update',
      headers: { authorization: `Bearer ${acct.key}` },
      payload: { webhookId, paused: true },
    });

  it('a flush skips a webhook whose pause is under way: its deliveries go to the claim, which parks them', async () => {
    const { h, receiver } = env;
    const { hook, deliveries, windowsEnded } = await answered('/pausing', 1);
    await windowsEnded();
    // What the flush offers a runner is under test here: a runner started now could claim the
    // delivery before the pause commits, as it may any delivery due.
    const asked: number[] = [];
    const offered = { reserve: (n: number) => (asked.push(n), 0), start: async () => {} };
    let flushed: Awaited<ReturnType<typeof flushSomeBatches>> | undefined;
    // The pause as updateWebhook makes it, held open while the flush runs.
    await h.deps.store.transaction(async (store) => {
      await store.webhooks.lock(hook.data.id);
      await store.webhooks.update(hook.data.id, { pausedAt: new Date() });
      await store.deliveries.parkWebhook(hook.data.id);
      flushed = await flushSomeBatches(h.deps, 500, offered);
    });
    expect(flushed).toEqual({ deliveries: 1, batches: 1, leased: 0 });
    expect(asked).toEqual([0]);
    const { deps, claimed } = countingClaims(h, createH1Sender({ allowPrivateTargets: true }));
    runner(deps, 4);
    await until('the claim to park it', async () => (await deliveries()).every((d) => claimed.has(d.id)));
    await until('it parked', async () => (await deliveries()).every((d) => d.nextAttemptAt === null));
    expect(receiver.received.filter((y) => y.path === '/pausing')).toHaveLength(0);
  });

  it('a pause waits for a flush that hands over, and finds its delivery in flight', async () => {
    const { h, receiver } = env;
    receiver.script('/paused-after', [{ status: 200 }]);
    const { acct, hook, deliveries, windowsEnded } = await answered('/paused-after', 1);
    const { deps } = countingClaims(h, createH1Sender({ allowPrivateTargets: true }));
    const r = runner(deps, 4);
    await windowsEnded();
    let pausing: ReturnType<typeof pause> | undefined;
    // The flush's last statement waits until the pause is seen waiting on the webhook's lock.
    const holding = withFlush(deps, async (tx, ids, queued) => {
      pausing = pause(acct, hook.data.id);
      await untilSettledOrWaiting(h.database.db, pausing, 'for update');
      await tx.batches.flush(ids, queued);
    });
    expect(await flushSomeBatches(holding, 500, r)).toEqual({ deliveries: 1, batches: 1, leased: 1 });
    expect((await pausing!).statusCode).toBe(200);
    await receiver.waitFor((x) => x.some((y) => y.path === '/paused-after'), 20_000);
    await until('its outcome', async () => (await deliveries())[0]?.status === 'delivered');
  });
});

describe.skipIf(!onPostgres)('a new URL racing a flush that hands over (PostgreSQL)', () => {
  it('a URL that changes after the flush read the webhook, before it locks it, is the one the handed-over delivery goes to', async () => {
    const { h, receiver } = env;
    receiver.script('/moved', [{ status: 200 }]);
    const { acct, hook, deliveries, windowsEnded } = await answered('/before-move', 1);
    await windowsEnded();
    const r = runner({ ...h.deps, sender: createH1Sender({ allowPrivateTargets: true }) }, 4);
    // The change commits on another connection between the flush's first read of the webhook
    // and its share lock: its retarget cannot see the delivery the flush is about to queue.
    const racing: Deps = {
      ...h.deps,
      store: {
        ...h.deps.store,
        transaction: (fn) =>
          h.deps.store.transaction((tx) =>
            fn({
              ...tx,
              batches: {
                ...tx.batches,
                contentsOf: async (batches, handoff) => {
                  const moved = await h.app.inject({
                    method: 'POST',
                    url: '/webhooks/update',
                    headers: { authorization: `Bearer ${acct.key}` },
                    payload: { webhookId: hook.data.id, url: receiver.url('/moved') },
                  });
                  expect(moved.statusCode, moved.body).toBe(200);
                  return tx.batches.contentsOf(batches, handoff);
                },
              },
            }),
          ),
      },
    };
    expect(await flushSomeBatches(racing, 500, r)).toEqual({ deliveries: 1, batches: 1, leased: 1 });
    await receiver.waitFor((all) => all.some((y) => y.path === '/moved'), 10_000);
    expect(receiver.received.filter((y) => y.path === '/before-move')).toHaveLength(0);
    const [made] = await deliveries();
    expect(made!.url).toBe(receiver.url('/moved'));
  });
});
