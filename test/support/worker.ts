import pino, { type Logger } from 'pino';
import type { Deps } from '../../src/app/ports/index.js';
import type { Metrics } from '../../src/app/ports/metrics.js';
import { createH1Sender, type SenderOptions } from '../../src/infra/http-sender/h1-sender.js';
import { startDeliveryRunner } from '../../src/worker/delivery-runner.js';
import { BATCH_FLUSH, recoverTask, startScheduler } from '../../src/worker/scheduler.js';

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
    tasks: [BATCH_FLUSH, recoverTask(50)],
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
