import { randomBytes } from 'node:crypto';

export type IdPrefix =
  | 'end'
  | 'ans'
  | 'acc'
  | 'usr'
  | 'key'
  | 'poll'
  | 'sld'
  | 'rsp'
  | 'whk'
  | 'dlv'
  | 'att'
  | 'prt'
  | 'run'
  | 'alr'
  | 'eml'
  | 'bat'
  | 'dev'
  | 'rcv';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Random bytes are drawn 4 KiB at a time: one call to the CSPRNG serves ~200 ids, which
// matters on the delivery path (an attempt id per attempt). The bytes are as random either way.
let pool = Buffer.alloc(0);
let offset = 0;

function randomByte(): number {
  if (offset >= pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  return pool[offset++]!;
}

export function randomBase62(length: number): string {
  // Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

function timePart(ms: number): string {
  let t = '';
  let n = Math.floor(ms);
  for (let i = 0; i < 8; i++) {
    t = BASE62[n % 62] + t;
    n = Math.floor(n / 62);
  }
  return t;
}

/** The base62 string one greater (wrapping to all zeros past the largest). */
function increment(s: string): string {
  let i = s.length - 1;
  while (i >= 0 && s[i] === 'z') i--;
  if (i < 0) return '0'.repeat(s.length);
  return s.slice(0, i) + BASE62[BASE62.indexOf(s[i]!) + 1] + '0'.repeat(s.length - i - 1);
}

/** What an id this service makes looks like: its prefix, then 22 base62 characters. */
export const idPattern = (prefix: IdPrefix): string => `^${prefix}_[0-9A-Za-z]{22}$`;

let lastMs = -1;
let lastTail = '';

/**
 * Ids sort by creation time (8 chars of millisecond time, base62 fixed width) then by 14
 * chars that start at random in each millisecond and count up within it, so cursor paging can
 * order by id alone and the ids one process makes in one millisecond sort in the order made.
 */
export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  const ms = Math.floor(nowMs);
  if (ms === lastMs) lastTail = increment(lastTail);
  else {
    lastMs = ms;
    lastTail = randomBase62(14);
  }
  return `${prefix}_${timePart(ms)}${lastTail}`;
}

/**
 * An id that sorts by creation time to the millisecond, with 14 random characters (83 bits)
 * after it: for ids that are a capability, which must not be guessed from one made just before.
 */
export function newRandomId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  return `${prefix}_${timePart(Math.floor(nowMs))}${randomBase62(14)}`;
}

/**
 * An id that tells nothing, not even when it was made: a user's, which another account learns
 * when it adds them by email (POST /keys), must not say whether they were a user already, or since when.
 */
export function newOpaqueId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}

/**
 * idsMadeBefore where ids can tell that time (from 1970 until their 8 characters of time run
 * out, in the year 8888); undefined before or after, where no id bounds a time.
 */
export const idBoundAt = (prefix: IdPrefix, ms: number): string | undefined =>
  ms >= 0 && ms < 62 ** 8 ? idsMadeBefore(prefix, ms) : undefined;

/** Every id of this kind made before `ms` sorts below this string, and none made at or after it does. */
export function idsMadeBefore(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${timePart(ms)}`;
}

export const ID_PATTERN: Record<IdPrefix, RegExp> = Object.fromEntries(
  (
    [
      'end',
      'ans',
      'acc',
      'usr',
      'key',
      'poll',
      'sld',
      'rsp',
      'whk',
      'dlv',
      'att',
      'prt',
      'run',
      'alr',
      'eml',
      'bat',
      'dev',
      'rcv',
    ] as IdPrefix[]
  ).map((p) => [p, new RegExp(`^${p}_[0-9A-Za-z]{22}$`)]),
) as Record<IdPrefix, RegExp>;
