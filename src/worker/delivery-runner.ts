import type { Logger } from 'pino';
import { claimDeliveries } from '../app/delivery/claim-deliveries.js';
import { sendAttempt } from '../app/delivery/send-attempt.js';
import type { ClaimedDelivery } from '../domain/delivery.js';
import { resultBatcher } from './result-batcher.js';
import type { Deps } from '../app/ports/index.js';
import { wakeableSleep } from './sleep.js';

export type RunnerOptions = {
  /**
   * Most attempts in flight (sent, answer awaited) in this process at once; at most as many
   * more, answered, may be waiting for their result to be written.
   */
  concurrency: number;
  /** Most deliveries leased per claim. */
  claimBatch: number;
  /** How long to wait before looking again when nothing was due. */
  idleMs: number;
  /** On stop, how long attempts in flight may take to finish before their leases are given back. */
  drainMs: number;
  /**
   * Result batches written at once (default 1): one writer makes bigger batches, and more
   * deliveries a second, than two or four (docs/performance.md).
   */
  writers?: number;
  logger: Logger;
};

export type Runner = { done: Promise<void>; wake(): void };

/**
 * Claims due deliveries and attempts them, at most `concurrency` at a time. Stopping (the
 * signal) ends claiming; attempts in flight get `drainMs` to finish and be recorded, and any
 * still unfinished then are released (due again at once) so another worker takes them without
 * waiting out the lease.
 */
export function startDeliveryRunner(deps: Deps, signal: AbortSignal, opts: RunnerOptions): Runner {
  const leased = new Map<string, string>();
  const debug = opts.logger.isLevelEnabled('debug');
  const results = resultBatcher(deps, {
    maxBatch: Math.max(1, opts.claimBatch),
    delayMs: 5,
    parallel: opts.writers ?? 1,
  });
  const idle = wakeableSleep(signal);
  // Attempts sending (slot held until the answer is in), and all attempts not yet recorded.
  let sending = 0;
  let unfinished = 0;
  let allFinished: (() => void) | undefined;

  // One async function per attempt rather than a chain of then/finally: a handful fewer
  // promises and closures per delivery, which at thousands a second is garbage-collector time.
  const attempt = async (d: ClaimedDelivery): Promise<void> => {
    try {
      let sent;
      try {
        sent = await sendAttempt(deps, d);
      } finally {
        sending--;
        idle.wake();
      }
      const r = await results.record(sent);
      if (debug)
        opts.logger.debug(
          { deliveryId: r.deliveryId, attempt: r.attempt, next: r.decision.next, applied: r.applied },
          'attempt recorded',
        );
    } catch (err) {
      opts.logger.error({ err, deliveryId: d.id }, 'attempt failed to record; the lease will expire and it is retried');
    } finally {
      leased.delete(d.id);
      if (--unfinished === 0) allFinished?.();
      idle.wake();
    }
  };

  // Sleep until the next delivery falls due (a retry, a scheduled batch), or idleMs at most:
  // deliveries queued by other processes are found within idleMs.
  const untilNextDue = async (): Promise<number> => {
    const due = await deps.store.deliveries.nextDueAt().catch(() => null);
    if (!due) return opts.idleMs;
    const wait = due.getTime() - deps.clock.now().getTime();
    // Due already yet nothing claimed: another worker holds those rows; look again shortly.
    if (wait <= 0) return Math.min(opts.idleMs, 20);
    return Math.min(opts.idleMs, wait);
  };

  // An attempt holds a sending slot until its answer is in, then waits for its result to be
  // written. Only sending counts against `concurrency`: a slot freed by an answer is refilled
  // while the result batch is being written, so the connections never wait on the database.
  // Unrecorded results are bounded too (a slow database slows claiming rather than piling up).
  const loop = async () => {
    while (!signal.aborted) {
      const free = opts.concurrency - sending;
      const recording = unfinished - sending;
      // Claim in batches: with every slot busy, claiming each slot as it frees would make one
      // round trip per delivery. Wait until half a batch is free (or nothing is busy).
      if (
        free <= 0 ||
        recording >= opts.concurrency ||
        (sending > 0 && free < Math.max(1, Math.floor(Math.min(opts.claimBatch, opts.concurrency) / 2)))
      ) {
        // Every slot freed, answer received or result written wakes this sleep (no wake can
        // slip in between the check above and here: nothing awaits in between).
        await idle.sleep(opts.idleMs);
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
        leased.set(d.id, d.leaseToken);
        sending++;
        unfinished++;
        void attempt(d);
      }
      if (claimed.length === 0) await idle.sleep(await untilNextDue());
    }
    const drained =
      unfinished === 0 ||
      (await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), opts.drainMs).unref();
        allFinished = () => {
          clearTimeout(timer);
          resolve(true);
        };
      }));
    if (!drained) {
      const now = deps.clock.now();
      let released = 0;
      for (const [id, token] of leased) {
        if (await deps.store.deliveries.release(id, token, now).catch(() => false)) released++;
      }
      opts.logger.warn({ released }, 'stopped with attempts unfinished; their deliveries were released');
    }
  };

  return { done: loop(), wake: () => idle.wake() };
}
