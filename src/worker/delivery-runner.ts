import type { Logger } from 'pino';
import { attemptDelivery, claimDeliveries } from '../app/deliver.js';
import type { Deps } from '../app/ports.js';
import { wakeableSleep } from './sleep.js';

export type RunnerOptions = {
  /** Most attempts in flight in this process at once. */
  concurrency: number;
  /** Most deliveries leased per claim. */
  claimBatch: number;
  /** How long to wait before looking again when nothing was due. */
  idleMs: number;
  logger: Logger;
};

export type Runner = { done: Promise<void>; wake(): void };

/**
 * Claims due deliveries and attempts them, at most `concurrency` at a time. Stopping (the
 * signal) ends claiming; attempts already sent finish and are recorded (each is bounded by the
 * delivery deadline), so a clean stop leaves nothing leased.
 */
export function startDeliveryRunner(deps: Deps, signal: AbortSignal, opts: RunnerOptions): Runner {
  const inFlight = new Set<Promise<void>>();
  const idle = wakeableSleep(signal);

  const track = (p: Promise<void>) => {
    inFlight.add(p);
    void p.finally(() => {
      inFlight.delete(p);
      idle.wake();
    });
  };

  const loop = async () => {
    while (!signal.aborted) {
      const free = opts.concurrency - inFlight.size;
      if (free <= 0) {
        await Promise.race(inFlight);
        continue;
      }
      let claimed;
      try {
        claimed = await claimDeliveries(deps, Math.min(free, opts.claimBatch));
      } catch (err) {
        opts.logger.error({ err }, 'claiming deliveries failed; retrying shortly');
        await idle.sleep(Math.max(opts.idleMs, 1000));
        continue;
      }
      for (const d of claimed) {
        track(
          attemptDelivery(deps, d).then(
            (r) => opts.logger.debug({ deliveryId: r.deliveryId, attempt: r.attempt, next: r.decision.next, applied: r.applied }, 'attempt recorded'),
            (err: unknown) => opts.logger.error({ err, deliveryId: d.id }, 'attempt failed to record; the lease will expire and it is retried'),
          ),
        );
      }
      if (claimed.length === 0) await idle.sleep(opts.idleMs);
    }
    await Promise.allSettled([...inFlight]);
  };

  return { done: loop(), wake: () => idle.wake() };
}
