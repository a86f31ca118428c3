import { randomBytes } from 'node:crypto';

export type IdPrefix = 'end' | 'ans' | 'acc' | 'usr' | 'key' | 'poll' | 'sld' | 'rsp' | 'whk' | 'dlv' | 'att' | 'prt' | 'run' | 'alr' | 'eml' | 'bat';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomBase62(length: number): string {
  // Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/**
 * Ids sort by creation time (8 chars of millisecond time, base62 fixed width) then
 * by 14 random chars, so cursor paging can order by id alone.
 */
export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  let t = '';
  let n = Math.floor(nowMs);
  for (let i = 0; i < 8; i++) {
    t = BASE62[n % 62] + t;
    n = Math.floor(n / 62);
  }
  return `${prefix}_${t}${randomBase62(14)}`;
}

export const ID_PATTERN: Record<IdPrefix, RegExp> = Object.fromEntries(
  (['end', 'ans', 'acc', 'usr', 'key', 'poll', 'sld', 'rsp', 'whk', 'dlv', 'att', 'prt', 'run', 'alr', 'eml', 'bat'] as IdPrefix[]).map((p) => [
    p,
    new RegExp(`^${p}_[0-9A-Za-z]{22}$`),
  ]),
) as Record<IdPrefix, RegExp>;
