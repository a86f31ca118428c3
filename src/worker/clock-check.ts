import type { SchedulerTask } from './scheduler.js';

/** Beyond this, two processes' due times and leases disagree enough to matter (docs/operations.md, "Clocks"). */
export const CLOCK_SKEW_TOLERANCE_MS = 1_000;

/**
 * Warns when this process's clock is off the database's by more than the tolerance, at most
 * once every ten minutes: due times, leases and batch windows are read from each process's own
 * clock, so a worker whose clock is off takes over deliveries another is still sending, or leaves
 * its own to be taken over, and retries fall due early or late (docs/operations.md, "Clocks"). A round trip too slow to tell is skipped.
 */
export function clockCheckTask(
  measure: () => Promise<{ skewMs: number; roundTripMs: number }>,
  now: () => number = Date.now,
): SchedulerTask {
  let checkedAt = -Infinity;
  let warnedAt = -Infinity;
  return {
    name: 'clock-check',
    async run(_deps, ctx) {
      if (now() - checkedAt < 60_000) return 0;
      checkedAt = now();
      const { skewMs, roundTripMs } = await measure();
      if (roundTripMs > CLOCK_SKEW_TOLERANCE_MS) return 0;
      if (Math.abs(skewMs) <= CLOCK_SKEW_TOLERANCE_MS || now() - warnedAt < 600_000) return 0;
      warnedAt = now();
      ctx?.logger.warn(
        { skewMs, roundTripMs, toleranceMs: CLOCK_SKEW_TOLERANCE_MS },
        "this process's clock is off the database's (skewMs > 0: ahead): synchronise the hosts' clocks (NTP); leases and due times are read from each process's clock, so deliveries may be sent twice and retries fall due early or late",
      );
      return 0;
    },
  };
}
