import type { Logger } from 'pino';
import { checkAlerts, type UnrecordedAlert } from '../app/alerts/check-alerts.js';
import { DEFERRED_TRIES, retryDeferred, type DeferredOutcome } from '../app/alerts/retry-deferred.js';
import { flushSomeBatches, type Handoff } from '../app/delivery/flush-batches.js';
import { runRecoveries } from '../app/delivery/run-recoveries.js';
import type { Deps } from '../app/ports/index.js';
import type { Metrics } from '../app/ports/metrics.js';
import { loggableOrigin } from '../domain/url-policy.js';
import { wakeableSleep } from './sleep.js';
import { failureLog } from './failure-log.js';

/** What a task may report to besides its return value (the work it did). */
export type TaskContext = { logger: Logger; metrics?: Metrics; signal?: AbortSignal };

/**
 * The work a pass did, whether more is left (by default: whenever it did any), and how much of
 * it the runner must claim, which wakes it (by default: all of it).
 */
export type TaskPass = number | { done: number; more: boolean; claimable?: number };

export type SchedulerTask = {
  name: string;
  run(deps: Deps, ctx?: TaskContext): Promise<TaskPass>;
  /** When the task next has work, if it knows: the scheduler then wakes for it before the tick. */
  nextDueAt?(deps: Deps): Promise<Date | null>;
};

/**
 * Flushes up to `limit` batches a pass, and again at once only after a full pass: one that took
 * fewer took every batch due, and a second pass would find none (under a steady trickle, an
 * empty transaction after every flush). The loop then sleeps until the next window ends.
 * With `handoff` (the process's runner), the deliveries go to it leased, without a claim.
 */
export const batchFlushTask = (limit = 500, handoff?: Handoff): SchedulerTask => ({
  name: 'flush-batches',
  run: async (deps) => {
    const { deliveries, batches, leased } = await flushSomeBatches(deps, limit, handoff);
    return { done: deliveries, more: batches >= limit, claimable: deliveries - leased };
  },
  nextDueAt: (deps) => deps.store.batches.nextFlushAt(),
});

export const BATCH_FLUSH = batchFlushTask();

/**
 * Failure-alert emails, each one sent a warn line (an endpoint has been failing long enough to
 * email about). Those it sent but could not record yet are kept between its passes.
 */
export const alertCheck = (): SchedulerTask => {
  const unrecorded: UnrecordedAlert[] = [];
  return {
    name: 'check-alerts',
    // New emails first (and the ones sent but not recorded yet, recorded before anything is
    // sent); then those whose recipients the mail server deferred, whatever became of the first.
    run: async (deps, ctx) => {
      const first = checkAlerts(
        deps,
        50,
        ctx?.signal,
        (email) => {
          ctx?.metrics?.alertEmailSent(email.kind);
          ctx?.logger.warn(
            {
              endpoint: loggableOrigin(email.url),
              endpointId: email.endpointId,
              webhookId: email.webhookId,
              pollId: email.pollId,
              recipients: email.recipients,
              kind: email.kind,
              sequence: email.sequence,
            },
            'alert email sent',
          );
          logMissed(ctx?.logger, { endpointId: email.endpointId }, email.refused, email.deferred);
        },
        unrecorded,
      ).then(
        (n) => ({ n, error: undefined }),
        (error: unknown) => ({ n: 0, error }),
      );
      const { n, error } = await first;
      // The first pass's error is the one to log: a database that failed it fails this too.
      // A send that some deferred recipient took is counted as an email of its own (docs/operations.md, Metrics).
      const again = await retryDeferred(deps, 50, ctx?.signal, (o) => {
        if (o.sentTo.length) ctx?.metrics?.alertEmailSent('deferred');
        logDeferred(o, ctx?.logger);
      }).catch((e: unknown) => {
        if (error) return 0;
        throw e;
      });
      if (error) throw error;
      return n + again;
    },
  };
};

/**
 * The recipients a send of an alert email did not reach. One refused for good (an unknown
 * mailbox) never gets it: the account's notification recipients need correcting. One deferred
 * ("try again later") is sent it again after a pause.
 */
function logMissed(
  logger: Logger | undefined,
  at: object,
  refused: DeferredOutcome['refused'],
  deferred: DeferredOutcome['deferred'],
  also: object = {},
): void {
  if (refused.length)
    logger?.warn(
      { ...at, refused },
      'alert email refused for some recipients: correct the account notification recipients',
    );
  if (deferred.length)
    logger?.warn(
      { ...at, deferred, ...also },
      'alert email deferred by the mail server for some recipients: sent to them again after a pause',
    );
}

/** One send to an alert email's deferred recipients, as the operator reads it. */
function logDeferred(o: DeferredOutcome, logger: Logger | undefined): void {
  const at = { alertId: o.alertId, endpointId: o.endpointId };
  if (o.sentTo.length)
    logger?.info({ ...at, recipients: o.sentTo.length }, 'alert email sent to recipients deferred before');
  logMissed(logger, at, o.refused, o.retryAt ? o.deferred : [], { retryAt: o.retryAt?.toISOString(), err: o.error });
  if (o.deferred.length && !o.retryAt)
    logger?.error(
      { ...at, deferred: o.deferred, err: o.error },
      `alert email deferred by the mail server for ${DEFERRED_TRIES} tries: given up for these recipients; check the account notification recipients and the mail server`,
    );
}

/**
 * Resends what recovers listed, `batch` deliveries per transaction, and again at once after a
 * full batch, even one that resent nothing (its deliveries' webhook deleted, or delivered since).
 */
export const recoverTask = (batch: number): SchedulerTask => ({
  name: 'recover',
  run: async (deps) => {
    const { resent, taken } = await runRecoveries(deps, batch);
    return { done: resent, more: taken >= batch };
  },
});

/** Deletes finished deliveries (and their attempts) older than the retention period, a slice at a time. */
export function retentionTask(retentionMs: number): SchedulerTask {
  let lastRun = 0;
  return {
    name: 'retention',
    async run(deps) {
      const now = deps.clock.now();
      // Once a minute is plenty; a full slice means there is more, so go again at once.
      if (now.getTime() - lastRun < 60_000) return 0;
      const n = await deps.store.deliveries.purgeFinishedBefore(new Date(now.getTime() - retentionMs), 1000);
      if (n < 1000) lastRun = now.getTime();
      return n;
    },
  };
}

/**
 * Runs periodic tasks every tick. A task that did work runs again at once (there may be more),
 * unless its pass says none is left; a failing task is logged and tried at the next tick. Tasks
 * that know when their next work falls due (a batch's window ends) are woken for it then,
 * `minGapMs` after the last pass at the earliest, instead of at the next tick: a batch is
 * delivered within about `minGapMs` of its window's end rather than up to a tick late.
 */
export function startScheduler(
  deps: Deps,
  signal: AbortSignal,
  opts: {
    tickMs: number;
    tasks: SchedulerTask[];
    logger: Logger;
    metrics?: Metrics;
    onWork?: () => void;
    minGapMs?: number;
  },
): Promise<void> {
  const ctx: TaskContext = { logger: opts.logger, metrics: opts.metrics, signal };
  const idle = wakeableSleep(signal);
  // During an outage every tick fails the same way: the first is logged, then at most every 30 s.
  const failures = failureLog(opts.logger, 'scheduler task failed');
  const minGapMs = Math.min(opts.minGapMs ?? 20, opts.tickMs);
  const untilNextDue = async (): Promise<number> => {
    let wait = opts.tickMs;
    for (const task of opts.tasks) {
      const due = await task.nextDueAt?.(deps).catch(() => null);
      if (due) wait = Math.min(wait, due.getTime() - deps.clock.now().getTime());
    }
    return Math.max(minGapMs, wait);
  };
  return (async () => {
    while (!signal.aborted) {
      let again = false;
      for (const task of opts.tasks) {
        // A stop starts no further task: stop() waits for the one under way only.
        if (signal.aborted) break;
        try {
          const pass = await task.run(deps, ctx);
          const n = typeof pass === 'number' ? pass : pass.done;
          if (typeof pass === 'number' ? n > 0 : pass.more) again = true;
          if (n > 0) opts.logger.debug({ task: task.name, n }, 'scheduler task did work');
          if ((typeof pass === 'number' ? n : (pass.claimable ?? n)) > 0) opts.onWork?.();
        } catch (err) {
          failures.failed(err, { task: task.name }, task.name);
        }
      }
      if (!again) await idle.sleep(await untilNextDue());
    }
  })();
}
