import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { lockDataDir } from './data-dir-lock.js';
import { openEmbedded } from './embedded-client.js';
import { migrate, pendingMigrations } from './migrate.js';
import { isConnectionFailure, StorageUnreachableError } from './unavailable.js';
import { PipelinedPostgresDialect } from './pipelined-driver.js';
import { runNamedStatementsPrepared } from './prepared.js';
import './type-parsers.js';
import { PGliteDialect } from './pglite-dialect.js';
import type { DB } from './schema.js';

export type Database = {
  db: Kysely<DB>;
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
  /** Why it cannot serve again without a restart (the embedded database's thread stopped). */
  failure?(): Error | undefined;
  /** The embedded database's thread: ended by terminate() as a crash would end it. */
  thread?: Pick<Worker, 'threadId' | 'terminate'>;
};

export type OpenOptions = {
  databaseUrl?: string | undefined;
  dataDir: string;
  /**
   * What to do about the schema on open. Default: embedded storage migrates itself, PostgreSQL
   * only checks (operators run `canvass migrate`). 'none' is for the migrate command itself.
   */
  schema?: 'apply' | 'check' | 'none';
  /** In-memory PGlite (tests). */
  memory?: boolean;
  /** Told once when the embedded database stops on its own (a restart is needed). */
  onStopped?: (e: Error) => void;
  poolSize?: number;
  /** How long opening one PostgreSQL connection may take (CANVASS_DB_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
};

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

export class SchemaOutOfDateError extends Error {
  constructor(readonly pending: string[]) {
    super(`the database schema is not up to date (pending: ${pending.join(', ')}); run \`canvass migrate\` first`);
    this.name = 'SchemaOutOfDateError';
  }
}

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  if (opts.databaseUrl) {
    // Pipeline mode: see pipelined-driver.ts.
    // Each new connection is given up after connectTimeoutMs (an unreachable host otherwise waits
    // for the operating system's connect timeout, minutes); waiting for a busy pool's connection
    // is not bounded by it, so a burst of requests queues rather than failing.
    const connectionTimeoutMillis = opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    class Client extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionTimeoutMillis });
      }
    }
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10, pipeline: true, Client });
    // An idle connection the server ends (restart, failover, pg_terminate_backend, a database
    // dropped WITH (FORCE)) makes the pool emit 'error'; with no listener that kills the process.
    // The pool has already discarded that client and the next query opens a new one.
    pool.on('error', () => {});
    // A client that is checked out (between the queries of a transaction, or running one) has
    // no pool listener: a server shutdown (FATAL 57P01) or a dropped socket then emits 'error'
    // on it unheard, which kills the process. The query in progress already fails with that
    // error, and the client, no longer queryable, is discarded when released.
    pool.on('connect', (client) => {
      client.on('error', () => {});
      runNamedStatementsPrepared(client);
    });
    const db = new Kysely<DB>({ dialect: new PipelinedPostgresDialect({ pool }) });
    try {
      const mode = opts.schema ?? 'check';
      // Connected once whatever the mode, so that an unreachable database is named here.
      if (mode === 'none') await sql`SELECT 1`.execute(db);
      if (mode === 'apply') await migrate(db);
      if (mode === 'check') {
        const pending = await pendingMigrations(db);
        if (pending.length) throw new SchemaOutOfDateError(pending);
      }
    } catch (e) {
      await db.destroy();
      throw isConnectionFailure(e) ? new StorageUnreachableError(opts.databaseUrl, e) : e;
    }
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  const unlock = opts.memory ? async () => {} : await lockDataDir(opts.dataDir);
  let opened: Kysely<DB> | undefined;
  try {
    const lite = await openEmbedded(opts.memory ? null : path.join(opts.dataDir, 'pgdata'), {
      ...(opts.onStopped ? { onStopped: opts.onStopped } : {}),
    });
    const db = (opened = new Kysely<DB>({ dialect: new PGliteDialect(lite) }));
    if ((opts.schema ?? 'apply') !== 'none') await migrate(db);
    return {
      db,
      kind: 'pglite',
      failure: () => lite.failure(),
      thread: lite.thread,
      close: async () => {
        try {
          await db.destroy();
        } finally {
          await unlock();
        }
      },
    };
  } catch (e) {
    await opened?.destroy().catch(() => {});
    await unlock();
    throw e;
  }
}
