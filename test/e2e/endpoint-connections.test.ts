import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase } from '../support/db.js';
import { surveyWithWebhooks, until } from '../support/e2e.js';
import {
  apiClient,
  freePort,
  pool,
  runCanvassJson,
  spawnCanvass,
  startServe,
  type CanvassProcess,
  type Env,
} from '../support/processes.js';
import { startReceiver } from '../support/receiver.js';

/**
 * The per-endpoint bound holds across worker processes: two `canvass worker`s on one PostgreSQL
 * database with CANVASS_ENDPOINT_CONNECTIONS=8 hold at most 8 connections to one endpoint origin
 * between them (4 each), not 8 each; when one dies, the other takes the whole bound again
 * (docs/operations.md, "Scaling").
 */

const PG = process.env.CANVASS_TEST_PG_URL;
const RESPONSES = 120;
const BOUND = 8;
const SHARED = (workers: number, each: number) =>
  new RegExp(`"workers":${workers},"connectionsPerOrigin":${each},"msg":"endpoint connections shared among workers"`);

/** The sharing gauges of a scrape. */
async function gauges(url: string): Promise<Record<string, number>> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const out: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const m = /^(canvass_workers|canvass_endpoint_connections_per_origin) (\S+)$/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

let database: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const procs: CanvassProcess[] = [];
let env: Env;

beforeAll(async () => {
  if (!PG) return;
  database = await createPgDatabase();
  receiver = await startReceiver();
  env = {
    DATABASE_URL: database.url,
    CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
    CANVASS_BATCH_WINDOW_MS: '0',
    CANVASS_SCHEDULER_TICK_MS: '50',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    CANVASS_ENDPOINT_CONNECTIONS: String(BOUND),
    // A third of the deliveries at most in flight in each, so that one worker cannot claim them
    // all and both have more waiting than their share of connections.
    CANVASS_WORKER_CONCURRENCY: String(RESPONSES / 3),
    LOG_LEVEL: 'info',
  };
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop(5_000)));
  await receiver?.close();
  await database?.drop();
});

describe.skipIf(!PG)('connections to one endpoint, shared by the workers of a database (real processes)', () => {
  it('two workers hold the bound between them, and one left alone takes all of it again', async () => {
    await runCanvassJson(['migrate', '--json'], env);
    const account = await runCanvassJson<{ accountId: string; apiKey: string }>(
      ['accounts', 'create', '--name', 'Share', '--owner-email', 'share@example.com', '--json'],
      env,
    );
    const { base } = await startServe('canvass serve --no-worker', env, procs, ['serve', '--no-worker']);
    const metricsPorts = [await freePort(), await freePort()];
    const workers = metricsPorts.map((port, i) =>
      spawnCanvass(`canvass worker ${i + 1}`, ['worker'], {
        ...env,
        CANVASS_METRICS_PORT: String(port),
        HOST: '127.0.0.1',
      }),
    );
    procs.push(...workers);
    // Each has counted the other (the second's arrival makes the first count again).
    for (const w of workers) await w.waitForOutput(SHARED(2, BOUND / 2), 30_000);
    for (const port of metricsPorts) {
      const scraped = await gauges(`http://127.0.0.1:${port}/metrics`);
      expect(scraped).toEqual({ canvass_workers: 2, canvass_endpoint_connections_per_origin: BOUND / 2 });
    }
    // An API server without a worker divides nothing and reports neither gauge.
    expect(await gauges(`${base}/metrics`)).toEqual({});

    const api = apiClient(base, account.apiKey);
    // Answers held, so that every delivery claimed waits on a connection and each worker wants far more than its share.
    receiver.script('/wide', [{ status: 200, delayMs: 200 }]);
    const survey = await surveyWithWebhooks(api, account.accountId, {
      title: 'Share',
      slides: ['Say something'],
      webhooks: [{ url: receiver.url('/wide'), deliveryRule: 'partial' }],
    });
    const respondent = apiClient(base, null);
    await pool(
      Array.from({ length: RESPONSES }, (_, i) => i),
      16,
      async (i) => {
        const r = await respondent('POST', '/participant/responses', {
          pollId: survey.pollId,
          participantId: `r-${i}`,
          answers: [{ slideId: survey.slideIds[0], value: `answer ${i}` }],
        });
        expect(r.status, JSON.stringify(r.json)).toBe(201);
      },
    );
    const ids = () =>
      new Set(receiver.received.filter((r) => r.path === '/wide').map((r) => r.headers['x-service-delivery-id']));
    await until(`${RESPONSES} deliveries to arrive`, () => ids().size >= RESPONSES, 60_000);
    const shared = receiver.connections().most;
    // More than one worker's share was open at once (both sent), and never more than the bound.
    expect(shared).toBeGreaterThan(BOUND / 2);
    expect(shared).toBeLessThanOrEqual(BOUND);

    // One worker dies: the other notices at its next count and takes the whole bound.
    workers[0]!.child.kill('SIGKILL');
    await workers[0]!.exited;
    await workers[1]!.waitForOutput(SHARED(1, BOUND), 30_000);
  }, 120_000);
});
