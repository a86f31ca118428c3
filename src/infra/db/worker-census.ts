import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/** The application name of each worker's notification session (due-listener.ts): its presence. */
export const WORKER_APPLICATION_NAME = 'canvass-worker';

/**
 * How many worker processes deliver from this database: the other workers' notification
 * sessions, plus this process. A worker that dies loses its session, and with it its place.
 * `ownSession` is this process's own session (its backend pid), so it is not counted twice.
 */
export async function countWorkers(db: Kysely<DB>, ownSession: number | null): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND application_name = ${WORKER_APPLICATION_NAME}
      AND pid IS DISTINCT FROM ${ownSession}::int`.execute(db);
  return rows[0]!.n + 1;
}
