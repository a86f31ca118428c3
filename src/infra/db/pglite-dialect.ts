import type { PGlite } from '@electric-sql/pglite';
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

/**
 * PGlite is one connection. Kysely holds a connection for a whole transaction, so
 * acquisitions queue here: a transaction runs alone, and plain queries wait their turn.
 * PGlite answers without leaving the event loop, so each turn starts on the event loop's next
 * pass: socket reads waiting meanwhile (requests, endpoint answers) are served between turns
 * rather than after the whole queue, and submissions arriving together join one group.
 */
class PGliteDriver implements Driver {
  #tail: Promise<void> = Promise.resolve();
  #release = new WeakMap<DatabaseConnection, () => void>();

  constructor(private readonly db: PGlite) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    let release!: () => void;
    const turn = new Promise<void>((r) => (release = r));
    const previous = this.#tail;
    this.#tail = previous.then(() => turn);
    await previous;
    await new Promise<void>((r) => setImmediate(r)); // see the class comment
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
  constructor(private readonly db: PGlite) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Parameterless text may hold several statements (migrations): only exec runs those.
    if (query.parameters.length === 0) {
      const results = await this.db.exec(query.sql);
      const last = results[results.length - 1];
      return {
        rows: (last?.rows ?? []) as R[],
        numAffectedRows: last?.affectedRows !== undefined ? BigInt(last.affectedRows) : undefined,
      };
    }
    const result = await this.db.query<R>(query.sql, query.parameters as unknown[]);
    return {
      rows: result.rows,
      numAffectedRows: result.affectedRows !== undefined ? BigInt(result.affectedRows) : undefined,
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on PGlite; page with a cursor instead');
  }
}

export class PGliteDialect implements Dialect {
  constructor(private readonly db: PGlite) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.db);
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}
