import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/**
 * How far this process's clock is from the database's, in ms (positive: this one runs ahead),
 * read as the database's time against the middle of the round trip that fetched it.
 */
export async function clockSkew(db: Kysely<DB>): Promise<{ skewMs: number; roundTripMs: number }> {
  const sentAt = Date.now();
  const { rows } = await sql<{
    ms: string;
  }>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms`.execute(db);
  const answeredAt = Date.now();
  return {
    skewMs: Math.round((sentAt + answeredAt) / 2 - Number(rows[0]!.ms)),
    roundTripMs: answeredAt - sentAt,
  };
}
