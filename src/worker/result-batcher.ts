import { recordAttempts, type AttemptReport } from '../app/delivery/record-attempts.js';
import { type SentAttempt } from '../app/delivery/send-attempt.js';
import type { Deps } from '../app/ports/index.js';
import { AbortedForAnotherError } from '../app/ports/aborted-for-another.js';

/**
 * Tries a batch's record again, twice at most, when PostgreSQL aborted it for another transaction
 * (a deadlock with a deletion's cancel, say): nothing of it was written, and its leases still
 * hold. Given up, its deliveries stay leased and are sent again once the leases run out.
 */
async function recordRetrying(deps: Deps, items: readonly SentAttempt[]): Promise<AttemptReport[]> {
  for (let tries = 1; ; tries++) {
    try {
      return await recordAttempts(deps, items);
    } catch (e) {
      if (tries >= 3 || !(e instanceof AbortedForAnotherError)) throw e;
    }
  }
}

/**
 * Gathers sent attempts and records them together: one transaction per batch instead of one
 * per delivery. A batch goes out when it is full, or `delayMs` after its first item, so a lone
 * attempt waits at most that long. Up to `parallel` batches are written at once (each touches
 * its own deliveries, so they do not wait on each other's row locks); more forms meanwhile.
 */
export function resultBatcher(
  deps: Deps,
  opts: {
    maxBatch: number;
    delayMs: number;
    parallel: number;
    /** Called once per batch written, with its attempts and their reports in the same order. */
    onRecorded?: (items: readonly SentAttempt[], reports: readonly AttemptReport[]) => void;
  },
) {
  type Waiting = { item: SentAttempt; resolve(r: AttemptReport): void; reject(e: unknown): void };
  const queue: Waiting[] = [];
  let writing = 0;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    if (writing >= opts.parallel || !queue.length) return;
    if (queue.length >= opts.maxBatch) void flush();
    else timer ??= setTimeout(() => void flush(), opts.delayMs);
  };

  const flush = async () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (writing >= opts.parallel || !queue.length) return;
    writing++;
    const batch = queue.splice(0, opts.maxBatch);
    try {
      const items = batch.map((w) => w.item);
      const reports = await recordRetrying(deps, items);
      batch.forEach((w, i) => w.resolve(reports[i]!));
      opts.onRecorded?.(items, reports);
    } catch (e) {
      batch.forEach((w) => w.reject(e));
    } finally {
      writing--;
      schedule();
    }
  };

  return {
    record(item: SentAttempt): Promise<AttemptReport> {
      return new Promise((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}
