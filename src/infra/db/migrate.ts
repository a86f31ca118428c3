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

/** Applies each pending .sql file in its own transaction; an advisory lock serialises concurrent migrators. */
export async function migrate(db: Kysely<DB>): Promise<string[]> {
  const done: string[] = [];
  for (const name of migrationNames()) {
    // Read committed whatever the server's or role's default: a statement that waited for a
    // lock then reads what committed meanwhile (015 fills a count with polls locked that way).
    const ran = await db
      .transaction()
      .setIsolationLevel('read committed')
      .execute(async (trx) => {
        await sql`SELECT pg_advisory_xact_lock(815001)`.execute(trx);
        if ((await applied(trx)).has(name)) return false;
        await sql.raw(readFileSync(DIR + name, 'utf8')).execute(trx);
        await trx.insertInto('schema_migrations').values({ name }).execute();
        return true;
      });
    if (ran) done.push(name);
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
