import type { LeaveOut } from '../app/ports/delivery.js';
import type { LeftOut } from './account-share.js';

/**
 * How long the start rests where a walk past a left-out backlog left it before it goes back to
 * the first due: at least RESWEEP_MS, and RESWEEP_RATIO times as long as that walk took, so
 * walking again costs at most a twentieth of the claims' time however long the backlog. A
 * delivery passed over is read by then (below).
 */
export const RESWEEP_MS = 5_000;
const RESWEEP_RATIO = 20;

/**
 * Where a claim that leaves accounts or hosts out starts reading the due deliveries. Such a
 * claim reads a window of 2,048 due (delivery-queue.ts); with more than that of the left-out
 * ones due ahead of everyone else's, every window would be theirs alone. A claim that leased
 * fewer than it asked from a full window tried every row up to the due time it answers (the
 * claim's `windowEnd`, from the same snapshot), the rest being left out or locked by another
 * claim, so the next one starts there, and so on past the backlog.
 * - The start holds while the same accounts and hosts are left out: the rows it passed were
 *   left out for that set, and no other.
 * - A delivery can commit due behind the start: its transaction read the clock before a claim
 *   whose window passed that time, and committed after it (or its process's clock runs behind).
 *   Ordinary claims, which read from the first due, take it after the left-out ones due ahead
 *   of it; claims that leave some out, once the start goes back to the first due (RESWEEP_MS).
 * - More than a window's worth due at one instant cannot be passed: the next window starts at
 *   that instant again. The statements that queue many at once spread them: a resumed webhook's
 *   backlog a microsecond apart (delivery-control.ts), a recover's 1,000 to a millisecond
 *   (run-recoveries.ts).
 */
export function leaveOutCursor() {
  let set = '';
  let after: string | undefined;
  // When (in ms of the clock passed in) the start last left the first due, and last moved.
  let leftAt = 0;
  let movedAt = 0;
  return {
    /** What a claim made at `nowMs` leaves out, with where it starts reading. */
    from(left: LeftOut, nowMs: number): LeaveOut {
      const key = `${[...left.accounts].sort().join(',')}|${[...left.hosts].sort().join(',')}`;
      const rest = Math.max(RESWEEP_MS, RESWEEP_RATIO * (movedAt - leftAt));
      if (key !== set || (after !== undefined && nowMs - movedAt >= rest)) {
        set = key;
        after = undefined;
      }
      return { ...left, after };
    },
    /**
     * After such a claim, made at `nowMs`, leased fewer than it asked: its window's end, null
     * when the window was not full. True when the start moved (so the next claim may come at once).
     */
    passed(windowEnd: string | null, nowMs: number): boolean {
      if (windowEnd === null || windowEnd === after) return false;
      if (after === undefined) leftAt = nowMs;
      after = windowEnd;
      movedAt = nowMs;
      return true;
    },
  };
}

/**
 * What follows a claim that left some out. Leasing anything, a paused webhook's deliveries
 * parked again included, or moving the start means more may be due past what it read: the
 * wait starts over at `minMs`, and the next claim comes at once unless this one leased fewer
 * than it asked without moving the start. Finding nothing doubles the wait, up to `maxMs`.
 */
export function afterLeaveOut(
  claim: { want: number; leased: number; moved: boolean },
  waitMs: number,
  bounds: { minMs: number; maxMs: number },
): { waitMs: number; foundNothing: boolean; nextInMs: number } {
  const found = claim.leased > 0 || claim.moved;
  const next = found ? bounds.minMs : Math.min(2 * waitMs, bounds.maxMs);
  return {
    waitMs: next,
    foundNothing: !found,
    nextInMs: claim.leased < claim.want && !claim.moved ? next : 0,
  };
}
