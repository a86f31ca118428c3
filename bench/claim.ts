import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { createStore } from '../dist/infra/db/store.js';
import { freshDatabase, percentile, type Storage } from './lib.js';

export type ClaimResult = { storage: Storage; pending: number; due: number; medianMs: number; p99Ms: number };

/**
 * Claim cost with a large backlog: `pending` rows, 1% due and the rest scheduled hours ahead
 * (retries), then many claims of 128, each rolled back so every claim sees the same table.
 */
export async function claimCost(storage: Storage, pending: number, samples = 40): Promise<ClaimResult> {
  const fresh = await freshDatabase(storage);
  try {
    const db = fresh.database.db;
    const due = Math.max(128, Math.floor(pending / 100));
    // The claim joins the account (for its signing secret) like production rows would.
    await sql`INSERT INTO accounts (id, name, plan, signing_secret, created_at, updated_at) VALUES ('acc_bench', 'Bench', 'premium', 'whsec_bench', now(), now())`.execute(
      db,
    );
    await sql`
      INSERT INTO deliveries (id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, status, body, created_at)
      SELECT 'dlv_' || lpad(g::text, 22, '0'), 'acc_bench', 'poll_bench', NULL, 'end_' || (g % 100), 'webhook', 'https://127.0.0.1/e',
             'prt_' || g, 'submitted-responses', 'pending', '{"type":"submitted-responses"}', now()
      FROM generate_series(1, ${pending}) AS g`.execute(db);
    await sql`
      INSERT INTO delivery_queue (delivery_id, next_attempt_at)
      SELECT 'dlv_' || lpad(g::text, 22, '0'),
             CASE WHEN g <= ${due} THEN now() - interval '1 second' ELSE now() + ((g % 21600) || ' seconds')::interval END
      FROM generate_series(1, ${pending}) AS g`.execute(db);
    await sql`ANALYZE deliveries`.execute(db);
    await sql`ANALYZE delivery_queue`.execute(db);
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      await db
        .transaction()
        .execute(async (trx) => {
          const claimed = await createStore(trx).deliveries.claim(
            new Date(),
            128,
            new Date(Date.now() + 60_000),
            'bench',
            new Date(0),
          );
          if (claimed.length !== 128) throw new Error(`claimed ${claimed.length}`);
          times.push(performance.now() - started);
          throw new RollBack();
        })
        .catch((e: unknown) => {
          if (!(e instanceof RollBack)) throw e;
        });
    }
    times.sort((a, b) => a - b);
    return { storage, pending, due, medianMs: percentile(times, 50), p99Ms: percentile(times, 99) };
  } finally {
    await fresh.drop();
  }
}

class RollBack extends Error {}
