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

export const leavesOut = (l: LeftOut): boolean => l.accounts.length > 0 || l.hosts.length > 0;

export function accountShares(concurrency: number): AccountShares {
  const reserve = Math.floor(concurrency / 16);
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
  const share = () => Math.max(reserve, Math.floor((concurrency - reserve) / Math.max(1, heavy.size)));
  const cap = () => Math.max(reserve, share() - reserve);
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
      if (h === reserve) a.heavy.delete(key);
      if (h === 1) a.hosts.delete(key);
      else a.hosts.set(key, h - 1);
      if (a.n === reserve) heavy.delete(accountId);
      if (--a.n === 0) sending.delete(accountId);
    },
    mayStart({ accountId, url }) {
      const a = sending.get(accountId);
      if (!a) return true;
      return a.n < share() && (a.hosts.get(hostKey(accountId, url)) ?? 0) < cap();
    },
    near(slack) {
      // A holder under the reserve's size holds up nobody, however near it is.
      const accountLimit = Math.max(reserve, share() - slack);
      const hostLimit = Math.max(reserve, cap() - slack);
      const out: LeftOut = { accounts: [], hosts: [] };
      for (const [accountId, a] of heavy) {
        if (a.n >= share()) {
          out.accounts.push(accountId);
          continue;
        }
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
      // it leaves in to fill.
      let room = cap();
      for (const [accountId, a] of heavy) {
        if (left?.accounts.includes(accountId)) continue;
        if (left) room = Math.min(room, share() - a.n);
        for (const key of a.heavy) if (!left?.hosts.includes(key)) room = Math.min(room, cap() - a.hosts.get(key)!);
      }
      return room;
    },
    share,
  };
}
