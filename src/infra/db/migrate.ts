import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

const DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export function migrationNames(): string[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort();
}

async function applied(db: Kysely<DB>): Promise<Set<string>> {
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`.execute(
    db,
  );
  const rows = await db.selectFrom('schema_migrations').select('name').execute();
  return new Set(rows.map((r) => r.name));
}

/**
 * How long a migration waits for a table lock before it gives way, and how often it tries.
 * A statement that changes a table waits behind any transaction reading it, and every query of
 * that table queues behind the waiting statement: a bounded wait keeps a long reader (a backup,
 * a report) from stopping submissions for its whole length. docs/operations.md, Upgrades.
 */
export type LockWaits = { lockTimeoutMs: number; tries: number; pauseMs: number };
const LOCK_WAITS: LockWaits = { lockTimeoutMs: 5_000, tries: 12, pauseMs: 1_000 };

/** PostgreSQL's lock_not_available: lock_timeout ran out. */
const isLockTimeout = (e: unknown) => (e as { code?: unknown } | null)?.code === '55P03';

/** Applies each pending .sql file in its own transaction; an advisory lock serialises concurrent migrators. */
export async function migrate(db: Kysely<DB>, waits: LockWaits = LOCK_WAITS): Promise<string[]> {
  const done: string[] = [];
  for (const name of migrationNames()) {
    // Read committed whatever the server's or role's default: a statement that waited for a
    // lock then reads what committed meanwhile (015 fills a count with polls locked that way).
    const attempt = () =>
      db
        .transaction()
        .setIsolationLevel('read committed')
        .execute(async (trx) => {
          await sql`SELECT pg_advisory_xact_lock(815001)`.execute(trx);
          if ((await applied(trx)).has(name)) return false;
          // After the advisory lock: another migrator's long migration is waited for in full.
          await sql.raw(`SET LOCAL lock_timeout = ${Math.trunc(waits.lockTimeoutMs)}`).execute(trx);
          await sql.raw(readFileSync(DIR + name, 'utf8')).execute(trx);
          await trx.insertInto('schema_migrations').values({ name }).execute();
          return true;
        });
    for (let tried = 1; ; tried++) {
      try {
        if (await attempt()) done.push(name);
        break;
      } catch (e) {
        if (!isLockTimeout(e)) throw e;
        if (tried >= waits.tries)
          throw new Error(
            `migration ${name} gave way ${tried} times to a transaction holding a table it changes (pg_stat_activity shows it); nothing of it was applied: run canvass migrate again once that transaction ends`,
            { cause: e },
          );
        await new Promise((r) => setTimeout(r, waits.pauseMs));
      }
    }
  }
  return done;
}

/** Read-only: works for a role that may not create tables, and says what `canvass migrate` would apply. */
export async function pendingMigrations(db: Kysely<DB>): Promise<string[]> {
  const exists = await sql<{ t: string | null }>`SELECT to_regclass('schema_migrations')::text AS t`.execute(db);
  if (!exists.rows[0]?.t) return migrationNames();
  const have = new Set((await db.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name));
  return migrationNames().filter((n) => !have.has(n));
}
