import type { LeaveOut } from '../app/ports/delivery.js';
import type { LeftOut } from './account-share.js';

/**
 * Where a claim that leaves accounts or hosts out starts reading the due deliveries. Such a
 * claim reads a window of 2,048 due (delivery-queue.ts); with more than that of the left-out
 * ones due ahead of everyone else's, every window would be theirs alone. A claim that leased
 * fewer than it asked from a full window found every row of it left out (or locked by another
 * claim), so the next one starts at the last due time that window read (the claim's
 * `windowEnd`, from the same snapshot), and so on past the backlog.
 * - The start holds while the same accounts and hosts are left out: the rows it passed were
 *   left out for that set, and no other.
 * - A delivery queued, released or given back later falls due later than the start, except
 *   one due at once from a process whose clock runs behind: ordinary claims, which read from
 *   the first due, take it, after the left-out ones due ahead of it.
 * - More than a window's worth due at one instant cannot be passed: the next window starts at
 *   that instant again. The statements that queue many at once spread them: a resumed webhook's
 *   backlog a microsecond apart (delivery-control.ts), a recover's 1,000 to a millisecond
 *   (run-recoveries.ts).
 */
export function leaveOutCursor() {
  let set = '';
  let after: string | undefined;
  return {
    /** What a claim leaves out, with where it starts reading. */
    from(left: LeftOut): LeaveOut {
      const key = `${[...left.accounts].sort().join(',')}|${[...left.hosts].sort().join(',')}`;
      if (key !== set) {
        set = key;
        after = undefined;
      }
      return { ...left, after };
    },
    /**
     * After such a claim leased fewer than it asked: its window's end, null when the window was
     * not full. True when the start moved (so the next claim may come at once).
     */
    passed(windowEnd: string | null): boolean {
      if (windowEnd === null || windowEnd === after) return false;
      after = windowEnd;
      return true;
    },
  };
}
