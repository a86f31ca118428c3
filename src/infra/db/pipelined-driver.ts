import {
  CompiledQuery,
  PostgresDialect,
  type DatabaseConnection,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { CommitOutcomeUnknownError } from '../../app/ports/commit-outcome-unknown.js';

/**
 * PostgreSQL transactions with fewer round trips. The pool's clients run in pg's pipeline mode,
 * where a statement is written to the socket without waiting for the answer to the one before;
 * the server still runs them one after another, in order. On a busy machine a round trip costs
 * far more than a short statement (a context switch each way; docs/performance.md), so:
 * - BEGIN goes out together with the transaction's first statement instead of alone;
 * - the last statement of a transaction can take COMMIT along (`executeThenCommit`);
 * - statements that do not need each other's answers can go out together (`executeTogether`).
 * Outside a transaction each query is awaited by its caller, as with a plain pool.
 * The embedded database's driver is wrapped the same way (pglite-dialect.ts): there each
 * statement is a message to PGlite's thread, which runs them in the order sent.
 */
export class PipelinedPostgresDialect extends PostgresDialect {
  override createDriver(): Driver {
    return new PipelinedDriver(super.createDriver());
  }
}

class PipelinedConnection implements DatabaseConnection {
  /** BEGIN, written but not yet answered: the next statement's caller waits for both. */
  begin: Promise<unknown> | undefined;
  /** COMMIT, written behind the transaction's last statement. */
  commit: Promise<unknown> | undefined;
  /** The server refused one of the transaction's statements: it will answer COMMIT with ROLLBACK. */
  refused = false;
  /** COMMIT was written by commitTransaction: rollbackTransaction, which follows its failure, has nothing to do. */
  committing = false;

  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // A statement after an early COMMIT would run outside the transaction: refuse it.
    if (this.commit) throw new Error('statement after the transaction was committed');
    const begin = this.begin;
    this.begin = undefined;
    const result = this.inner.executeQuery<R>(query);
    result.catch((e: unknown) => void (!connectionLost(e) && (this.refused = true)));
    // Should BEGIN fail, so does this statement: both travel on one connection, and BEGIN only
    // fails when that connection does.
    if (begin) await begin;
    return result;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

export class PipelinedDriver implements Driver {
  #wrapped = new WeakMap<DatabaseConnection, PipelinedConnection>();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const conn = await this.inner.acquireConnection();
    let wrapped = this.#wrapped.get(conn);
    if (!wrapped) this.#wrapped.set(conn, (wrapped = new PipelinedConnection(conn)));
    return wrapped;
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const c = conn as PipelinedConnection;
    c.refused = c.committing = false;
    if (settings.isolationLevel || settings.accessMode) return this.inner.beginTransaction(c.inner, settings);
    c.begin = c.inner.executeQuery(CompiledQuery.raw('begin'));
    c.begin.catch(() => {});
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    const c = conn as PipelinedConnection;
    const [begin, commit] = [c.begin, c.commit];
    c.begin = c.commit = undefined;
    if (begin) await begin;
    c.committing = true;
    if (!commit) await this.inner.commitTransaction(c.inner).catch((e: unknown) => lostCommit(c, e));
    else await commit.catch((e: unknown) => lostCommit(c, e));
    // After a refused statement the server answers COMMIT with ROLLBACK, and no error.
    if (c.refused)
      throw new Error('the transaction was rolled back instead of committed: one of its statements failed');
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    const c = conn as PipelinedConnection;
    const [begin, commit, committing] = [c.begin, c.commit, c.committing];
    c.begin = c.commit = undefined;
    c.committing = false;
    // A failed COMMIT has ended the transaction (its error, thrown by commitTransaction, stands).
    if (committing) return;
    await begin?.catch(() => {});
    // An early COMMIT has ended the transaction one way or the other: nothing left to roll back.
    // (executeThenCommit is only for a transaction's last statement, so nothing can fail after a
    // successful one.)
    if (!commit) return this.inner.rollbackTransaction(c.inner);
    const failure = await commit.then(
      () => undefined,
      (e: unknown) => e ?? new Error('COMMIT failed'),
    );
    // The transaction's own error stands, unless the connection was lost with its COMMIT.
    if (failure !== undefined && connectionLost(failure) && !c.refused) throw new CommitOutcomeUnknownError(failure);
  }

  releaseConnection(conn: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection((conn as PipelinedConnection).inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/**
 * Not the server refusing a statement: no SQLSTATE (the socket closed; Node's own codes, such as
 * EPIPE, begin with E, which no SQLSTATE class does), a FATAL or PANIC error, or a connection
 * exception (class 08) or operator intervention (57P) sent as the server closed the connection.
 * Such an error leaves open whether a COMMIT written before it was carried out.
 */
function connectionLost(e: unknown): boolean {
  const { code, severity } = (e ?? {}) as { code?: unknown; severity?: unknown };
  return (
    typeof code !== 'string' ||
    !/^[0-9A-DF-Z][0-9A-Z]{4}$/.test(code) ||
    severity === 'FATAL' ||
    severity === 'PANIC' ||
    code.startsWith('08') ||
    code.startsWith('57P')
  );
}

/**
 * COMMIT failed. With the connection lost and every statement accepted, the server may have
 * committed before the answer was lost: the caller is told the outcome is unknown. Otherwise the
 * server refused it, and the transaction rolled back.
 */
function lostCommit(c: PipelinedConnection, e: unknown): never {
  throw connectionLost(e) && !c.refused ? new CommitOutcomeUnknownError(e) : e;
}

/**
 * Runs a transaction's last statement and writes COMMIT right behind it: one round trip for
 * both. Outside a transaction it is a plain execute (the commit follows as usual).
 * Nothing may run in the transaction after it, so it is only for the transaction's owner: a
 * store that runs inside another use case's transaction never calls it (store.ts), since the
 * early COMMIT would end the outer transaction too.
 */
export async function executeThenCommit<DB, R>(db: Kysely<DB>, query: CompiledQuery<R>): Promise<QueryResult<R>> {
  return db.getExecutor().provideConnection(async (conn) => {
    const result = conn.executeQuery<R>(query);
    commitBehind(db, conn);
    return result;
  });
}

/** In a pipelined transaction, writes COMMIT now, behind what was written; commitTransaction reads its answer. */
function commitBehind<DB>(db: Kysely<DB>, conn: DatabaseConnection): void {
  if (!(conn instanceof PipelinedConnection) || !db.isTransaction) return;
  conn.commit = conn.inner.executeQuery(CompiledQuery.raw('commit'));
  conn.commit.catch(() => {});
}

/**
 * Writes statements together and waits for all their answers: one round trip instead of one
 * each. The server runs them in order, each with its own snapshot, so a later one sees what an
 * earlier one wrote or locked. In a transaction, a failing statement fails those behind it.
 * `thenCommit` writes COMMIT behind them, as executeThenCommit does (with the same caveat).
 */
export async function executeTogether<DB>(
  db: Kysely<DB>,
  queries: CompiledQuery[],
  opts: { thenCommit?: boolean } = {},
): Promise<QueryResult<unknown>[]> {
  return db.getExecutor().provideConnection(async (conn) => {
    const pending = queries.map((q) => conn.executeQuery(q));
    if (opts.thenCommit) commitBehind(db, conn);
    const settled = await Promise.allSettled(pending);
    // The first failure is the cause; those behind it only report the aborted transaction.
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<QueryResult<unknown>>).value);
  });
}
