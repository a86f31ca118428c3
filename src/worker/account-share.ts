/**
 * How one worker's sending slots are shared between accounts, so that an account whose
 * endpoints stall (each attempt holding its slot until the deadline) cannot hold every slot
 * while another account's deliveries wait (docs/operations.md, "Scaling").
 * - A reserve of a sixteenth of the slots is never taken by an ordinary claim: one account
 *   alone holds at most `concurrency - reserve`.
 * - An account "at its share" is left out of claims. The share is all but the reserve; once
 *   several accounts hold the reserve's size or more ("heavy"), they split that equally.
 * - So is an account near its share while the worker is too full for an ordinary claim: one
 *   answer from a stalled account must not make it look like any other.
 * - Claims that leave accounts out may take the reserve too: that is what it is for.
 * Pure bookkeeping: the runner calls it as attempts start and answers come in, and decides
 * when to claim (delivery-runner.ts).
 */
export type AccountShares = {
  /** Slots an ordinary claim leaves free. */
  reserve: number;
  started(accountId: string): void;
  answered(accountId: string): void;
  /** Whether an attempt of this account may start now. */
  mayStart(accountId: string): boolean;
  /** The accounts within `slack` of their share (at it, for 0): those a claim leaves out. */
  near(slack: number): string[];
  /** Slots one account may hold now. */
  share(): number;
};

export function accountShares(concurrency: number): AccountShares {
  const reserve = Math.floor(concurrency / 16);
  // Too few slots to keep a sixteenth back: they are not shared out.
  if (reserve === 0)
    return {
      reserve,
      started() {},
      answered() {},
      mayStart: () => true,
      near: () => [],
      share: () => concurrency,
    };
  const sending = new Map<string, number>();
  let heavy = 0;
  const share = () => Math.max(reserve, Math.floor((concurrency - reserve) / Math.max(1, heavy)));
  return {
    reserve,
    started(accountId) {
      const n = (sending.get(accountId) ?? 0) + 1;
      sending.set(accountId, n);
      if (n === reserve) heavy++;
    },
    answered(accountId) {
      const n = sending.get(accountId) ?? 0;
      if (n === 0) return;
      if (n === 1) sending.delete(accountId);
      else sending.set(accountId, n - 1);
      if (n === reserve) heavy--;
    },
    mayStart(accountId) {
      return (sending.get(accountId) ?? 0) < share();
    },
    near(slack) {
      const limit = share() - slack;
      const out: string[] = [];
      for (const [accountId, n] of sending) if (n >= limit) out.push(accountId);
      return out;
    },
    share,
  };
}
