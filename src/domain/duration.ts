const UNITS: readonly [ms: number, one: string, many: string][] = [
  [86_400_000, 'day', 'days'],
  [3_600_000, 'hour', 'hours'],
  [60_000, 'minute', 'minutes'],
  [1_000, 'second', 'seconds'],
  [1, 'millisecond', 'milliseconds'],
];

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * A duration in words, as an email states a configured time: its largest whole unit (days at
 * most, so a week reads "7 days"), and the next unit down when it is not zero. Anything finer
 * left over is dropped and the words start with "about".
 * 86_400_000 → "1 day", 90_000 → "1 minute and 30 seconds", 93_784_000 → "about 1 day and 2 hours".
 */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`not a duration: ${ms}`);
  const whole = Math.round(ms);
  if (whole === 0) return '0 seconds';
  const i = UNITS.findIndex(([size]) => whole >= size);
  const [size, one, many] = UNITS[i]!;
  const first = Math.floor(whole / size);
  let rest = whole - first * size;
  const words = [count(first, one, many)];
  const next = UNITS[i + 1];
  if (next) {
    const second = Math.floor(rest / next[0]);
    if (second > 0) words.push(count(second, next[1], next[2]));
    rest -= second * next[0];
  }
  return (rest > 0 ? 'about ' : '') + words.join(' and ');
}
