import type { Logger } from 'pino';
import { claimDeliveries } from '../app/delivery/claim-deliveries.js';
import type { Handoff } from '../app/delivery/flush-batches.js';
import type { AttemptReport } from '../app/delivery/record-attempts.js';
import { sendAttempt, type SentAttempt } from '../app/delivery/send-attempt.js';
import type { ClaimedDelivery } from '../domain/delivery.js';
import { resultBatcher } from './result-batcher.js';
import type { Deps } from '../app/ports/index.js';
import type { AttemptTally, Metrics } from '../app/ports/metrics.js';
import { wakeableSleep } from './sleep.js';
import { endedLog, type Ended } from './warn-ended.js';
import { accountShares, claimPlan, covers, leavesOut, type LeftOut } from './account-share.js';
import { leftOutWarner } from './warn-left-out.js';
import { unsentGiver } from './give-back-unsent.js';
import { afterLeaveOut, leaveOutCursor } from './leave-out-cursor.js';
import { failureLog } from './failure-log.js';
import { unclaimer } from './unclaim.js';
import { unpreparedGiver } from './unprepared.js';

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
  /**
   * After a claim that found fewer due deliveries than it asked for, the next claim waits at
   * least this long (default 10 ms), even when woken: under a trickle of new deliveries each
   * claim then takes several, instead of one claim (and round trip) per delivery.
   */
  claimGapMs?: number;
  /** On stop, how long attempts in flight may take to finish before their leases are given back. */
  drainMs: number;
  /**
   * Result batches written at once (default 1): one writer makes bigger batches, and more
   * deliveries a second, than two or four (docs/performance.md).
   */
  writers?: number;
  logger: Logger;
  metrics?: Metrics;
  /** Claims start once this settles (the worker's share of endpoint connections is known). */
  startAfter?: Promise<unknown>;
};

/** The runner also takes deliveries leased to it elsewhere in the process (Handoff: the batch flush). */
export type Runner = Handoff & { done: Promise<void>; wake(): void };

// A claim that leaves accounts or hosts out (account-share.ts) comes only once one has been at
// or near its share this long: a busy host whose answers come in frees slots sooner.
// After such a claim found nothing, the wait doubles, up to 3.2 s, until a claim finds
// something: each reads past the left-out ones' due deliveries, which with one account alone is
// all of them. New deliveries (wake), or leaving out less, bring the next within LEAVE_OUT_MS.
const LEAVE_OUT_MS = 50;
const LEAVE_OUT_BOUNDS = { minMs: LEAVE_OUT_MS, maxMs: 3_200 };
// As many attempts as the sender keeps connections to one origin by default (h1-sender.ts).
const START_SLICE = 32;
// setImmediate runs after the event loop's poll phase: the sockets that became readable are served first.
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Claims due deliveries and attempts them, at most `concurrency` at a time. Stopping (the
 * signal) ends claiming; attempts in flight get `drainMs` to finish and be recorded, and any
 * still unfinished then are released (due again at once) so another worker takes them without
 * waiting out the lease.
 */
export function startDeliveryRunner(deps: Deps, signal: AbortSignal, opts: RunnerOptions): Runner {
  const leased = new Map<string, string>();
  const debug = opts.logger.isLevelEnabled('debug');
  const warnings = new Set<Promise<void>>();
  const warnEnded = endedLog(deps, opts.logger);
  const results = resultBatcher(deps, {
    maxBatch: Math.max(1, opts.claimBatch),
    // Recording later delays no delivery (the answer is in), and a bigger batch is fewer
    // statements: each of four workers answers a quarter of the rate, and at 20 ms its batches
    // held about 70 results against 190 at 50 ms (docs/performance.md, "Several workers").
    delayMs: 50,
    parallel: opts.writers ?? 1,
    onRecorded: (items, reports) => {
      const ended = report(items, reports);
      if (!ended) return;
      const w = warnEnded(ended).catch(() => {});
      warnings.add(w);
      void w.finally(() => warnings.delete(w));
    },
  });
  // Two reasons to sleep: every slot busy (an answer or a written result wakes it), or nothing
  // due (new work wakes it: wake(), from the API, the scheduler or a notification).
  const slots = wakeableSleep(signal);
  const work = wakeableSleep(signal);
  const gapMs = opts.claimGapMs ?? 10;
  // Attempts sending (slot held until the answer is in), and all attempts not yet recorded.
  let sending = 0;
  let unfinished = 0;
  let allFinished: (() => void) | undefined;
  // Handed-over deliveries (Handoff): slots promised to a flush under way, and what flushes
  // handed over that waits for a slot. While a claim runs, its `want` is kept free (claiming):
  // nothing else starts into it, so attempts in flight never pass `concurrency`.
  let promised = 0;
  const waiting: ClaimedDelivery[] = [];
  let claiming = 0;
  // Which accounts and hosts hold the sending slots: none may take them all (account-share.ts).
  const shares = accountShares(opts.concurrency, { memoryMs: deps.delivery.deliveryTimeoutMs });
  let leaveOutAt: number | undefined;
  let leaveOutWait = LEAVE_OUT_MS;
  let foundNothing: LeftOut | undefined;
  // New deliveries were queued since the loop last looked (wake).
  let newWork = false;
  const warnLeftOut = leftOutWarner(opts.logger, opts.concurrency, shares.share);
  const giveBack = unsentGiver(deps, opts.logger, opts.metrics);
  const cursor = leaveOutCursor();
  const claimFailures = failureLog(opts.logger, 'claiming deliveries failed; retrying every second', {
    recovered: 'claiming deliveries again',
  });
  const recordFailures = failureLog(
    opts.logger,
    'attempt failed to record, or to be given back unsent; its lease will expire and it is retried',
  );
  const unprepared = unpreparedGiver(deps, opts.logger, opts.metrics);

  // One async function per attempt rather than a chain of then/finally: a handful fewer
  // promises and closures per delivery, which at thousands a second is garbage-collector time.
  const attempt = async (d: ClaimedDelivery): Promise<void> => {
    shares.started(d);
    try {
      let sent;
      try {
        sent = await sendAttempt(deps, d);
      } catch (err) {
        // Thrown before anything was written (the sender settles every attempt it writes).
        sent = err instanceof Error ? err : new Error(String(err));
      } finally {
        sending--;
        shares.answered(d);
        slots.wake();
        if (waiting.length) void pump();
      }
      if (sent instanceof Error) return await unprepared.giveBack(d, sent, signal.aborted);
      unprepared.sent(d);
      if (sent.sent.unsent) return await giveBack(d, signal.aborted);
      const r = await results.record(sent);
      recordFailures.succeeded();
      if (debug)
        opts.logger.debug(
          { deliveryId: r.deliveryId, attempt: r.attempt, next: r.decision.next, applied: r.applied },
          'attempt recorded',
        );
    } catch (err) {
      recordFailures.failed(err, { deliveryId: d.id });
    } finally {
      // Its own lease only: a record that waited out the lease may find the delivery claimed again.
      if (leased.get(d.id) === d.leaseToken) leased.delete(d.id);
      if (--unfinished === 0) allFinished?.();
      slots.wake();
    }
  };

  // Counted once per batch written: a tally, not a metric update per attempt.
  const report = (items: readonly SentAttempt[], reports: readonly AttemptReport[]) => {
    const tally: AttemptTally = { delivered: 0, retry: 0, rejected: 0, given_up: 0, cancelled: 0, lease_lost: 0 };
    let ended: Ended[] | undefined;
    for (let i = 0; i < reports.length; i++) {
      const r = reports[i]!;
      if (!r.applied) {
        tally[r.cancelled ? 'cancelled' : 'lease_lost']++;
        continue;
      }
      const next = r.decision.next;
      tally[next]++;
      if (next === 'rejected' || next === 'given_up') (ended ??= []).push({ sent: items[i]!, status: next });
    }
    if (opts.metrics)
      opts.metrics.attemptsRecorded(
        tally,
        items.map((a) => a.sent.durationMs),
      );
    return ended;
  };

  // Sleep until the next delivery falls due (a retry, a scheduled batch), or idleMs at most:
  // deliveries queued by other processes are found within idleMs (at once, when they notify).
  // Due already: it fell due since the claim, or another worker's claim holds it; look again
  // after the gap.
  const untilNextDue = async (): Promise<number> => {
    const due = await deps.store.deliveries.nextDueAt().catch(() => null);
    if (!due) return opts.idleMs;
    return Math.max(gapMs, Math.min(opts.idleMs, due.getTime() - deps.clock.now().getTime()));
  };

  // An attempt holds a sending slot until its answer is in, then waits for its result to be
  // written. Only sending counts against `concurrency`: a slot freed by an answer is refilled
  // while the result batch is being written, so the connections never wait on the database.
  // Unrecorded results are bounded too (a slow database slows claiming rather than piling up).
  // Neither claims nor handed-over deliveries start before startAfter settles.
  let ready = !opts.startAfter;
  const loop = async () => {
    await opts.startAfter?.catch(() => {});
    ready = true;
    while (!signal.aborted) {
      const queued = waiting.length + promised;
      const free = opts.concurrency - sending - queued;
      const recording = unfinished - sending - queued;
      // Claim in batches: with every slot busy, claiming each slot as it frees would make one
      // round trip per delivery. Wait until half a batch is free (or nothing is busy), and leave
      // the reserve free. Otherwise, with an account or host at its share or, the worker
      // being that full, near it, claim without it, the reserve included: those slots are there
      // for other deliveries, which should not wait for its attempts to end (claimPlan).
      const half = Math.max(1, Math.floor(Math.min(opts.claimBatch, opts.concurrency) / 2));
      const { ordinary, exclude } = claimPlan(shares, { free, sending, half });
      const leaving = leavesOut(exclude);
      let want = 0;
      let sleepMs = opts.idleMs;
      if (!leaving) leaveOutAt = undefined;
      else if (newWork || (foundNothing && !covers(exclude, foundNothing))) {
        leaveOutWait = LEAVE_OUT_MS;
        foundNothing = undefined;
        if (leaveOutAt !== undefined) leaveOutAt = Math.min(leaveOutAt, Date.now() + LEAVE_OUT_MS);
      }
      newWork = false;
      if (free > 0 && recording < opts.concurrency) {
        // Nor may an ordinary claim take one host past its cap, whatever the due order.
        if (ordinary) want = Math.min(free - shares.reserve, opts.claimBatch, shares.headroom());
        else if (leaving) {
          leaveOutAt ??= Date.now() + leaveOutWait;
          if (leaveOutAt > Date.now()) sleepMs = leaveOutAt - Date.now();
          else if (free >= Math.min(half, Math.ceil(shares.reserve / 2)))
            want = Math.min(free, opts.claimBatch, shares.headroom(exclude));
        }
      }
      if (want <= 0) {
        // Every slot freed, answer received or result written wakes this sleep (no wake can
        // slip in between the check above and here: nothing awaits in between).
        await slots.sleep(sleepMs);
        continue;
      }
      claiming = want;
      let claimed;
      try {
        claimed = await claimDeliveries(deps, want, {
          exclude: leaving ? cursor.from(exclude, Date.now()) : exclude,
          onCancelled: (deliveryIds) =>
            opts.logger.warn({ deliveryIds }, 'cancelled deliveries whose webhook was deleted after they were queued'),
          onFailed: (err, what) =>
            opts.logger.error({ err }, `${what} failed after a claim; they are claimed again when their lease ends`),
          onGivenBack: (n) =>
            opts.logger.warn(
              { deliveries: n },
              'a failed claim had leased deliveries: given back uncounted, due at once',
            ),
        });
      } catch (err) {
        claiming = 0;
        void pump();
        claimFailures.failed(err);
        await work.sleep(Math.max(opts.idleMs, 1000));
        continue;
      }
      claimFailures.succeeded();
      // Counted before the first slice starts: between slices, freed slots go to what waits.
      sending += claimed.length;
      unfinished += claimed.length;
      claiming = 0;
      // A claim's attempts start a slice at a time, and the answers that came in meanwhile are
      // read between slices: started all at once, a claim of hundreds held this thread for
      // milliseconds while every connection's answer waited and the endpoints sat idle
      // (docs/performance.md, "The worker's loop"). Leased already, every one is started.
      for (let i = 0; i < claimed.length; i++) {
        const d = claimed[i]!;
        leased.set(d.id, d.leaseToken);
        void attempt(d);
        if ((i + 1) % START_SLICE === 0 && i + 1 < claimed.length) await nextTurn();
      }
      if (waiting.length) void pump();
      // A full claim may have left more due: claim again at once. Otherwise wait for new work,
      // and let the gap pass even if woken sooner.
      // Only when a claim without them found other deliveries: they were being held up.
      if (leaving && claimed.length) warnLeftOut(exclude);
      // A window full of the left-out ones' deliveries: the next claim reads past it, at once.
      if (leaving) {
        // Leased, not started: a paused webhook's deliveries, parked again, were leased too.
        const moved = claimed.leased < want && cursor.passed(claimed.windowEnd ?? null, Date.now());
        // Ordinary claims leave the back-off as it was: with one busy host, every claim that
        // leaves it out finds nothing, however much the ordinary claims between them find.
        const next = afterLeaveOut({ want, leased: claimed.leased, moved }, leaveOutWait, LEAVE_OUT_BOUNDS);
        leaveOutWait = next.waitMs;
        foundNothing = next.foundNothing ? exclude : undefined;
        leaveOutAt = Date.now() + next.nextInMs;
      } else if (claimed.length < want) {
        const since = Date.now();
        const idleFor = await untilNextDue();
        // A wake during the claim or the lookup found no sleep to cut short: it is not lost.
        if (!newWork) await work.sleep(idleFor);
        const left = gapMs - (Date.now() - since);
        if (left > 0 && !signal.aborted) await new Promise((r) => setTimeout(r, left));
      }
    }
    // Handed over but never started, or started and never written: due again at once,
    // uncounted, for another worker. What remains was written, and ends within its deadline.
    await releaseWaiting();
    deps.sender?.giveBackQueued?.();
    const stoppedAt = Date.now();
    const inFlight = unfinished;
    const drained =
      unfinished === 0 ||
      (await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), opts.drainMs).unref();
        allFinished = () => {
          clearTimeout(timer);
          resolve(true);
        };
      }));
    let released = 0;
    if (!drained) {
      const now = deps.clock.now();
      for (const [id, token] of leased) {
        if (await deps.store.deliveries.release(id, token, now).catch(() => false)) released++;
      }
      opts.logger.warn({ released }, 'stopped with attempts unfinished; their deliveries were released');
    }
    await Promise.all(warnings);
    opts.logger.info({ inFlight, released, ms: Date.now() - stoppedAt }, 'delivery runner drained');
  };

  const unclaim = unclaimer(deps, opts.logger);
  const releaseWaiting = async () => {
    const left = waiting.splice(0);
    if (!left.length) return;
    await unclaim(left);
    unfinished -= left.length;
    if (unfinished === 0) allFinished?.();
  };
  // Starts what waits while slots are free (none of a claim under way's), a slice at a time.
  let pumping = false;
  const pump = async () => {
    if (pumping) return;
    pumping = true;
    try {
      let started = 0;
      const overShare: ClaimedDelivery[] = [];
      while (waiting.length && sending + claiming < opts.concurrency && !signal.aborted) {
        const d = waiting.shift()!;
        // Handed over while its account or host is at its share: due again at once, for a
        // claim that takes it once they are below.
        if (!shares.mayStart(d)) {
          overShare.push(d);
          continue;
        }
        sending++;
        leased.set(d.id, d.leaseToken);
        void attempt(d);
        if (++started % START_SLICE === 0 && waiting.length) await nextTurn();
      }
      if (overShare.length) {
        // Not awaited: what is handed over meanwhile is pumped at once.
        void unclaim(overShare);
        unfinished -= overShare.length;
        if (unfinished === 0) allFinished?.();
      }
    } finally {
      pumping = false;
    }
  };
  // A flush's promise of slots, counted against `concurrency` with what is in flight and what
  // waits; not against a claim under way, whose deliveries go first (the flush's then wait for
  // a slot, within their lease).
  const reserve = (max: number) => {
    const queued = waiting.length + promised;
    if (!ready || signal.aborted || unfinished - sending - queued >= opts.concurrency) return 0;
    const n = Math.max(0, Math.min(max, opts.concurrency - sending - queued));
    promised += n;
    unfinished += n;
    return n;
  };
  // Once stopping, the leases are given back instead (due again at once, uncounted).
  const start = async (claimed: readonly ClaimedDelivery[], unused: number) => {
    promised -= claimed.length + unused;
    unfinished -= unused;
    if (signal.aborted) {
      await unclaim(claimed);
      unfinished -= claimed.length;
    } else waiting.push(...claimed);
    if (unfinished === 0) allFinished?.();
    slots.wake();
    await pump();
  };

  const wake = () => {
    newWork = true;
    work.wake();
    // A wait for a claim that leaves some out is cut short too (above).
    if (leaveOutAt !== undefined) slots.wake();
  };
  return { done: loop(), wake, reserve, start };
}
