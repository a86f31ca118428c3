import { describe, expect, it } from 'vitest';
import { afterLeaveOut, leaveOutCursor, RESWEEP_MS } from '../../src/worker/leave-out-cursor.js';

describe('leaveOutCursor', () => {
  it('moves to the end of a full window, and holds while the same accounts and hosts are left out, in any order', () => {
    const c = leaveOutCursor();
    expect(c.from({ accounts: ['a', 'b'], hosts: [] }, 0).after).toBeUndefined();
    expect(c.passed('t1', 0)).toBe(true);
    expect(c.from({ accounts: ['b', 'a'], hosts: [] }, 10).after).toBe('t1');
    expect(c.passed('t2', 10)).toBe(true);
    expect(c.from({ accounts: ['a', 'b'], hosts: [] }, 20)).toEqual({ accounts: ['a', 'b'], hosts: [], after: 't2' });
  });

  it('starts from the first due once another set is left out', () => {
    const c = leaveOutCursor();
    c.from({ accounts: [], hosts: ['h a'] }, 0);
    c.passed('t1', 0);
    expect(c.from({ accounts: [], hosts: ['h a'] }, 1).after).toBe('t1');
    expect(c.from({ accounts: [], hosts: ['h a', 'g a'] }, 2).after).toBeUndefined();
    expect(c.from({ accounts: ['h a'], hosts: [] }, 3).after).toBeUndefined();
  });

  it('stays put when the window was not full, or ended where it began', () => {
    const c = leaveOutCursor();
    c.from({ accounts: ['a'], hosts: [] }, 0);
    expect(c.passed(null, 0)).toBe(false);
    expect(c.from({ accounts: ['a'], hosts: [] }, 1).after).toBeUndefined();
    expect(c.passed('t1', 1)).toBe(true);
    expect(c.passed('t1', 2)).toBe(false);
    expect(c.from({ accounts: ['a'], hosts: [] }, 3).after).toBe('t1');
  });

  it('goes back to the first due once it has rested RESWEEP_MS, so what committed behind it is read', () => {
    const c = leaveOutCursor();
    const left = { accounts: ['a'], hosts: [] };
    c.from(left, 1_000);
    c.passed('t1', 1_000);
    expect(c.from(left, 1_000 + RESWEEP_MS - 1).after).toBe('t1');
    expect(c.from(left, 1_000 + RESWEEP_MS).after).toBeUndefined();
    // Not while it walks: each move starts the rest again.
    c.passed('t1', 7_000);
    c.passed('t2', 7_000 + RESWEEP_MS - 1);
    expect(c.from(left, 7_000 + RESWEEP_MS + 10).after).toBe('t2');
  });

  it('rests twenty times as long as its last walk took, when that is longer', () => {
    const c = leaveOutCursor();
    const left = { accounts: ['a'], hosts: [] };
    c.from(left, 0);
    // A walk of 1 s past a long backlog: it rests 20 s before walking it again.
    c.passed('t1', 0);
    c.passed('t2', 500);
    c.passed('t3', 1_000);
    expect(c.from(left, 1_000 + 19_999).after).toBe('t3');
    expect(c.from(left, 1_000 + 20_000).after).toBeUndefined();
  });
});

describe('afterLeaveOut', () => {
  const bounds = { minMs: 50, maxMs: 3_200 };

  it('doubles the wait after a claim that found nothing, up to the most', () => {
    const nothing = { want: 16, leased: 0, moved: false };
    expect(afterLeaveOut(nothing, 50, bounds)).toEqual({ waitMs: 100, foundNothing: true, nextInMs: 100 });
    expect(afterLeaveOut(nothing, 3_200, bounds).waitMs).toBe(3_200);
  });

  it("counts a full claim of a paused webhook's deliveries, parked again, as found: the next comes at once", () => {
    // None returned to send, all 16 leased: more may be due past them.
    const parked = { want: 16, leased: 16, moved: false };
    expect(afterLeaveOut(parked, 800, bounds)).toEqual({ waitMs: 50, foundNothing: false, nextInMs: 0 });
  });

  it('waits the first step after a claim that leased fewer than it asked, and none after one that moved the start', () => {
    expect(afterLeaveOut({ want: 16, leased: 3, moved: false }, 800, bounds)).toEqual({
      waitMs: 50,
      foundNothing: false,
      nextInMs: 50,
    });
    expect(afterLeaveOut({ want: 16, leased: 0, moved: true }, 800, bounds).nextInMs).toBe(0);
  });
});
