import { createHash } from 'node:crypto';
import pino, { type Logger } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import type { Deps, HttpSender } from '../../src/app/ports/index.js';
import type { Metrics } from '../../src/app/ports/metrics.js';
import { createH1Sender, type SenderOptions } from '../../src/infra/http-sender/h1-sender.js';
import { startDeliveryRunner } from '../../src/worker/delivery-runner.js';
import { batchFlushTask, recoverTask, startScheduler } from '../../src/worker/scheduler.js';
import { newId } from '../../src/domain/ids.js';
import { harness, type Harness, type TestAccount } from './app.js';
import { startReceiver } from './receiver.js';

/**
 * The real runner and scheduler with the real HTTPS sender, in this process. `resolver`
 * replaces DNS for the sender (a test name can resolve to anything at delivery time).
 */
export function startTestWorker(
  deps: Deps,
  opts: {
    allowPrivateTargets?: boolean;
    concurrency?: number;
    resolver?: SenderOptions['resolver'];
    logger?: Logger;
    metrics?: Metrics;
  } = {},
) {
  const sender = createH1Sender({ allowPrivateTargets: opts.allowPrivateTargets ?? true, resolver: opts.resolver });
  const withSender: Deps = { ...deps, sender };
  const controller = new AbortController();
  const logger = opts.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const runner = startDeliveryRunner(withSender, controller.signal, {
    concurrency: opts.concurrency ?? 16,
    claimBatch: 16,
    idleMs: 20,
    drainMs: 15_000,
    logger,
    metrics: opts.metrics,
  });
  const scheduler = startScheduler(withSender, controller.signal, {
    tickMs: 20,
    tasks: [batchFlushTask(500, runner), recoverTask(50)],
    logger,
    metrics: opts.metrics,
    onWork: () => runner.wake(),
  });
  return {
    deps: withSender,
    async stop() {
      controller.abort();
      await Promise.all([runner.done, scheduler]);
      await sender.close();
    },
  };
}

/**
 * For one test file: an app harness on a real clock (the worker's lease and due times must line
 * up with wall time) and an HTTPS receiver, both ready once the file's tests run.
 */
export function harnessWithReceiver(): { h: Harness; receiver: Awaited<ReturnType<typeof startReceiver>> } {
  const env = {} as ReturnType<typeof harnessWithReceiver>;
  beforeAll(async () => {
    env.h = await harness();
    env.h.deps.clock = { now: () => new Date() };
    env.receiver = await startReceiver();
  });
  afterAll(async () => {
    await env.receiver?.close();
    await env.h?.close();
  });
  return env;
}

/**
 * For one test file: an app harness that allows private targets, on `now` (by default the wall
 * clock: the worker's lease and due times must line up with it), an account, an HTTPS receiver
 * and a worker, ready once the file's tests run and stopped after them.
 */
export function liveDelivery(
  options: Parameters<typeof harness>[0] = {},
  now: () => Date = () => new Date(),
): {
  h: Harness;
  acct: TestAccount;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  worker: ReturnType<typeof startTestWorker>;
} {
  const env = {} as ReturnType<typeof liveDelivery>;
  beforeAll(async () => {
    env.h = await harness({ allowPrivateTargets: true, ...options });
    env.h.clock.ms = Date.now();
    env.h.deps.clock = { now };
    env.acct = await env.h.account();
    env.receiver = await startReceiver();
    env.worker = startTestWorker(env.h.deps);
  });
  afterAll(async () => {
    await env.worker?.stop();
    await env.receiver?.close();
    await env.h?.close();
  });
  return env;
}

/** `count` deliveries of the account to `url`, due now, as the worker finds them queued; their ids. */
export async function queueDue(h: Harness, accountId: string, url: string, count: number): Promise<string[]> {
  // One endpoint per account and URL, as a logic-triggered URL is (its id derived here).
  const endpointId = `end_${createHash('sha256').update(`${accountId} ${url}`).digest('hex').slice(0, 20)}`;
  const now = new Date();
  const ids = Array.from({ length: count }, () => newId('dlv'));
  await h.deps.store.deliveries.insert(
    ids.map((id, i) => ({
      id,
      accountId,
      pollId: 'poll_due',
      webhookId: null,
      endpointId,
      source: 'question-logic' as const,
      url,
      participantId: `prt_${i}`,
      type: 'submitted-responses' as const,
      body: '{}',
      createdAt: now,
      nextAttemptAt: now,
    })),
  );
  return ids;
}

/** The harness's deps with `sender`, a count of the claims made through them, and the ids they leased. */
export function countingClaims(h: Harness, sender: HttpSender): { deps: Deps; claims(): number; claimed: Set<string> } {
  let claims = 0;
  const claimed = new Set<string>();
  const deliveries = h.deps.store.deliveries;
  const deps: Deps = {
    ...h.deps,
    sender,
    store: {
      ...h.deps.store,
      deliveries: {
        ...deliveries,
        claim: async (...args) => {
          claims++;
          const leased = await deliveries.claim(...args);
          for (const d of leased) claimed.add(d.id);
          return leased;
        },
      },
    },
  };
  return { deps, claims: () => claims, claimed };
}
