import { describe, expect, it } from 'vitest';
import { leaveOutCursor } from '../../src/worker/leave-out-cursor.js';

describe('leaveOutCursor', () => {
  it('moves to the end of a full window, and holds while the same accounts and hosts are left out, in any order', () => {
    const c = leaveOutCursor();
    expect(c.from({ accounts: ['a', 'b'], hosts: [] }).after).toBeUndefined();
    expect(c.passed('t1')).toBe(true);
    expect(c.from({ accounts: ['b', 'a'], hosts: [] }).after).toBe('t1');
    expect(c.passed('t2')).toBe(true);
    expect(c.from({ accounts: ['a', 'b'], hosts: [] })).toEqual({ accounts: ['a', 'b'], hosts: [], after: 't2' });
  });

  it('starts from the first due once another set is left out', () => {
    const c = leaveOutCursor();
    c.from({ accounts: [], hosts: ['h a'] });
    c.passed('t1');
    expect(c.from({ accounts: [], hosts: ['h a'] }).after).toBe('t1');
    expect(c.from({ accounts: [], hosts: ['h a', 'g a'] }).after).toBeUndefined();
    expect(c.from({ accounts: ['h a'], hosts: [] }).after).toBeUndefined();
  });

  it('stays put when the window was not full, or ended where it began', () => {
    const c = leaveOutCursor();
    c.from({ accounts: ['a'], hosts: [] });
    expect(c.passed(null)).toBe(false);
    expect(c.from({ accounts: ['a'], hosts: [] }).after).toBeUndefined();
    expect(c.passed('t1')).toBe(true);
    expect(c.passed('t1')).toBe(false);
    expect(c.from({ accounts: ['a'], hosts: [] }).after).toBe('t1');
  });
});
