import { describe, expect, it } from 'vitest';
import { accountShares, claimPlan, covers, hostKey, type LeftOut } from '../../src/worker/account-share.js';

type Shares = ReturnType<typeof accountShares>;
// Each attempt of an account to a host goes to an endpoint of its own path on that host.
let paths = 0;
const at = (account: string, host = 'h') => ({ accountId: account, url: `https://${host}.example/${paths++}?t=1` });
const key = (account: string, host: string) => `${host}.example ${account}`;
// Unless a host is named, an account's attempts go round 16 hosts, none of which then holds
// the reserve's size: the account's share binds before any host's.
const start = (s: Shares, account: string, n: number, host?: string) => {
  for (let i = 0; i < n; i++) s.started(at(account, host ?? `h${i % 16}`));
};
const answer = (s: Shares, account: string, n: number, host?: string) => {
  for (let i = 0; i < n; i++) s.answered(at(account, host ?? `h${i % 16}`));
};
const accounts = (l: LeftOut) => l.accounts;
const none: LeftOut = { accounts: [], hosts: [] };

describe('hostKey', () => {
  it("is the URL's host and port, then the account, as the claim's split_part(url, '/', 3) reads it", () => {
    expect(hostKey('acc_1', 'https://hooks.example.com/a/b?c=d#e')).toBe('hooks.example.com acc_1');
    expect(hostKey('acc_1', 'https://hooks.example.com:8443/')).toBe('hooks.example.com:8443 acc_1');
    expect(hostKey('acc_1', 'https://[2001:db8::1]:8443/x')).toBe('[2001:db8::1]:8443 acc_1');
    // Two paths of one host are one key; another port or account is another.
    expect(hostKey('a', 'https://h.example/one')).toBe(hostKey('a', 'https://h.example/two?x=1'));
    expect(hostKey('a', 'https://h.example:444/one')).not.toBe(hostKey('a', 'https://h.example/one'));
    expect(hostKey('b', 'https://h.example/one')).not.toBe(hostKey('a', 'https://h.example/one'));
  });
});

describe('accountShares', () => {
  it('shares nothing out below 16 slots', () => {
    const s = accountShares(15);
    start(s, 'a', 15);
    expect(s.reserve).toBe(0);
    expect(s.mayStart(at('a'))).toBe(true);
    expect(s.near(0)).toEqual(none);
  });

  it('lets an account alone take all but the reserve, a sixteenth of the slots', () => {
    const s = accountShares(512);
    expect(s.reserve).toBe(32);
    start(s, 'a', 479);
    expect(s.mayStart(at('a'))).toBe(true);
    expect(s.near(0)).toEqual(none);
    s.started(at('a'));
    expect(s.mayStart(at('a'))).toBe(false);
    expect(s.mayStart(at('b'))).toBe(true);
    expect(accounts(s.near(0))).toEqual(['a']);
    s.answered(at('a'));
    expect(s.near(0)).toEqual(none);
  });

  it('splits all but the reserve between the accounts that hold the reserve or more', () => {
    const s = accountShares(512);
    start(s, 'a', 300);
    start(s, 'b', 31);
    expect(s.share()).toBe(480);
    expect(s.near(0)).toEqual(none);
    // b holds the reserve too: each may hold half of 480, and a is over it.
    s.started(at('b'));
    expect(s.share()).toBe(240);
    expect(accounts(s.near(0))).toEqual(['a']);
    expect(s.mayStart(at('b'))).toBe(true);
    answer(s, 'a', 60);
    expect(accounts(s.near(0))).toEqual(['a']);
    answer(s, 'a', 1);
    expect(s.near(0)).toEqual(none);
    // b drops under the reserve: a's share is 480 again.
    start(s, 'a', 100);
    expect(accounts(s.near(0))).toEqual(['a']);
    s.answered(at('b'));
    expect(s.share()).toBe(480);
    expect(s.near(0)).toEqual(none);
  });

  it('names the heavy accounts within a slack of their share', () => {
    const s = accountShares(512);
    start(s, 'a', 300);
    start(s, 'b', 10);
    expect(s.near(0)).toEqual(none);
    expect(accounts(s.near(180))).toEqual(['a']);
    // b holds less than the reserve: it holds up nobody, however near it is.
    expect(accounts(s.near(470))).toEqual(['a']);
    start(s, 'b', 30);
    expect(accounts(s.near(470))).toEqual(['a', 'b']);
  });

  it('splits among as many heavy accounts as there are, down to the reserve each', () => {
    const s = accountShares(512);
    for (const a of ['a', 'b', 'c']) start(s, a, 32);
    expect(s.share()).toBe(160);
    for (let i = 0; i < 13; i++) start(s, `x${i}`, 32);
    expect(s.share()).toBe(32);
    expect(accounts(s.near(0))).toHaveLength(16);
    // A host's cap is never under the reserve: here it is the whole of its account's share.
    expect(s.mayStart(at('a', 'h0'))).toBe(false);
    s.answered(at('a', 'h0'));
    expect(s.mayStart(at('a', 'h0'))).toBe(true);
  });

  it('forgets an account whose attempts have all been answered', () => {
    const s = accountShares(64);
    start(s, 'a', 60);
    expect(accounts(s.near(0))).toEqual(['a']);
    answer(s, 'a', 61);
    expect(s.near(0)).toEqual(none);
    start(s, 'b', 60);
    expect(accounts(s.near(0))).toEqual(['b']);
  });

  it("keeps one host to the account's share less the reserve, and leaves out only that host", () => {
    const s = accountShares(512);
    start(s, 'a', 447, 'stalled');
    expect(s.mayStart(at('a', 'stalled'))).toBe(true);
    s.started(at('a', 'stalled'));
    expect(s.near(0)).toEqual({ accounts: [], hosts: [key('a', 'stalled')] });
    expect(s.mayStart(at('a', 'stalled'))).toBe(false);
    // The account's other hosts take the rest of its share, and then the account is out.
    expect(s.mayStart(at('a', 'other'))).toBe(true);
    start(s, 'a', 32, 'other');
    expect(s.near(0)).toEqual({ accounts: ['a'], hosts: [] });
    expect(s.mayStart(at('a', 'other'))).toBe(false);
    expect(s.mayStart(at('b'))).toBe(true);
  });

  it("caps each host at its account's share less the reserve, as that share shrinks", () => {
    const s = accountShares(512);
    start(s, 'a', 200, 'x');
    expect(s.near(0)).toEqual(none);
    // A second heavy account halves a's share to 240, and x's cap to 208.
    start(s, 'b', 32);
    expect(s.share()).toBe(240);
    start(s, 'a', 7, 'x');
    expect(s.mayStart(at('a', 'x'))).toBe(true);
    s.started(at('a', 'x'));
    expect(s.near(0)).toEqual({ accounts: [], hosts: [key('a', 'x')] });
    expect(s.mayStart(at('a', 'x'))).toBe(false);
    expect(s.mayStart(at('a', 'y'))).toBe(true);
  });

  it('of an account near its share, names its hosts near their cap, or the account when none is', () => {
    const s = accountShares(512);
    start(s, 'a', 100, 'x');
    start(s, 'a', 20, 'y');
    start(s, 'b', 120);
    expect(s.near(0)).toEqual(none);
    // Share 240 each, cap 208: at a slack of 108, x (100) is near its cap.
    expect(s.near(107)).toEqual(none);
    expect(s.near(108)).toEqual({ accounts: [], hosts: [key('a', 'x')] });
    // At 120 both accounts are near their share; b's hosts are all light, so b is named.
    expect(s.near(120)).toEqual({ accounts: ['b'], hosts: [key('a', 'x')] });
  });

  it('tells how far the host holding the most is from its cap', () => {
    const s = accountShares(512);
    // Only heavy hosts count.
    start(s, 'a', 31, 'light');
    expect(s.headroom()).toBe(448);
    start(s, 'a', 100, 'x');
    start(s, 'a', 31, 'y');
    expect(s.headroom()).toBe(348);
    start(s, 'b', 32);
    expect(s.headroom()).toBe(108);
  });

  it('sizes a claim that leaves some out so that no heavy account or host left in passes its share or cap', () => {
    const s = accountShares(512);
    start(s, 'a', 448, 'stalled');
    const left = s.near(0);
    expect(left).toEqual({ accounts: [], hosts: [key('a', 'stalled')] });
    // The account is left in: its other hosts may take what is left of its share, not the reserve.
    expect(s.headroom(left)).toBe(32);
    // Two heavy accounts (share 240, cap 208): b is left out; a's busiest host bounds the claim.
    const t = accountShares(512);
    start(t, 'b', 240);
    start(t, 'a', 200, 'x');
    expect(t.near(0)).toEqual({ accounts: ['b'], hosts: [] });
    expect(t.headroom(t.near(0))).toBe(8);
    // An ordinary claim is bounded by hosts only.
    expect(t.headroom()).toBe(8);
    start(t, 'a', 31, 'y');
    expect(t.headroom(t.near(0))).toBe(8);
    answer(t, 'a', 100, 'x');
    expect(t.headroom(t.near(0))).toBe(208 - 100);
    expect(t.headroom()).toBe(208 - 100);
  });

  it("splits a host's cap among its account's hosts that hold the reserve or more", () => {
    const s = accountShares(512);
    // One stalled host holds its whole cap; a second then takes the rest of the account's share.
    start(s, 'a', 448, 'x');
    start(s, 'a', 32, 'y');
    expect(s.near(0)).toEqual({ accounts: ['a'], hosts: [] });
    // Both hold the reserve or more: each may hold half of 448. x is left out until under it.
    answer(s, 'a', 224, 'x');
    expect(s.near(0)).toEqual({ accounts: [], hosts: [key('a', 'x')] });
    expect(s.mayStart(at('a', 'x'))).toBe(false);
    expect(s.mayStart(at('a', 'y'))).toBe(true);
    // With both at their cap, the account's other hosts keep the rest of its share.
    start(s, 'a', 192, 'y');
    expect(s.near(0)).toEqual({ accounts: [], hosts: [key('a', 'x'), key('a', 'y')] });
    expect(s.mayStart(at('a', 'z'))).toBe(true);
    expect(s.headroom(s.near(0))).toBe(32);
    // y's attempts end: x alone is heavy and has the whole cap again.
    answer(s, 'a', 224, 'y');
    expect(s.mayStart(at('a', 'x'))).toBe(true);
    expect(s.headroom()).toBe(448 - 224);
    // Fourteen heavy hosts split it down to the reserve's size each, and leave the others 32.
    const t = accountShares(512);
    for (let i = 0; i < 14; i++) start(t, 'a', 32, `s${i}`);
    expect(t.near(0).hosts).toHaveLength(14);
    expect(t.mayStart(at('a', 's0'))).toBe(false);
    expect(t.mayStart(at('a', 'other'))).toBe(true);
  });

  it('keeps a host that held the reserve in the split for memoryMs after, so that a stalled host refills only its half', () => {
    let t = 0;
    const s = accountShares(512, { memoryMs: 10_000, now: () => t });
    start(s, 'a', 448, 'x');
    start(s, 'a', 32, 'y');
    // x's stalled attempts end at their deadline, y's a moment later.
    answer(s, 'a', 448, 'x');
    t = 50;
    answer(s, 'a', 32, 'y');
    // y held the reserve's size just now: x refills half the cap, and a claim leaving x out
    // takes no more than y's half either, whichever host it finds due.
    start(s, 'a', 224, 'x');
    expect(s.mayStart(at('a', 'x'))).toBe(false);
    expect(s.near(0)).toEqual({ accounts: [], hosts: [key('a', 'x')] });
    expect(s.headroom(s.near(0))).toBe(224);
    // A deadline later, y is forgotten: x has the whole cap again.
    t = 10_050;
    expect(s.mayStart(at('a', 'x'))).toBe(true);
    expect(s.near(0)).toEqual(none);
    expect(s.headroom()).toBe(448 - 224);
    // An account with nothing in flight keeps its hosts' split for the memory: a claim, which may
    // find its deliveries for any of them, takes no more than the split cap.
    const v = accountShares(512, { memoryMs: 10_000, now: () => t });
    for (const host of ['p', 'q']) {
      start(v, 'b', 32, host);
      answer(v, 'b', 32, host);
    }
    expect(v.headroom()).toBe(224);
    t = 20_050;
    expect(v.headroom()).toBe(448);
    // Without a memory, y leaves the split as soon as it holds less than the reserve.
    const u = accountShares(512);
    start(u, 'a', 224, 'x');
    start(u, 'a', 32, 'y');
    expect(u.mayStart(at('a', 'x'))).toBe(false);
    answer(u, 'a', 1, 'y');
    expect(u.mayStart(at('a', 'x'))).toBe(true);
  });

  it('forgets a host whose attempts have all been answered', () => {
    const s = accountShares(512);
    start(s, 'a', 448, 'x');
    expect(s.near(0).hosts).toEqual([key('a', 'x')]);
    answer(s, 'a', 449, 'x');
    expect(s.near(0)).toEqual(none);
    start(s, 'a', 448, 'y');
    expect(s.near(0)).toEqual({ accounts: [], hosts: [key('a', 'y')] });
    expect(s.mayStart(at('a', 'x'))).toBe(true);
  });

  it("counts an account's endpoints on one host against one cap, and another account's apart", () => {
    const s = accountShares(512);
    // 448 attempts to 448 endpoints (paths) of one host: the host is at its cap.
    start(s, 'a', 448, 'shared');
    expect(s.near(0)).toEqual({ accounts: [], hosts: [key('a', 'shared')] });
    expect(s.mayStart({ accountId: 'a', url: 'https://shared.example/a-new-path' })).toBe(false);
    expect(s.mayStart({ accountId: 'a', url: 'https://shared.example:8443/' })).toBe(true);
    expect(s.mayStart({ accountId: 'b', url: 'https://shared.example/a-new-path' })).toBe(true);
  });
});

describe('covers', () => {
  it('tells whether one left-out set leaves out all that another does', () => {
    const x = key('a', 'x');
    expect(covers({ accounts: ['a'], hosts: [] }, { accounts: [], hosts: [x] })).toBe(true);
    expect(covers({ accounts: [], hosts: [x] }, { accounts: ['a'], hosts: [] })).toBe(false);
    expect(covers({ accounts: [], hosts: [x, key('a', 'y')] }, { accounts: [], hosts: [x] })).toBe(true);
    expect(covers({ accounts: [], hosts: [x] }, { accounts: [], hosts: [x, key('a', 'y')] })).toBe(false);
    expect(covers({ accounts: ['b'], hosts: [] }, { accounts: [], hosts: [x] })).toBe(false);
    expect(covers(none, none)).toBe(true);
  });
});

describe('claimPlan', () => {
  it('makes an ordinary claim while none is at its share or cap and half a claim is free', () => {
    const s = accountShares(512);
    expect(claimPlan(s, { free: 512, sending: 0, half: 256 })).toEqual({ ordinary: true, exclude: none });
    start(s, 'a', 100, 'x');
    expect(claimPlan(s, { free: 412, sending: 100, half: 256 })).toEqual({ ordinary: true, exclude: none });
    // Too full for one: those within half a claim of their share or cap are left out.
    start(s, 'a', 200, 'x');
    expect(claimPlan(s, { free: 212, sending: 300, half: 256 })).toEqual({
      ordinary: false,
      exclude: { accounts: [], hosts: [key('a', 'x')] },
    });
    // At its cap, it is left out however many slots are free.
    start(s, 'a', 148, 'x');
    expect(claimPlan(s, { free: 500, sending: 448, half: 256 })).toEqual({
      ordinary: false,
      exclude: { accounts: [], hosts: [key('a', 'x')] },
    });
  });

  it('leaves out a host within the reserve of its cap rather than claim a handful at a time', () => {
    let t = 0;
    const s = accountShares(512, { memoryMs: 10_000, now: () => t });
    start(s, 'a', 32, 'y');
    answer(s, 'a', 32, 'y');
    // y held the reserve's size just now: x's cap is 224, and it holds 200.
    start(s, 'a', 200, 'x');
    expect(s.headroom()).toBe(24);
    const plan = claimPlan(s, { free: 312, sending: 200, half: 256 });
    expect(plan).toEqual({ ordinary: false, exclude: { accounts: [], hosts: [key('a', 'x')] } });
    expect(s.headroom(plan.exclude)).toBe(224);
    // A deadline later the cap is 448 again, and the claim ordinary.
    t = 10_000;
    expect(claimPlan(s, { free: 312, sending: 200, half: 256 })).toEqual({ ordinary: true, exclude: none });
  });
});
