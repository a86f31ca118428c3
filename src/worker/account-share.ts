/**
 * How one worker's sending slots are shared between accounts, so that an account whose
 * endpoints stall (each attempt holding its slot until the deadline) cannot hold every slot
 * while another account's deliveries wait (docs/operations.md, "Scaling").
 * - A reserve of a sixteenth of the slots is kept from any account that holds that many
 *   already: an account alone uses at most `concurrency - reserve`, and the rest is
 *   there for an account that has none yet.
 * - Accounts holding at least the reserve ("heavy") split the rest equally.
 * - A claim leaves out the accounts at their share, and asks for no more rows than the fullest
 *   of the others could take, since all of them may be that account's.
 * Pure bookkeeping: the runner calls it as attempts start and answers come in.
 */
export type AccountShares = {
  started(accountId: string): void;
  /**
   * True when a claim may now take an account it left out: this one was at its share, or it
   * stopped being heavy, which raises every heavy account's share.
   */
  answered(accountId: string): boolean;
  /** Whether an attempt of this account may start now. */
  mayStart(accountId: string): boolean;
  /** The accounts a claim leaves out, and the most rows it may take for the others. */
  forClaim(): { exclude: string[]; room: number };
  /** Slots one account may hold now. */
  share(): number;
};

export function accountShares(concurrency: number): AccountShares {
  const reserve = Math.floor(concurrency / 16);
  // Too few slots to keep a sixteenth back: they are not shared out.
  if (reserve === 0)
    return {
      started() {},
      answered: () => false,
      mayStart: () => true,
      forClaim: () => ({ exclude: [], room: concurrency }),
      share: () => concurrency,
    };
  const sending = new Map<string, number>();
  let heavy = 0;
  const share = () => Math.max(reserve, Math.ceil((concurrency - reserve) / Math.max(1, heavy)));
  return {
    started(accountId) {
      const n = (sending.get(accountId) ?? 0) + 1;
      sending.set(accountId, n);
      if (n === reserve) heavy++;
    },
    answered(accountId) {
      const before = sending.get(accountId) ?? 0;
      if (before === 0) return false;
      const was = share();
      if (before === 1) sending.delete(accountId);
      else sending.set(accountId, before - 1);
      if (before === reserve) heavy--;
      if (before >= was) return before - 1 < share();
      if (before !== reserve) return false;
      // One heavy account fewer raises every share: any account held at the old one is free.
      const now = share();
      for (const n of sending.values()) if (n >= was && n < now) return true;
      return false;
    },
    mayStart(accountId) {
      return (sending.get(accountId) ?? 0) < share();
    },
    forClaim() {
      const limit = share();
      const exclude: string[] = [];
      let fullest = 0;
      for (const [accountId, n] of sending) {
        if (n >= limit) exclude.push(accountId);
        else if (n > fullest) fullest = n;
      }
      return { exclude, room: limit - fullest };
    },
    share,
  };
}
