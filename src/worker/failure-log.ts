import type { Logger } from 'pino';

/** A failure repeated during an outage is logged at most once in this long, per key. */
export const FAILURE_LOG_EVERY_MS = 30_000;

type State = { lastLogged: number; suppressed: number; streak?: { since: number; failures: number } };

/**
 * Error lines for work a loop retries (a claim, a result write, a scheduler task): during an
 * outage every turn fails the same way, so the first failure is logged and then at most one line
 * every 30 s per key, its `suppressedSinceLast` counting the failures not logged. With
 * `recovered`, the first success after failures says so once, with how many and for how long,
 * and the next failure is logged at once, so that the log never ends on that line while the
 * work fails (its loop retries once a second, which bounds such lines).
 */
export function failureLog(
  logger: Logger,
  msg: string,
  opts: { recovered?: string; now?: () => number; everyMs?: number } = {},
) {
  const now = opts.now ?? Date.now;
  const everyMs = opts.everyMs ?? FAILURE_LOG_EVERY_MS;
  const states = new Map<string, State>();
  // Keys failing now: a success while none is (the usual case, once per delivery) costs nothing.
  let streaks = 0;
  return {
    failed(err: unknown, fields: Record<string, unknown> = {}, key = ''): void {
      const t = now();
      let s = states.get(key);
      if (!s) states.set(key, (s = { lastLogged: -Infinity, suppressed: 0 }));
      if (!s.streak) {
        s.streak = { since: t, failures: 0 };
        streaks++;
      }
      s.streak.failures++;
      if (t - s.lastLogged < everyMs) {
        s.suppressed++;
        return;
      }
      logger.error({ err, ...fields, suppressedSinceLast: s.suppressed }, msg);
      s.lastLogged = t;
      s.suppressed = 0;
    },
    succeeded(fields?: Record<string, unknown>, key = ''): void {
      if (!streaks) return;
      const s = states.get(key);
      const streak = s?.streak;
      if (!streak) return;
      s.streak = undefined;
      streaks--;
      if (!opts.recovered) return;
      s.lastLogged = -Infinity;
      s.suppressed = 0;
      logger.info({ ...fields, failures: streak.failures, ms: now() - streak.since }, opts.recovered);
    },
  };
}
