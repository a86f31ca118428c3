/**
 * The connection to the database was lost after COMMIT was written and before its answer came:
 * the transaction may have committed or rolled back. Writing it again could store it twice, so
 * a caller that retries must first learn from what is stored which it was.
 */
export class CommitOutcomeUnknownError extends Error {
  constructor(cause: unknown) {
    super('the connection was lost while the transaction committed: whether it committed is unknown', { cause });
  }
}

/**
 * The connection was lost with the COMMIT, and the database says the transaction rolled back:
 * nothing of it was stored, and it may be written again.
 */
export class CommitRolledBackError extends Error {
  constructor(cause: unknown) {
    super('the connection was lost while the transaction committed, and it rolled back', { cause });
  }
}
