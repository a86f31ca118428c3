import { DomainError } from '../../domain/errors.js';

/**
 * CSV exports each account may run at once in this process: an export reads every answer of a
 * poll, page by page, for as long as its client takes to read it, and a per-minute rate limit
 * does not bound how many run together.
 */
export const EXPORTS_PER_ACCOUNT = 2;

/** Counts exports under way per account; one past the bound is refused (429 rate_limited). */
export class ExportSlots {
  private readonly running = new Map<string, number>();
  /** Exports started since the process began, every account's. */
  started = 0;

  constructor(private readonly perAccount = EXPORTS_PER_ACCOUNT) {}

  /** Takes a slot for the account; the returned function gives it back (once, however often called). */
  take(accountId: string): () => void {
    const n = this.running.get(accountId) ?? 0;
    if (n >= this.perAccount) {
      throw Object.assign(
        new DomainError(
          'rate_limited',
          `an account runs at most ${this.perAccount} exports at once; try again when one has finished`,
        ),
        { retryAfter: 5 },
      );
    }
    this.running.set(accountId, n + 1);
    this.started++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.running.get(accountId) ?? 1) - 1;
      if (left > 0) this.running.set(accountId, left);
      else this.running.delete(accountId);
    };
  }

  /** Exports under way for the account. */
  count(accountId: string): number {
    return this.running.get(accountId) ?? 0;
  }
}
