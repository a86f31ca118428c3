import { describe, expect, it } from 'vitest';
import { rateLimiter } from '../../src/http/rate-limit.js';

/**
 * The per-process rate limiter (src/http/rate-limit.ts, docs/operations.md "Rate limits"): a
 * fixed window of a minute per key, and a bound on the keys it remembers, so callers from many
 * addresses (an IPv6 holder has billions of /64 blocks) cannot grow the process's memory.
 */

const refused = (f: () => void) => {
  try {
    f();
    return false;
  } catch (e) {
    expect(e).toMatchObject({ code: 'rate_limited' });
    return true;
  }
};

describe('rateLimiter', () => {
  it('refuses a key past its budget until its minute ends, other keys unaffected', () => {
    let t = 0;
    const limit = rateLimiter(3, () => t);
    for (let i = 0; i < 3; i++) expect(refused(() => limit('a'))).toBe(false);
    expect(refused(() => limit('a'))).toBe(true);
    expect(refused(() => limit('b'))).toBe(false);
    t = 59_999;
    expect(refused(() => limit('a'))).toBe(true);
    t = 60_000;
    expect(refused(() => limit('a'))).toBe(false);
  });

  it('remembers at most its bound of keys, however many call within a minute; the first counted are forgotten', () => {
    let t = 0;
    const limit = rateLimiter(2, () => t, 1_000);
    limit('first');
    limit('first');
    expect(refused(() => limit('first'))).toBe(true);
    for (let i = 0; i < 5_000; i++) {
      t = i; // all within one minute: no window has ended
      limit(`2001:db8:${i.toString(16)}::/64`);
      expect(limit.size()).toBeLessThanOrEqual(1_000);
    }
    expect(limit.size()).toBeGreaterThan(900); // a tenth forgotten at a time
    // The newest keys are still counted; the first, forgotten, has a budget again.
    expect(refused(() => limit('2001:db8:1387::/64'))).toBe(false);
    expect(refused(() => limit('2001:db8:1387::/64'))).toBe(true);
    expect(refused(() => limit('first'))).toBe(false);
  });

  it('forgets the oldest windows first: a key whose window starts anew counts as new', () => {
    let t = 0;
    const limit = rateLimiter(1, () => t, 3);
    t = 10_000;
    limit('a');
    t = 20_000;
    limit('b');
    limit('c');
    t = 60_001;
    limit.spend('b'); // the minute's sweep: no window has ended yet
    t = 70_001; // a's window has ended; it starts anew, behind b's and c's
    limit('a');
    limit('d'); // full: b's window, now the oldest, is forgotten
    expect(limit.size()).toBe(3);
    expect(refused(() => limit('a'))).toBe(true);
    expect(refused(() => limit('c'))).toBe(true);
    expect(refused(() => limit('d'))).toBe(true);
    expect(refused(() => limit('b'))).toBe(false);
  });
});
