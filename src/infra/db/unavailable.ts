import { AbortedForAnotherError } from '../../app/ports/aborted-for-another.js';
import { describeError } from '../../domain/errors.js';

const CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03', // admin shutdown, crash shutdown, cannot connect now
  '08000',
  '08001',
  '08003',
  '08004',
  '08006', // connection exceptions
  '53300', // too many connections
  '25006', // read only: a standby after a failover, or a database set read-only
  '40P01',
  '40001', // a deadlock or a serialisation failure: aborted for another transaction, done if tried again
]);

/**
 * PostgreSQL's abort of a transaction for another's sake (a deadlock, a serialisation failure)
 * as the typed error the use cases and the worker know; anything else as it is.
 */
export function asAbortedForAnother(err: unknown): unknown {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  return code === '40P01' || code === '40001' ? new AbortedForAnotherError(err) : err;
}

/** What the pg client says when a connection could not be opened or was lost. */
const CONNECT_MESSAGE =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|^timeout expired$/i;

/** Whether `err`, or an error it was caused by, has a code or message that `is` accepts. */
function inChain(err: unknown, is: (code: string, message: string, e: object) => boolean): boolean {
  const seen = new Set<unknown>();
  let e = err;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    const code = String((e as { code?: unknown }).code ?? '');
    const message = String((e as { message?: unknown }).message ?? '');
    if (is(code, message, e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** True for errors that mean "the database cannot do this right now", not "this request is wrong". */
export const isStorageUnavailable = (err: unknown): boolean =>
  inChain(err, (code, message) => CODES.has(code) || CONNECT_MESSAGE.test(message));

/** Connection-level failures: the server could not be reached, or would not take a connection. */
const CONNECTION = /^(ECONN|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|08|57P0|53300)/;

/** True when the database could not be connected to (not a statement it refused). */
export const isConnectionFailure = (err: unknown): boolean =>
  inChain(
    err,
    (code, message, e) =>
      CONNECTION.test(code) ||
      CONNECT_MESSAGE.test(message) ||
      (e instanceof AggregateError && e.errors.some(isConnectionFailure)),
  );

/**
 * PostgreSQL that could not be connected to when storage was opened (unreachable, refusing,
 * starting up): said with where it is and what sets it, never the credentials. Keeps its cause's
 * code, and is still classed as storage unavailable.
 */
export class StorageUnreachableError extends Error {
  readonly code: string | undefined;
  constructor(databaseUrl: string, cause: unknown) {
    super(
      `PostgreSQL at ${whereIs(databaseUrl)} could not be used: ${describeError(cause)} (DATABASE_URL; a connection not open within CANVASS_DB_CONNECT_TIMEOUT_MS is given up)`,
      { cause },
    );
    this.name = 'StorageUnreachableError';
    const code = (cause as { code?: unknown } | null)?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

function whereIs(databaseUrl: string): string {
  try {
    const u = new URL(databaseUrl);
    const host = u.hostname || u.searchParams.get('host') || '(default host)';
    return `${host}${u.port ? `:${u.port}` : ''}${u.pathname.length > 1 ? u.pathname : ''}`;
  } catch {
    return '(DATABASE_URL)';
  }
}
