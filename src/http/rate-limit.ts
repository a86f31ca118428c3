import { DomainError } from '../domain/errors.js';

/**
 * A per-key fixed-window counter, in this process. Each API process enforces its own share;
 * that bounds what one key (or one address, for public routes) can make one process do.
 */
export function rateLimiter(perMinute: number, now: () => number = Date.now) {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = now();
  return (key: string): void => {
    if (perMinute <= 0) return;
    const t = now();
    if (t - lastSweep > 60_000) {
      for (const [k, w] of windows) if (t - w.start >= 60_000) windows.delete(k);
      lastSweep = t;
    }
    let w = windows.get(key);
    if (!w || t - w.start >= 60_000) {
      w = { start: t, count: 0 };
      windows.set(key, w);
    }
    if (++w.count > perMinute) {
      const retryAfter = Math.max(1, Math.ceil((w.start + 60_000 - t) / 1000));
      throw Object.assign(new DomainError('rate_limited', `more than ${perMinute} requests a minute; try again in ${retryAfter} s`), { retryAfter });
    }
  };
}
