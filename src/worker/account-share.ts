/**
 * How one worker's sending slots are shared between accounts, and within an account between its
 * endpoints, so that an endpoint that stalls (each attempt holding its slot until the deadline)
 * cannot hold every slot while other deliveries wait (docs/operations.md, "Scaling").
 * - A reserve of a sixteenth of the slots is never taken by an ordinary claim: one account
 *   alone holds at most `concurrency - reserve`.
 * - An account "at its share" is left out of claims. The share is all but the reserve; once
 *   several accounts hold the reserve's size or more ("heavy"), they split that equally.
 * - One endpoint holds at most its account's share less the reserve (its "cap", never under
 *   the reserve), so an account's other endpoints have room. An endpoint at its cap is left out of claims;
 *   its account's other endpoints are not.
 * - So is a heavy account or endpoint near its share or cap while the worker is too full for an
 *   ordinary claim: one answer from a stalled endpoint must not make it look like any other.
 *   Of an account near its share, only its endpoints near their cap are left out, if any are.
 * - Claims that leave accounts or endpoints out may take the reserve too: that is what it is for.
 * Pure bookkeeping: the runner calls it as attempts start and answers come in, and decides
 * when to claim (delivery-runner.ts).
 */

/** Whose attempt holds a slot: a claimed delivery has both. */
export type Holder = { accountId: string; endpointId: string };

/** What a claim leaves out. An endpoint is listed only when its account is not. */
export type LeftOut = { accounts: string[]; endpoints: string[] };

export type AccountShares = {
  /** Slots an ordinary claim leaves free. */
  reserve: number;
  started(h: Holder): void;
  answered(h: Holder): void;
  /** Whether an attempt for this account and endpoint may start now. */
  mayStart(h: Holder): boolean;
  /** The accounts and endpoints within `slack` of their share or cap (at it, for 0): those a claim leaves out. */
  near(slack: number): LeftOut;
  /**
   * How many attempts a claim may take so that no heavy endpoint passes its cap, nor, for a
   * claim that leaves `left` out, any heavy account left in its share.
   */
  headroom(left?: LeftOut): number;
  /** Slots one account may hold now. */
  share(): number;
};

type Account = { n: number; endpoints: Map<string, number>; heavy: Set<string> };

export const leavesOut = (l: LeftOut): boolean => l.accounts.length > 0 || l.endpoints.length > 0;

export function accountShares(concurrency: number): AccountShares {
  const reserve = Math.floor(concurrency / 16);
  // Too few slots to keep a sixteenth back: they are not shared out.
  if (reserve === 0)
    return {
      reserve,
      started() {},
      answered() {},
      mayStart: () => true,
      near: () => ({ accounts: [], endpoints: [] }),
      headroom: () => concurrency,
      share: () => concurrency,
    };
  const sending = new Map<string, Account>();
  // Accounts holding the reserve's size or more, and in each its endpoints that do: only these
  // can be near a share or cap, so only these are looked through on each turn of the runner.
  const heavy = new Map<string, Account>();
  const share = () => Math.max(reserve, Math.floor((concurrency - reserve) / Math.max(1, heavy.size)));
  const cap = () => Math.max(reserve, share() - reserve);
  return {
    reserve,
    started({ accountId, endpointId }) {
      let a = sending.get(accountId);
      if (!a) sending.set(accountId, (a = { n: 0, endpoints: new Map(), heavy: new Set() }));
      if (++a.n === reserve) heavy.set(accountId, a);
      const e = (a.endpoints.get(endpointId) ?? 0) + 1;
      a.endpoints.set(endpointId, e);
      if (e === reserve) a.heavy.add(endpointId);
    },
    answered({ accountId, endpointId }) {
      const a = sending.get(accountId);
      const e = a?.endpoints.get(endpointId);
      if (!a || !e) return;
      if (e === reserve) a.heavy.delete(endpointId);
      if (e === 1) a.endpoints.delete(endpointId);
      else a.endpoints.set(endpointId, e - 1);
      if (a.n === reserve) heavy.delete(accountId);
      if (--a.n === 0) sending.delete(accountId);
    },
    mayStart({ accountId, endpointId }) {
      const a = sending.get(accountId);
      if (!a) return true;
      return a.n < share() && (a.endpoints.get(endpointId) ?? 0) < cap();
    },
    near(slack) {
      // A holder under the reserve's size holds up nobody, however near it is.
      const accountLimit = Math.max(reserve, share() - slack);
      const endpointLimit = Math.max(reserve, cap() - slack);
      const out: LeftOut = { accounts: [], endpoints: [] };
      for (const [accountId, a] of heavy) {
        if (a.n >= share()) {
          out.accounts.push(accountId);
          continue;
        }
        let named = false;
        for (const endpointId of a.heavy)
          if (a.endpoints.get(endpointId)! >= endpointLimit) {
            out.endpoints.push(endpointId);
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
        for (const id of a.heavy)
          if (!left?.endpoints.includes(id)) room = Math.min(room, cap() - a.endpoints.get(id)!);
      }
      return room;
    },
    share,
  };
}
