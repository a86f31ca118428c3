import { describe, expect, it } from 'vitest';
import { accountShares } from '../../src/worker/account-share.js';

const start = (s: ReturnType<typeof accountShares>, account: string, n: number) => {
  for (let i = 0; i < n; i++) s.started(account);
};

describe('accountShares', () => {
  it('shares nothing out below 16 slots', () => {
    const s = accountShares(15);
    start(s, 'a', 15);
    expect(s.mayStart('a')).toBe(true);
    expect(s.forClaim()).toEqual({ exclude: [], room: 15 });
  });

  it('lets an account alone take all but a sixteenth of the slots', () => {
    const s = accountShares(512);
    expect(s.forClaim()).toEqual({ exclude: [], room: 480 });
    start(s, 'a', 200);
    // A claim may bring 280 more rows: all may be this account's.
    expect(s.forClaim()).toEqual({ exclude: [], room: 280 });
    start(s, 'a', 279);
    expect(s.mayStart('a')).toBe(true);
    s.started('a');
    expect(s.mayStart('a')).toBe(false);
    expect(s.mayStart('b')).toBe(true);
    expect(s.forClaim()).toEqual({ exclude: ['a'], room: 480 });
  });

  it('splits the slots past the reserve between the accounts that hold the reserve', () => {
    const s = accountShares(512);
    start(s, 'a', 480);
    start(s, 'b', 31);
    expect(s.share()).toBe(480);
    expect(s.forClaim()).toEqual({ exclude: ['a'], room: 449 });
    // b holds the reserve too: each may hold half of 480.
    s.started('b');
    expect(s.share()).toBe(240);
    expect(s.forClaim()).toEqual({ exclude: ['a'], room: 208 });
    // a is let back in only once below 240.
    for (let i = 0; i < 240; i++) expect(s.answered('a')).toBe(false);
    expect(s.answered('a')).toBe(true);
    expect(s.forClaim()).toEqual({ exclude: [], room: 1 });
    expect(s.mayStart('a')).toBe(true);
  });

  it('says so when an account stopping being heavy lets a held one back in', () => {
    const s = accountShares(512);
    start(s, 'a', 240);
    start(s, 'b', 32);
    expect(s.forClaim().exclude).toEqual(['a']);
    // b drops under the reserve: a's share is 480 again.
    expect(s.answered('b')).toBe(true);
    expect(s.forClaim()).toEqual({ exclude: [], room: 240 });
    // With a under the smaller share, the same change lets nobody back in.
    for (let i = 0; i < 140; i++) s.answered('a');
    s.started('b');
    expect(s.forClaim().exclude).toEqual([]);
    expect(s.answered('b')).toBe(false);
  });

  it('forgets an account whose attempts have all been answered', () => {
    const s = accountShares(64);
    start(s, 'a', 3);
    for (let i = 0; i < 3; i++) s.answered('a');
    expect(s.answered('a')).toBe(false);
    expect(s.forClaim()).toEqual({ exclude: [], room: 60 });
  });
});
