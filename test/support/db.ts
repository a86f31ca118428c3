import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/infra/db/database.js';
import { migrationNames } from '../../src/infra/db/migrate.js';
import { seededDataDir } from './pglite-template.js';

export const onPostgres = !!process.env.CANVASS_TEST_PG_URL;

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = '/' + name;
  return u.toString();
}

/** A PostgreSQL database made for one test file; returns its URL and a function that drops it. */
export async function createPgDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.CANVASS_TEST_PG_URL!;
  const name = `canvass_test_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  return {
    url: withDatabase(admin, name),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/**
 * Fresh, migrated storage for one test file: PGlite on a data directory of its own (copied from
 * the run's migrated template, pglite-template.ts) by default, a new PostgreSQL database when
 * CANVASS_TEST_PG_URL is set (the CI's second pass). Closing drops it.
 */
export async function testDatabase(): Promise<Database> {
  if (!onPostgres) {
    const dataDir = await seededDataDir('test-db');
    const database = await openDatabase({ dataDir, schema: 'apply' }).catch((e: unknown) => {
      rmSync(dataDir, { recursive: true, force: true });
      throw e;
    });
    return {
      ...database,
      async close() {
        try {
          await database.close();
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
    };
  }
  const made = await createPgDatabase();
  const database = await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'apply', poolSize: 5 }).catch(
    async (e: unknown) => {
      await made.drop();
      throw e;
    },
  );
  return {
    ...database,
    async close() {
      await database.close();
      await made.drop();
    },
  };
}

/**
 * Storage brought up to just before `migration` (e.g. '008'), as a database of that release
 * would be: for tests of what a migration does to existing rows. Closing drops it.
 */
export async function databaseBefore(migration: string): Promise<Database & { url?: string }> {
  const dir = fileURLToPath(new URL('../../src/infra/db/migrations/', import.meta.url));
  let database: Database;
  let drop = async () => {};
  let url: string | undefined;
  if (onPostgres) {
    const made = await createPgDatabase();
    drop = made.drop;
    url = made.url;
    database = await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'none', poolSize: 2 });
  } else {
    database = await openDatabase({ dataDir: '', memory: true, schema: 'none' });
  }
  const db = database.db;
  await sql`CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`.execute(
    db,
  );
  for (const name of migrationNames().filter((n) => n < migration)) {
    await sql.raw(readFileSync(dir + name, 'utf8')).execute(db);
    await sql`INSERT INTO schema_migrations (name) VALUES (${name})`.execute(db);
  }
  return {
    ...database,
    ...(url ? { url } : {}),
    async close() {
      await database.close();
      await drop();
    },
  };
}
