import { describe, expect, it } from 'vitest';
import { isoTime } from '../../src/domain/iso-time.js';

const same = (ms: number) => expect(isoTime(new Date(ms))).toBe(new Date(ms).toISOString());

describe('isoTime', () => {
  it('writes what toISOString writes, within a minute and across minute, day and year boundaries', () => {
    const t = Date.UTC(2026, 11, 31, 23, 58, 59, 990);
    // Every 7 ms for four minutes: the cached minute is reused, then replaced, over a new year.
    for (let ms = t; ms < t + 240_000; ms += 7) same(ms);
    for (const ms of [t + 60_000, t - 1, t + 61_000, t - 60_000, t]) same(ms);
  });

  it('writes what toISOString writes for times far apart, before 1970 and outside years 0 to 9999', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    for (let i = 0; i < 20_000; i++) same(Math.floor((rand() - 0.5) * 2 * 8.64e15));
    for (const ms of [
      0,
      -1,
      -59_999,
      -60_000,
      -60_001,
      Date.UTC(-1, 0, 1),
      Date.UTC(10_000, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    ]) {
      same(ms);
      same(ms + 1);
    }
  });

  it('throws on an invalid date, as toISOString does', () => {
    expect(() => isoTime(new Date(NaN))).toThrow(RangeError);
  });
});
