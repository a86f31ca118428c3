import pino from 'pino';
import type { Deps } from '../../src/app/ports.js';
import { createUndiciSender } from '../../src/infra/http-sender/undici-sender.js';
import { startDeliveryRunner } from '../../src/worker/delivery-runner.js';
import { BATCH_FLUSH, startScheduler } from '../../src/worker/scheduler.js';

/** The real runner and scheduler with the real undici sender, in this process. */
export function startTestWorker(deps: Deps, opts: { allowPrivateTargets?: boolean; concurrency?: number } = {}) {
  const sender = createUndiciSender({ allowPrivateTargets: opts.allowPrivateTargets ?? true });
  const withSender: Deps = { ...deps, sender };
  const controller = new AbortController();
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const runner = startDeliveryRunner(withSender, controller.signal, { concurrency: opts.concurrency ?? 16, claimBatch: 16, idleMs: 20, drainMs: 15_000, logger });
  const scheduler = startScheduler(withSender, controller.signal, { tickMs: 20, tasks: [BATCH_FLUSH], logger, onWork: () => runner.wake() });
  return {
    deps: withSender,
    async stop() {
      controller.abort();
      await Promise.all([runner.done, scheduler]);
      await sender.close();
    },
  };
}
