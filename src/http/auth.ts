import type { FastifyRequest } from 'fastify';
import { authenticate } from '../app/access.js';
import type { Caller, Deps } from '../app/ports/index.js';
import { DomainError } from '../domain/errors.js';
import { inFlight, type InFlight, type Release } from './in-flight.js';
import { addressBucket, rateLimiter, type RateLimiter } from './rate-limit.js';

export type AuthMode = 'required' | 'optional' | 'none';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
    /** The size of the JSON body as received, in bytes (0 with none). */
    bodyBytes: number;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
  }
}

export function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : h.trim() || undefined;
}

/**
 * Runs before the body is parsed, so an unauthenticated caller learns nothing from validation.
 * Rate limits count per key, and per address for calls without one (an IPv6 address by its
 * /64); a public route's keyed calls count per address too, with 16 times the budget.
 * Failed authentications count per address, and per /64 with 16 times the budget, and an
 * address past that budget is refused before its key is looked up, so guessing keys costs no
 * storage work. `wideLimit` keeps the budgets of 16 times. With `lookups`, keys sent at once
 * from one address are looked up a few at a time (keyLookups).
 */
export function authHook(
  deps: Pick<Deps, 'store' | 'clock'>,
  limit: RateLimiter = rateLimiter(0),
  wideLimit: RateLimiter = rateLimiter(0),
  lookups?: KeyLookups,
) {
  return async (req: FastifyRequest) => {
    const mode = req.routeOptions.config?.auth ?? 'required';
    if (mode === 'none') return;
    const key = bearer(req);
    if (mode === 'optional' && !key) {
      limit(`ip:${addressBucket(req.ip)}`);
      return;
    }
    // Per address, since a spent budget refuses good keys too and a /64 may be shared by a
    // host's customers; and per /64 with 16 times the budget (wideLimit), so that addresses
    // rotated within one block still run out.
    const failures = `auth-failed:${req.ip}`;
    const blockFailures = `auth-failed:${addressBucket(req.ip)}`;
    const withinBudget = () => {
      wideLimit.check(blockFailures);
      limit.check(failures);
    };
    withinBudget();
    // Counted once a lookup fails, not reserved before it: behind a proxy every client shares
    // one address, and good keys in flight must not spend its budget. Guesses sent at once pass
    // the budget by as many as are looked up at once: a few per address (keyLookups), the rest
    // waiting their turn and then meeting the budget as it stands.
    const turn = lookups && (await takeTurn(lookups, req.ip, addressBucket(req.ip)));
    try {
      if (turn) withinBudget();
      req.caller = await authenticate(deps, key);
    } catch (err) {
      if (err instanceof DomainError && err.code === 'unauthenticated') {
        limit.spend(failures);
        wideLimit.spend(blockFailures);
      }
      throw err;
    } finally {
      turn?.();
    }
    // A public route's keyed calls also count per address, with 16 times the budget: a backend
    // answering an apiOnly poll for many respondents sends them from one host, but an account's
    // owner can make many keys, each no budget of its own against another account's public poll.
    // Checked before the key counts, so that a call refused by its address spends nothing.
    const keyed = mode === 'optional' ? `keyed:${addressBucket(req.ip)}` : undefined;
    if (keyed) wideLimit.check(keyed);
    limit(`key:${req.caller.keyId}`);
    if (keyed) wideLimit(keyed);
  };
}

/** Keys looked up at once per address, and per IPv6 /64 (16 times as many). */
export const LOOKUPS_PER_ADDRESS = 32;

export type KeyLookups = { address: InFlight; block: InFlight };

/**
 * Turns to look keys up: LOOKUPS_PER_ADDRESS at once per address, 16 times that per /64, enough
 * for a proxy's clients (a lookup takes a millisecond or so); a request past them waits, and
 * past 1,024 waiting per address (16,384 per /64) is refused with rate_limited.
 */
export const keyLookups = (): KeyLookups => ({
  address: inFlight(LOOKUPS_PER_ADDRESS, 1_024),
  block: inFlight(LOOKUPS_PER_ADDRESS * 16, 16_384),
});

/** The address's turn first, so that requests waiting on it hold none of their /64's turns. */
async function takeTurn(lookups: KeyLookups, address: string, block: string): Promise<Release> {
  const mine = await lookups.address.take(address);
  try {
    const wide = await lookups.block.take(block);
    return () => {
      wide();
      mine();
    };
  } catch (e) {
    mine();
    throw e;
  }
}

/** The caller of a route whose auth is required; the hook has already rejected everyone else. */
export function callerOf(req: FastifyRequest): Caller {
  if (!req.caller) throw new Error('route needs auth: required');
  return req.caller;
}
