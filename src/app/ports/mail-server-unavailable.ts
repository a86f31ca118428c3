/**
 * The mail server could not be reached or would take no mail at all (refused, closed, silent,
 * a TLS or login failure), as opposed to one email's refusal: every email would fail alike now.
 */
export class MailServerUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the mail server is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
