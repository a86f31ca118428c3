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
