import { DomainError } from '../domain/errors.js';

/** Gives back a turn taken with `InFlight.take`. */
export type Release = () => void;

export type InFlight = {
  /**
   * Takes one of the key's turns, waiting for one to be given back when all are taken; past
   * `maxWaiting` waiting for the key, refuses at once with rate_limited.
   */
  take(key: string): Promise<Release>;
  /** Keys with a turn taken or waited for now. */
  size(): number;
};

/**
 * At most `perKey` turns at once per key, first come first served; a key with none taken nor
 * waited for is forgotten, so memory follows the keys in use now.
 */
export function inFlight(perKey: number, maxWaiting: number): InFlight {
  const keys = new Map<string, { taken: number; waiting: (() => void)[] }>();
  const releaser = (key: string): Release => {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const k = keys.get(key)!;
      const next = k.waiting.shift();
      // The turn passes straight to the first waiter, so none is taken in between.
      if (next) return next();
      if (--k.taken === 0) keys.delete(key);
    };
  };
  return {
    take(key) {
      let k = keys.get(key);
      if (!k) keys.set(key, (k = { taken: 0, waiting: [] }));
      if (k.taken < perKey) {
        k.taken++;
        return Promise.resolve(releaser(key));
      }
      if (k.waiting.length >= maxWaiting)
        return Promise.reject(
          Object.assign(new DomainError('rate_limited', 'too many requests under way from this address; try again'), {
            retryAfter: 1,
          }),
        );
      return new Promise((resolve) => k.waiting.push(() => resolve(releaser(key))));
    },
    size: () => keys.size,
  };
}
