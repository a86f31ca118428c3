/**
 * How one worker's sending slots are shared between accounts, and within an account between the
 * hosts it sends to, so that a host that stalls (each attempt holding its slot until the
 * deadline) cannot hold every slot while other deliveries wait (docs/operations.md, "Scaling").
 * - A reserve of a sixteenth of the slots is never taken by an ordinary claim: one account
 *   alone holds at most `concurrency - reserve`.
 * - An account "at its share" is left out of claims. The share is all but the reserve; once
 *   several accounts hold the reserve's size or more ("heavy"), they split that equally.
 * - An account's endpoints on one host (the URL's host and port) hold together at most the
 *   account's share less the reserve (the host's "cap", never under the reserve), so the
 *   account's other hosts have room: ten webhooks to one stalled server are one host, as they
 *   are one origin to the sender's connections. A host at its cap is left out of claims; its
 *   account's other hosts are not.
 * - Once several of an account's hosts hold the reserve's size or more, or did within the last
 *   `memoryMs` (the delivery deadline), they split that cap equally, as heavy accounts split the
 *   slots: two stalling hosts leave the account's other hosts room once their first attempts
 *   end, rather than holding its whole share between them. The memory keeps the split while
 *   the stalled attempts of one host end a little before the other's, as its claims refill it.
 * - So is a heavy account or host near its share or cap while the worker is too full for an
 *   ordinary claim: one answer from a stalled host must not make it look like any other.
 *   Of an account near its share, only its hosts near their cap are left out, if any are.
 * - Claims that leave accounts or hosts out may take the reserve too: that is what it is for.
 * Pure bookkeeping: the runner calls it as attempts start and answers come in, and decides
 * when to claim (delivery-runner.ts).
 */

/** Whose attempt holds a slot: a claimed delivery has both. */
export type Holder = { accountId: string; url: string };

/** What a claim leaves out: accounts, and hosts (hostKey) of accounts not listed. */
export type LeftOut = { accounts: string[]; hosts: string[] };

/**
 * An account's host as a claim leaves it out: the URL's host and port, a space, the account id.
 * Stored URLs are normalised https URLs (url-policy.ts), so the host and port are what lies
 * between the second and third slash: the claim reads them with split_part(url, '/', 3), and
 * this must read the same. A host and port hold no space, so the key splits back at the first.
 */
export function hostKey(accountId: string, url: string): string {
  return `${url.split('/', 3)[2] ?? ''} ${accountId}`;
}

/** A host key's parts again: the host and port, and the account. */
export function splitHostKey(key: string): { host: string; accountId: string } {
  const space = key.indexOf(' ');
  return { host: key.slice(0, space), accountId: key.slice(space + 1) };
}

/** Whether a claim that leaves `outer` out leaves out all that one leaving `inner` out does. */
export function covers(outer: LeftOut, inner: LeftOut): boolean {
  return (
    inner.accounts.every((a) => outer.accounts.includes(a)) &&
    inner.hosts.every((h) => outer.hosts.includes(h) || outer.accounts.includes(splitHostKey(h).accountId))
  );
}

export type AccountShares = {
  /** Slots an ordinary claim leaves free. */
  reserve: number;
  started(h: Holder): void;
  answered(h: Holder): void;
  /** Whether an attempt for this account and host may start now. */
  mayStart(h: Holder): boolean;
  /** The accounts and hosts within `slack` of their share or cap (at it, for 0): those a claim leaves out. */
  near(slack: number): LeftOut;
  /**
   * How many attempts a claim may take so that no heavy host passes its cap, nor, for a claim
   * that leaves `left` out, any heavy account left in its share.
   */
  headroom(left?: LeftOut): number;
  /** Slots one account may hold now. */
  share(): number;
};

type Account = { n: number; hosts: Map<string, number>; heavy: Set<string> };

/** How long a host that held the reserve's size counts in its account's split, and the time. */
export type ShareMemory = { memoryMs: number; now?: () => number };

export const leavesOut = (l: LeftOut): boolean => l.accounts.length > 0 || l.hosts.length > 0;

const NONE: LeftOut = { accounts: [], hosts: [] };

/**
 * What the runner's next claim leaves out (delivery-runner.ts), from its free slots, those in
 * flight and half a claim. Nothing, for an ordinary claim (which leaves the reserve free), while
 * none is at its share or cap and half a claim is free or nothing is in flight. Otherwise those
 * at it; or, the worker being too full for an ordinary claim, those within half a claim of it.
 * A host within the reserve of its cap would size ordinary claims to a handful each, one round
 * trip after another: the claim leaves out those within the reserve instead.
 */
export function claimPlan(
  shares: AccountShares,
  o: { free: number; sending: number; half: number },
): { ordinary: boolean; exclude: LeftOut } {
  const atShare = shares.near(0);
  if (leavesOut(atShare)) return { ordinary: false, exclude: atShare };
  if (o.sending > 0 && o.free < o.half) return { ordinary: false, exclude: shares.near(o.half) };
  if (shares.headroom() < shares.reserve) {
    const near = shares.near(shares.reserve);
    if (leavesOut(near)) return { ordinary: false, exclude: near };
  }
  return { ordinary: true, exclude: NONE };
}

export function accountShares(concurrency: number, memory: ShareMemory = { memoryMs: 0 }): AccountShares {
  const reserve = Math.floor(concurrency / 16);
  const now = memory.now ?? Date.now;
  // Too few slots to keep a sixteenth back: they are not shared out.
  if (reserve === 0)
    return {
      reserve,
      started() {},
      answered() {},
      mayStart: () => true,
      near: () => ({ accounts: [], hosts: [] }),
      headroom: () => concurrency,
      share: () => concurrency,
    };
  const sending = new Map<string, Account>();
  // Accounts holding the reserve's size or more, and in each its hosts that do: only these can
  // be near a share or cap, so only these are looked through on each turn of the runner.
  const heavy = new Map<string, Account>();
  // Of each account, its hosts that stopped holding the reserve's size less than memoryMs ago,
  // and when; kept after the account's last attempt is answered.
  const lately = new Map<string, Map<string, number>>();
  let swept = 0;
  const forget = (accountId: string) => {
    const hosts = lately.get(accountId);
    if (!hosts) return undefined;
    const since = now() - memory.memoryMs;
    for (const [key, at] of hosts) if (at <= since) hosts.delete(key);
    if (!hosts.size) lately.delete(accountId);
    return hosts.size ? hosts : undefined;
  };
  const share = () => Math.max(reserve, Math.floor((concurrency - reserve) / Math.max(1, heavy.size)));
  // A host's cap: the account's share less the reserve, split among its heavy hosts, now or
  // lately (all of it for an account with none, as for a host about to become its first).
  const cap = (accountId?: string, a?: Account) => {
    let k = a?.heavy.size ?? 0;
    const recent = accountId === undefined ? undefined : forget(accountId);
    for (const key of recent?.keys() ?? []) if (!a?.heavy.has(key)) k++;
    return Math.max(reserve, Math.floor((share() - reserve) / Math.max(1, k)));
  };
  return {
    reserve,
    started({ accountId, url }) {
      let a = sending.get(accountId);
      if (!a) sending.set(accountId, (a = { n: 0, hosts: new Map(), heavy: new Set() }));
      if (++a.n === reserve) heavy.set(accountId, a);
      const key = hostKey(accountId, url);
      const h = (a.hosts.get(key) ?? 0) + 1;
      a.hosts.set(key, h);
      if (h === reserve) a.heavy.add(key);
    },
    answered({ accountId, url }) {
      const a = sending.get(accountId);
      const key = hostKey(accountId, url);
      const h = a?.hosts.get(key);
      if (!a || !h) return;
      if (h === reserve) {
        a.heavy.delete(key);
        if (memory.memoryMs > 0) {
          // Others are forgotten as their caps are read; once a memory, this sweeps those of
          // accounts that no claim has looked at since.
          if (now() - swept >= memory.memoryMs) {
            swept = now();
            for (const id of lately.keys()) forget(id);
          }
          lately.set(accountId, (lately.get(accountId) ?? new Map()).set(key, now()));
        }
      }
      if (h === 1) a.hosts.delete(key);
      else a.hosts.set(key, h - 1);
      if (a.n === reserve) heavy.delete(accountId);
      if (--a.n === 0) sending.delete(accountId);
    },
    mayStart({ accountId, url }) {
      const a = sending.get(accountId);
      if (!a) return true;
      return a.n < share() && (a.hosts.get(hostKey(accountId, url)) ?? 0) < cap(accountId, a);
    },
    near(slack) {
      // A holder under the reserve's size holds up nobody, however near it is.
      const accountLimit = Math.max(reserve, share() - slack);
      const out: LeftOut = { accounts: [], hosts: [] };
      for (const [accountId, a] of heavy) {
        if (a.n >= share()) {
          out.accounts.push(accountId);
          continue;
        }
        const hostLimit = Math.max(reserve, cap(accountId, a) - slack);
        let named = false;
        for (const key of a.heavy)
          if (a.hosts.get(key)! >= hostLimit) {
            out.hosts.push(key);
            named = true;
          }
        if (!named && a.n >= accountLimit) out.accounts.push(accountId);
      }
      return out;
    },
    headroom(left) {
      // Only heavy holders are looked at: a light one may pass its share or cap by less than the
      // reserve. An ordinary claim comes with half the slots free, so no account is near its
      // share then; a claim that leaves some out may take the reserve, which is not for those
      // it leaves in to fill. Where hosts split the cap, a light one may take a whole claim: the
      // claim takes no more than that split cap.
      let room = cap();
      for (const [accountId, a] of heavy) {
        if (left?.accounts.includes(accountId)) continue;
        if (left) room = Math.min(room, share() - a.n);
        const hostCap = cap(accountId, a);
        room = Math.min(room, hostCap);
        for (const key of a.heavy) if (!left?.hosts.includes(key)) room = Math.min(room, hostCap - a.hosts.get(key)!);
      }
      for (const accountId of lately.keys())
        if (!heavy.has(accountId) && !left?.accounts.includes(accountId))
          room = Math.min(room, cap(accountId, sending.get(accountId)));
      return room;
    },
    share,
  };
}
