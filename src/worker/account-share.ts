/**
 * How one worker's sending slots are shared between accounts, and within an account between the
 * hosts it sends to, so that a host that stalls (each attempt holding its slot until the deadline)
 * cannot hold every slot while other deliveries wait (docs/operations.md, "Scaling").
 * - A reserve of a sixteenth of the slots is never taken by an ordinary claim: one account
 *   alone holds at most `concurrency - reserve`.
 * - An account "at its share" is left out of claims. The share is all but the reserve; once
 *   several accounts hold the reserve's size or more ("heavy"), they split that equally.
 * - An account's endpoints on one host (URL origin) hold together at most the account's share
 *   less the reserve (the host's "cap", never under the reserve), so the account's other hosts
 *   have room: ten webhooks to one stalled host are one host. A host at its cap has its
 *   endpoints left out of claims (those sending, and those a claim brought while it was at its
 *   cap); its account's other hosts are not.
 * - So is a heavy account or host near its share or cap while the worker is too full for an
 *   ordinary claim: one answer from a stalled endpoint must not make it look like any other.
 *   Of an account near its share, only its hosts near their cap are left out, if any are.
 * - Claims that leave accounts or endpoints out may take the reserve too: that is what it is for.
 * Pure bookkeeping: the runner calls it as attempts start and answers come in, and decides
 * when to claim (delivery-runner.ts).
 */

/** Whose attempt holds a slot: a claimed delivery has all three. */
export type Holder = { accountId: string; endpointId: string; url: string };

/** What a claim leaves out. An endpoint is listed only when its account is not. */
export type LeftOut = { accounts: string[]; endpoints: string[] };

export type AccountShares = {
  /** Slots an ordinary claim leaves free. */
  reserve: number;
  started(h: Holder): void;
  answered(h: Holder): void;
  /** Whether an attempt for this account and host may start now. */
  mayStart(h: Holder): boolean;
  /** A delivery that may not start now goes back to the queue: claims leave its endpoint out while its host is at its cap. */
  heldBack(h: Holder): void;
  /** The accounts, and the endpoints of hosts, within `slack` of their share or cap (at it, for 0): those a claim leaves out. */
  near(slack: number): LeftOut;
  /**
   * How many attempts a claim may take so that no heavy host passes its cap, nor, for a claim
   * that leaves `left` out, any heavy account left in its share.
   */
  headroom(left?: LeftOut): number;
  /** Slots one account may hold now. */
  share(): number;
};

/** One account's endpoints on one host: how many attempts they hold, and which it has held back. */
type Host = { n: number; endpoints: Map<string, number>; heldBack: Set<string> };
type Account = { n: number; hosts: Map<string, Host>; heavy: Map<string, Host> };

export const leavesOut = (l: LeftOut): boolean => l.accounts.length > 0 || l.endpoints.length > 0;

/** The origin of a normalised https URL (scheme, host and port): what precedes its path. */
export function originOf(url: string): string {
  const path = url.indexOf('/', 'https://'.length);
  return path < 0 ? url : url.slice(0, path);
}

const endpointsOf = (h: Host): string[] => [...new Set([...h.endpoints.keys(), ...h.heldBack])];

export function accountShares(concurrency: number): AccountShares {
  const reserve = Math.floor(concurrency / 16);
  // Too few slots to keep a sixteenth back: they are not shared out.
  if (reserve === 0)
    return {
      reserve,
      started() {},
      answered() {},
      mayStart: () => true,
      heldBack() {},
      near: () => ({ accounts: [], endpoints: [] }),
      headroom: () => concurrency,
      share: () => concurrency,
    };
  const sending = new Map<string, Account>();
  // Accounts holding the reserve's size or more, and in each its hosts that do: only these can
  // be near a share or cap, so only these are looked through on each turn of the runner.
  const heavy = new Map<string, Account>();
  const share = () => Math.max(reserve, Math.floor((concurrency - reserve) / Math.max(1, heavy.size)));
  const cap = () => Math.max(reserve, share() - reserve);
  const hostOf = (h: Holder) => sending.get(h.accountId)?.hosts.get(originOf(h.url));
  return {
    reserve,
    started({ accountId, endpointId, url }) {
      let a = sending.get(accountId);
      if (!a) sending.set(accountId, (a = { n: 0, hosts: new Map(), heavy: new Map() }));
      if (++a.n === reserve) heavy.set(accountId, a);
      const origin = originOf(url);
      let h = a.hosts.get(origin);
      if (!h) a.hosts.set(origin, (h = { n: 0, endpoints: new Map(), heldBack: new Set() }));
      if (++h.n === reserve) a.heavy.set(origin, h);
      h.endpoints.set(endpointId, (h.endpoints.get(endpointId) ?? 0) + 1);
    },
    answered({ accountId, endpointId, url }) {
      const a = sending.get(accountId);
      const origin = originOf(url);
      const h = a?.hosts.get(origin);
      const e = h?.endpoints.get(endpointId);
      if (!a || !h || !e) return;
      if (e === 1) h.endpoints.delete(endpointId);
      else h.endpoints.set(endpointId, e - 1);
      if (h.n === reserve) a.heavy.delete(origin);
      if (--h.n === 0) a.hosts.delete(origin);
      if (a.n === reserve) heavy.delete(accountId);
      if (--a.n === 0) sending.delete(accountId);
    },
    mayStart(holder) {
      const a = sending.get(holder.accountId);
      if (!a) return true;
      return a.n < share() && (hostOf(holder)?.n ?? 0) < cap();
    },
    heldBack(holder) {
      const h = hostOf(holder);
      if (h && h.n >= cap()) h.heldBack.add(holder.endpointId);
    },
    near(slack) {
      // A holder under the reserve's size holds up nobody, however near it is.
      const accountLimit = Math.max(reserve, share() - slack);
      const hostLimit = Math.max(reserve, cap() - slack);
      const out: LeftOut = { accounts: [], endpoints: [] };
      for (const [accountId, a] of heavy) {
        if (a.n >= share()) {
          out.accounts.push(accountId);
          continue;
        }
        let named = false;
        for (const h of a.heavy.values())
          if (h.n >= hostLimit) {
            out.endpoints.push(...endpointsOf(h));
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
        for (const h of a.heavy.values()) {
          const leftOut = left && [...h.endpoints.keys()].some((id) => left.endpoints.includes(id));
          if (!leftOut) room = Math.min(room, cap() - h.n);
        }
      }
      return room;
    },
    share,
  };
}
