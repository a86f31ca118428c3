/**
 * A transaction the database aborted for another's sake (a deadlock, a serialisation failure):
 * nothing of it was written, and the same work may be done again at once.
 */
export class AbortedForAnotherError extends Error {
  constructor(cause: unknown) {
    super('the database aborted this transaction for another one; nothing of it was written', { cause });
  }
}
