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
    expect(s.near(0)).toEqual([]);
  });

  it('lets an account alone take all but the reserve, a sixteenth of the slots', () => {
    const s = accountShares(512);
    expect(s.reserve).toBe(32);
    start(s, 'a', 479);
    expect(s.mayStart('a')).toBe(true);
    expect(s.near(0)).toEqual([]);
    s.started('a');
    expect(s.mayStart('a')).toBe(false);
    expect(s.mayStart('b')).toBe(true);
    expect(s.near(0)).toEqual(['a']);
    s.answered('a');
    expect(s.near(0)).toEqual([]);
  });

  it('splits all but the reserve between the accounts that hold the reserve or more', () => {
    const s = accountShares(512);
    start(s, 'a', 300);
    start(s, 'b', 31);
    expect(s.share()).toBe(480);
    expect(s.near(0)).toEqual([]);
    // b holds the reserve too: each may hold half of 480, and a is over it.
    s.started('b');
    expect(s.share()).toBe(240);
    expect(s.near(0)).toEqual(['a']);
    expect(s.mayStart('b')).toBe(true);
    answer(s, 'a', 60);
    expect(s.near(0)).toEqual(['a']);
    s.answered('a');
    expect(s.near(0)).toEqual([]);
    // b drops under the reserve: a's share is 480 again.
    start(s, 'a', 100);
    expect(s.near(0)).toEqual(['a']);
    s.answered('b');
    expect(s.share()).toBe(480);
    expect(s.near(0)).toEqual([]);
  });

  it('names the accounts within a slack of their share', () => {
    const s = accountShares(512);
    start(s, 'a', 300);
    start(s, 'b', 10);
    expect(s.near(0)).toEqual([]);
    expect(s.near(180)).toEqual(['a']);
    expect(s.near(470)).toEqual(['a', 'b']);
  });

  it('splits among as many heavy accounts as there are, down to the reserve each', () => {
    const s = accountShares(512);
    for (const a of ['a', 'b', 'c']) start(s, a, 32);
    expect(s.share()).toBe(160);
    for (let i = 0; i < 13; i++) start(s, `x${i}`, 32);
    expect(s.share()).toBe(32);
    expect(s.near(0)).toHaveLength(16);
  });

  it('forgets an account whose attempts have all been answered', () => {
    const s = accountShares(64);
    start(s, 'a', 60);
    expect(s.near(0)).toEqual(['a']);
    answer(s, 'a', 61);
    expect(s.near(0)).toEqual([]);
    start(s, 'b', 60);
    expect(s.near(0)).toEqual(['b']);
  });
});
