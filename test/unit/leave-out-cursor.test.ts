import { describe, expect, it } from 'vitest';
import { leaveOutCursor } from '../../src/worker/leave-out-cursor.js';

describe('leaveOutCursor', () => {
  // Window ends as the store would answer them, in order; null: the window was not full.
  const store = (ends: (string | null)[]) => {
    const asked: (string | undefined)[] = [];
    return {
      asked,
      leaveOutWindowEnd: async (_now: Date, after?: string) => {
        asked.push(after);
        return ends.shift() ?? null;
      },
    };
  };

  it('moves past a full window, and holds while the same accounts and hosts are left out, in any order', async () => {
    const s = store(['t1', 't2']);
    const c = leaveOutCursor(s);
    expect(c.from({ accounts: ['a', 'b'], hosts: [] }).after).toBeUndefined();
    expect(await c.passed(new Date())).toBe(true);
    expect(c.from({ accounts: ['b', 'a'], hosts: [] }).after).toBe('t1');
    expect(await c.passed(new Date())).toBe(true);
    expect(s.asked).toEqual([undefined, 't1']);
    expect(c.from({ accounts: ['a', 'b'], hosts: [] })).toEqual({ accounts: ['a', 'b'], hosts: [], after: 't2' });
  });

  it('starts from the first due once another set is left out', async () => {
    const c = leaveOutCursor(store(['t1']));
    c.from({ accounts: [], hosts: ['h a'] });
    await c.passed(new Date());
    expect(c.from({ accounts: [], hosts: ['h a'] }).after).toBe('t1');
    expect(c.from({ accounts: [], hosts: ['h a', 'g a'] }).after).toBeUndefined();
  });

  it('stays put when the window was not full, ended where it began, or could not be read', async () => {
    const failing = {
      leaveOutWindowEnd: async () => {
        throw new Error('database unavailable');
      },
    };
    const c = leaveOutCursor(store([null]));
    c.from({ accounts: ['a'], hosts: [] });
    expect(await c.passed(new Date())).toBe(false);
    expect(c.from({ accounts: ['a'], hosts: [] }).after).toBeUndefined();
    const same = leaveOutCursor(store(['t1', 't1']));
    same.from({ accounts: ['a'], hosts: [] });
    expect(await same.passed(new Date())).toBe(true);
    expect(await same.passed(new Date())).toBe(false);
    const down = leaveOutCursor(failing);
    down.from({ accounts: ['a'], hosts: [] });
    expect(await down.passed(new Date())).toBe(false);
  });
});
