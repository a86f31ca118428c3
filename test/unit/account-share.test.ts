import { describe, expect, it } from 'vitest';
import { accountShares } from '../../src/worker/account-share.js';

const start = (s: ReturnType<typeof accountShares>, account: string, n: number) => {
  for (let i = 0; i < n; i++) s.started(account);
};
const answer = (s: ReturnType<typeof accountShares>, account: string, n: number) => {
  for (let i = 0; i < n; i++) s.answered(account);
};

describe('accountShares', () => {
  it('shares nothing out below 16 slots', () => {
    const s = accountShares(15);
    start(s, 'a', 15);
    expect(s.reserve).toBe(0);
    expect(s.mayStart('a')).toBe(true);
    expect(s.excluded()).toEqual([]);
  });

  it('lets an account alone take all but the reserve, a sixteenth of the slots', () => {
    const s = accountShares(512);
    expect(s.reserve).toBe(32);
    start(s, 'a', 479);
    expect(s.mayStart('a')).toBe(true);
    expect(s.excluded()).toEqual([]);
    s.started('a');
    expect(s.mayStart('a')).toBe(false);
    expect(s.mayStart('b')).toBe(true);
    expect(s.excluded()).toEqual(['a']);
    s.answered('a');
    expect(s.excluded()).toEqual([]);
  });

  it('splits all but the reserve between the accounts that hold the reserve or more', () => {
    const s = accountShares(512);
    start(s, 'a', 300);
    start(s, 'b', 31);
    expect(s.share()).toBe(480);
    expect(s.excluded()).toEqual([]);
    // b holds the reserve too: each may hold half of 480, and a is over it.
    s.started('b');
    expect(s.share()).toBe(240);
    expect(s.excluded()).toEqual(['a']);
    expect(s.mayStart('b')).toBe(true);
    answer(s, 'a', 60);
    expect(s.excluded()).toEqual(['a']);
    s.answered('a');
    expect(s.excluded()).toEqual([]);
    // b drops under the reserve: a's share is 480 again.
    start(s, 'a', 100);
    expect(s.excluded()).toEqual(['a']);
    s.answered('b');
    expect(s.share()).toBe(480);
    expect(s.excluded()).toEqual([]);
  });

  it('never hands out more than all but the reserve when the share is split', () => {
    const s = accountShares(512);
    for (const a of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) start(s, a, 32);
    expect(s.share() * 7).toBeLessThanOrEqual(480);
    // Sixteen heavy accounts: each keeps the reserve's size.
    for (let i = 0; i < 9; i++) start(s, `x${i}`, 32);
    expect(s.share()).toBe(32);
  });

  it('forgets an account whose attempts have all been answered', () => {
    const s = accountShares(64);
    start(s, 'a', 60);
    expect(s.excluded()).toEqual(['a']);
    answer(s, 'a', 61);
    expect(s.excluded()).toEqual([]);
    start(s, 'b', 60);
    expect(s.excluded()).toEqual(['b']);
  });
});
