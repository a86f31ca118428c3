import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/** What the application names of workers' notification sessions (due-listener.ts) begin with. */
export const WORKER_APPLICATION_PREFIX = 'canvass-worker:';

/** A name for this process's notification session: its presence among the workers, one per process. */
export const workerApplicationName = (): string => WORKER_APPLICATION_PREFIX + randomBytes(8).toString('hex');

/**
 * How many worker processes deliver from this database: the other workers' names among the
 * sessions, plus this process. Names, not sessions, are counted, so a worker whose old session
 * has not yet gone while its new one is up counts once; a worker that dies loses its session,
 * and with it its place.
 */
export async function countWorkers(db: Kysely<DB>, ownName: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(DISTINCT application_name)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND starts_with(application_name, ${WORKER_APPLICATION_PREFIX})
      AND application_name <> ${ownName}`.execute(db);
  return rows[0]!.n + 1;
}
