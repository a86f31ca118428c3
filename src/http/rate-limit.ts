import { isIPv6 } from 'node:net';
import { DomainError } from '../domain/errors.js';

export type RateLimiter = {
  /** Counts one request against the key's budget; throws rate_limited once the key is past it. */
  (key: string): void;
  /** Throws rate_limited when the key has used its whole budget this window; counts nothing. */
  check(key: string): void;
  /** Counts one against the key's budget without refusing anything. */
  spend(key: string): void;
  /** The keys it remembers now. */
  size(): number;
};

/** Keys one limiter remembers at most: about 15 MB, whatever number of addresses calls it. */
export const MAX_RATE_LIMIT_KEYS = 100_000;

/**
 * A per-key fixed-window counter, in this process. Each API process enforces its own share;
 * that bounds what one key (or one address, for public routes and failed authentications) can
 * make one process do.
 */
export function rateLimiter(
  perMinute: number,
  now: () => number = Date.now,
  maxKeys: number = MAX_RATE_LIMIT_KEYS,
): RateLimiter {
  const windows = new Map<string, { start: number; count: number }>();
  let lastSweep = now();
  const sweep = (t: number) => {
    for (const [k, w] of windows) {
      if (t - w.start < 60_000) break; // the rest began later
      windows.delete(k);
    }
    lastSweep = t;
  };

  // A window that starts anew moves its key to the end: the map holds its keys in the order
  // their windows began, so the first keys are the oldest windows.
  const windowOf = (key: string, t: number) => {
    if (t - lastSweep > 60_000) sweep(t);
    let w = windows.get(key);
    if (!w || t - w.start >= 60_000) {
      if (w) windows.delete(key);
      else if (windows.size >= maxKeys) forgetOldest();
      w = { start: t, count: 0 };
      windows.set(key, w);
    }
    return w;
  };
  // Callers from more keys than the bound within a minute (IPv6 blocks are plenty): the oldest
  // windows are forgotten, a tenth at a time so that each walk past deleted entries serves many
  // new keys; a forgotten key starts a fresh budget, which costs no memory.
  const forgetOldest = () => {
    const keep = maxKeys - Math.max(1, Math.floor(maxKeys / 10));
    for (const k of windows.keys()) {
      if (windows.size <= keep) break;
      windows.delete(k);
    }
  };
  const refuse = (w: { start: number }, t: number): never => {
    const retryAfter = Math.max(1, Math.ceil((w.start + 60_000 - t) / 1000));
    throw Object.assign(
      new DomainError('rate_limited', `more than ${perMinute} requests a minute; try again in ${retryAfter} s`),
      { retryAfter },
    );
  };

  const limit = (key: string): void => {
    if (perMinute <= 0) return;
    const t = now();
    const w = windowOf(key, t);
    if (++w.count > perMinute) refuse(w, t);
  };
  const check = (key: string): void => {
    if (perMinute <= 0) return;
    const t = now();
    const w = windows.get(key);
    if (w && t - w.start < 60_000 && w.count >= perMinute) refuse(w, t);
  };
  const spend = (key: string): void => {
    if (perMinute <= 0) return;
    windowOf(key, now()).count++;
  };
  return Object.assign(limit, { check, spend, size: () => windows.size });
}

/**
 * The budget an address counts against: an IPv6 address by its /64, the block one subscriber
 * is given (each of its addresses would otherwise be a budget of its own); an IPv4-mapped
 * address as its IPv4 address.
 */
export function addressBucket(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail] = ip.split('%')[0]!.split('::');
  // An embedded IPv4 address fills the last two groups.
  const groups = (part: string) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const [h, t] = [groups(head), groups(tail ?? '')];
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return `${all
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
