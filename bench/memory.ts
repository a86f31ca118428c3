import { spawn } from 'node:child_process';
import path from 'node:path';
import { sql } from 'kysely';
import { freshDatabase, HERE, rssSampler, sleep, SECRET, type Receiver } from './lib.js';

const CLI = path.join(HERE, '..', 'dist', 'cli', 'index.js');

/** Peak RSS of a `canvass worker` process with 100k pending deliveries and 256 in flight (a slow receiver holds them). */
export async function workerMemory(
  receiver: Receiver,
  pending = 100_000,
  seconds = 15,
): Promise<{ pending: number; inFlight: number; peakRssMiB: number }> {
  const fresh = await freshDatabase('postgres');
  try {
    const db = fresh.database.db;
    const now = new Date();
    await db
      .insertInto('accounts')
      .values({
        id: 'acc_bench',
        name: 'Bench',
        plan: 'premium',
        defaults: '{}',
        signing_secret: SECRET,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const body = JSON.stringify({
      type: 'submitted-responses',
      accountId: 'acc_bench',
      pollId: 'poll_bench',
      responses: { sld_a: { value: 'x'.repeat(400) } },
    });
    await sql`
      INSERT INTO deliveries (id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, status, body, created_at)
      SELECT 'dlv_' || lpad(g::text, 22, '0'), 'acc_bench', 'poll_bench', NULL, 'end_' || (g % 10), 'webhook',
             'https://127.0.0.1:' || ${receiver.port} || '/endpoint/' || (g % 10), 'prt_' || g, 'submitted-responses', 'pending', ${body}, now()
      FROM generate_series(1, ${pending}) AS g`.execute(db);
    await sql`INSERT INTO delivery_queue (delivery_id, next_attempt_at) SELECT 'dlv_' || lpad(g::text, 22, '0'), now() FROM generate_series(1, ${pending}) AS g`.execute(
      db,
    );
    await receiver.ask({ cmd: 'delay', delayMs: 60_000 });
    await receiver.ask({ cmd: 'reset' });
    // Started as README "Production" says (NODE_OPTIONS=--max-semi-space-size=64).
    const worker = spawn(process.execPath, ['--max-semi-space-size=64', CLI, 'worker'], {
      env: {
        ...process.env,
        DATABASE_URL: fresh.url,
        CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
        CANVASS_WORKER_CONCURRENCY: '256',
        CANVASS_DELIVERY_TIMEOUT_MS: '60000',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const sampler = rssSampler(worker.pid!);
    await sleep(seconds * 1000);
    const inFlight = Number(
      (
        await sql<{ n: number }>`SELECT count(*)::int AS n FROM delivery_queue WHERE lease_token IS NOT NULL`.execute(
          db,
        )
      ).rows[0]?.n ?? 0,
    );
    const peak = sampler.stop();
    worker.kill('SIGKILL');
    await new Promise((r) => worker.on('exit', r));
    await receiver.ask({ cmd: 'delay', delayMs: 0 });
    return { pending, inFlight, peakRssMiB: peak / 1024 / 1024 };
  } finally {
    await fresh.drop();
  }
}
