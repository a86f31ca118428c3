import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type { EmbeddedDb } from './embedded-client.js';
import { PipelinedDriver } from './pipelined-driver.js';

/**
 * PGlite is one connection. Kysely holds a connection for a whole transaction, so
 * acquisitions queue here: a transaction runs alone, and plain queries wait their turn.
 * PGlite works on a thread of its own (embedded-client.ts): while it runs a statement, this
 * thread serves sockets (requests, endpoint answers), and each answer comes back as an event,
 * so queued statements never hold the event loop.
 */
class PGliteDriver implements Driver {
  #tail: Promise<void> = Promise.resolve();
  #release = new WeakMap<DatabaseConnection, () => void>();

  constructor(private readonly db: EmbeddedDb) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const turn = new Promise<void>((r) => (release = r));
    const previous = this.#tail;
    this.#tail = previous.then(() => turn);
    await previous;
    const conn = new PGliteConnection(this.db);
    this.#release.set(conn, release);
    return conn;
  }

  async beginTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    this.#release.get(conn)?.();
    this.#release.delete(conn);
  }

  async destroy(): Promise<void> {
    await this.#tail;
    await this.db.close();
  }
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly db: EmbeddedDb) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Parameterless text may hold several statements (migrations): only exec runs those.
    const result =
      query.parameters.length === 0
        ? (await this.db.exec(query.sql)).at(-1)
        : await this.db.query(query.sql, query.parameters);
    // PostgreSQL answers COMMIT in a failed transaction with ROLLBACK, and no error.
    if (result?.command === 'ROLLBACK' && /^\s*commit\s*$/i.test(query.sql))
      throw Object.assign(
        new Error('the transaction was rolled back instead of committed: one of its statements failed'),
        {
          code: '25P02',
        },
      );
    return {
      rows: (result?.rows ?? []) as R[],
      numAffectedRows: result?.affectedRows !== undefined ? BigInt(result.affectedRows) : undefined,
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on PGlite; page with a cursor instead');
  }
}

export class PGliteDialect implements Dialect {
  constructor(private readonly db: EmbeddedDb) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  // BEGIN goes out with the first statement and COMMIT can follow the last one unawaited, as on
  // PostgreSQL (pipelined-driver.ts): a transaction holds the one connection for fewer trips.
  createDriver(): Driver {
    return new PipelinedDriver(new PGliteDriver(this.db));
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}
