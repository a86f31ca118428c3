import type { Logger } from 'pino';
import { wakeableSleep } from './sleep.js';

/**
 * One worker's share of the connections that all workers together may hold to one endpoint
 * origin: an equal part, and never none (past `total` workers, each keeps one).
 */
export function connectionShare(total: number, workers: number): number {
  return Math.max(1, Math.floor(total / Math.max(1, workers)));
}

export type ConnectionSharing = {
  /** Count again now (a worker announced itself). */
  recount(): void;
  /** Settles once the first count is done (or has failed): a new worker sends after it. */
  firstCount: Promise<void>;
  done: Promise<void>;
};

/**
 * Keeps this worker's connections per endpoint origin at its share of `total`: the workers are
 * counted at start, whenever one announces itself (recount), and every `intervalMs`, which is how
 * a worker that died is noticed. A failed count keeps the share as it was and is logged once per
 * outage.
 */
export function startConnectionSharing(opts: {
  total: number;
  countWorkers(): Promise<number>;
  apply(perOrigin: number): void;
  /** Each count, whether or not the share changed. */
  observe?(workers: number, perOrigin: number): void;
  intervalMs: number;
  signal: AbortSignal;
  logger: Logger;
}): ConnectionSharing {
  const idle = wakeableSleep(opts.signal);
  let again = false;
  let share = opts.total;
  let failing = false;
  let counted: () => void = () => {};
  const firstCount = new Promise<void>((resolve) => (counted = resolve));
  const done = (async () => {
    while (!opts.signal.aborted) {
      again = false;
      try {
        const workers = await opts.countWorkers();
        failing = false;
        const next = connectionShare(opts.total, workers);
        if (next !== share) {
          share = next;
          opts.apply(share);
          opts.logger.info({ workers, connectionsPerOrigin: share }, 'endpoint connections shared among workers');
        }
        opts.observe?.(workers, share);
      } catch (err) {
        if (!failing)
          opts.logger.warn({ err, connectionsPerOrigin: share }, 'counting workers failed; keeping the share');
        failing = true;
      }
      counted();
      if (!again) await idle.sleep(opts.intervalMs);
    }
    counted();
  })();
  return {
    recount() {
      again = true;
      idle.wake();
    },
    firstCount,
    done,
  };
}
