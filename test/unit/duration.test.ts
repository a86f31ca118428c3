import { describe, expect, it } from 'vitest';
import { humanDuration } from '../../src/domain/duration.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('humanDuration', () => {
  it('states whole units, singular and plural, up to days', () => {
    expect(humanDuration(DAY)).toBe('1 day');
    expect(humanDuration(7 * DAY)).toBe('7 days');
    expect(humanDuration(365 * DAY)).toBe('365 days');
    expect(humanDuration(10 * SECOND)).toBe('10 seconds');
    expect(humanDuration(SECOND)).toBe('1 second');
    expect(humanDuration(MINUTE)).toBe('1 minute');
    expect(humanDuration(2 * HOUR)).toBe('2 hours');
    expect(humanDuration(1)).toBe('1 millisecond');
    expect(humanDuration(250)).toBe('250 milliseconds');
    expect(humanDuration(0)).toBe('0 seconds');
  });

  it('adds the next unit down when it is not zero', () => {
    expect(humanDuration(90 * SECOND)).toBe('1 minute and 30 seconds');
    expect(humanDuration(36 * HOUR)).toBe('1 day and 12 hours');
    expect(humanDuration(1_500)).toBe('1 second and 500 milliseconds');
    expect(humanDuration(HOUR + MINUTE)).toBe('1 hour and 1 minute');
  });

  it('says "about" when finer units are left out', () => {
    expect(humanDuration(DAY + 2 * HOUR + 3 * MINUTE + 4 * SECOND)).toBe('about 1 day and 2 hours');
    expect(humanDuration(DAY + 30 * MINUTE)).toBe('about 1 day');
    expect(humanDuration(DAY + 1)).toBe('about 1 day');
    expect(humanDuration(2 * MINUTE + 5 * SECOND + 1)).toBe('about 2 minutes and 5 seconds');
  });

  it('rounds fractions of a millisecond and refuses what is not a duration', () => {
    expect(humanDuration(999.6)).toBe('1 second');
    expect(() => humanDuration(-1)).toThrow(RangeError);
    expect(() => humanDuration(Number.NaN)).toThrow(RangeError);
    expect(() => humanDuration(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
