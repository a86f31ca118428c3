import type { Schedule } from './poll.js';

/**
 * Whether a poll's schedule has it open at `now`: an immediate (or absent) schedule always; a
 * scheduled one from `startAt` (included) until `endAt` (excluded), either end open when unset.
 * Outside that window it takes no answers, as if hidden. Null when open, else why not.
 */
export function closedBySchedule(schedule: Schedule | null | undefined, now: Date): string | null {
  if (!schedule || schedule.type !== 'scheduled') return null;
  const t = now.getTime();
  if (schedule.startAt && t < Date.parse(schedule.startAt)) return `it opens at ${schedule.startAt}`;
  if (schedule.endAt && t >= Date.parse(schedule.endAt)) return `it closed at ${schedule.endAt}`;
  return null;
}
