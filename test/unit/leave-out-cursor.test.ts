import { describe, expect, it } from 'vitest';
import { leaveOutCursor, RESWEEP_MS } from '../../src/worker/leave-out-cursor.js';

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
