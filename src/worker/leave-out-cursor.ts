import type { DeliveryRepo, LeaveOut } from '../app/ports/delivery.js';
import type { LeftOut } from './account-share.js';

/**
 * Where a claim that leaves accounts or hosts out starts reading the due deliveries. Such a
 * claim reads a window of the first 2,048 due (delivery-queue.ts); with more than that of the
 * left-out ones due ahead of everyone else's, every window would be theirs alone. After a claim
 * that found fewer than it asked, a full window was all left out (or locked by other workers),
 * so the next one starts at that window's last due time, and so on past the backlog.
 * - The start holds only while the same accounts and hosts are left out: those passed over
 *   were left out for that set, and no other.
 * - A delivery queued later falls due later than the start, except one due at once from a
 *   process whose clock runs behind; ordinary claims read from the first due, so one passed
 *   over waits for those, as it did before the window moved.
 * - More than a window's worth due at one instant cannot be passed: the next window starts at
 *   that instant again.
 */
export function leaveOutCursor(deliveries: Pick<DeliveryRepo, 'leaveOutWindowEnd'>) {
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
     * After such a claim found fewer than it asked: moves the start to its window's end, if
     * the window was full. True when it moved (so the next claim may come at once).
     */
    async passed(now: Date): Promise<boolean> {
      const end = await deliveries.leaveOutWindowEnd(now, after).catch(() => null);
      if (end === null || end === after) return false;
      after = end;
      return true;
    },
  };
}
