import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/verify.js';
import { createPgDatabase } from '../support/db.js';
import { apiClient, freePort, pool, runCanvassJson, spawnCanvass, waitForHttp, type CanvassProcess, type Env } from '../support/processes.js';
import { startReceiver, type Received } from '../support/receiver.js';

/**
 * Scale-out on one PostgreSQL database, with real processes: three `canvass worker`s and one
 * `canvass serve --no-worker`. Thousands of deliveries all arrive, no (delivery id, attempt)
 * pair is sent twice (FOR UPDATE SKIP LOCKED and lease fencing), and a worker SIGKILLed
 * mid-flight loses nothing.
 */

const PG = process.env.CANVASS_TEST_PG_URL;
const DEADLINE_MS = 2_000;
const LEASE_MS = 2 * DEADLINE_MS + 5_000;
const RESPONSES = 2_000;
const AFTER_KILL = 300;

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
    CANVASS_DELIVERY_TIMEOUT_MS: String(DEADLINE_MS),
    CANVASS_BATCH_WINDOW_MS: '0',
    CANVASS_RETRY_LADDER_MS: '200,200,200,200,200',
    CANVASS_SCHEDULER_TICK_MS: '50',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  };
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop(5_000)));
  await receiver?.close();
  await database?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

async function count(api: ReturnType<typeof apiClient>, webhookId: string, status: string): Promise<number> {
  let n = 0;
  let cursor: string | null = null;
  do {
    const res = await api('GET', `/webhooks/deliveries?webhookId=${webhookId}&status=${status}&limit=100${cursor ? `&startCursor=${cursor}` : ''}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    n += (res.json.data as unknown[]).length;
    cursor = res.json.hasNextPage ? (res.json.endCursor as string) : null;
  } while (cursor);
  return n;
}

describe.skipIf(!PG)('three workers and an API on one PostgreSQL database (real processes)', () => {
  it('every delivery arrives, no (delivery id, attempt) twice, and a SIGKILLed worker loses nothing', async () => {
    const T0 = Date.now(); const mark = (w: string) => process.stderr.write(`MARK ${w} ${Date.now() - T0}\n`);
    const migrated = await runCanvassJson<{ applied: string[] }>(['migrate', '--json'], env);
    expect(migrated.applied.length).toBeGreaterThan(0);
    const account = await runCanvassJson<{ accountId: string; userId: string; apiKey: string }>(['accounts', 'create', '--name', 'Scale', '--owner-email', 'scale@example.com', '--json'], env);
    expect(account.apiKey).toMatch(/^cvk_/);

    const port = await freePort();
    const server = spawnCanvass('canvass serve --no-worker', ['serve', '--no-worker'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
    procs.push(server);
    const workers = [1, 2, 3].map((n) => spawnCanvass(`canvass worker ${n}`, ['worker'], env));
    procs.push(...workers);
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`, 60_000, server);

    mark('up');
    const api = apiClient(base, account.apiKey);
    const poll = await api('POST', '/poll', { accountId: account.accountId, title: 'Scale' });
    expect(poll.status, JSON.stringify(poll.json)).toBe(201);
    const pollId = (poll.json.data as { id: string }).id;
    const slide = await api('POST', '/slide', { pollId, type: 'short-answer', title: 'Say something' });
    expect(slide.status, JSON.stringify(slide.json)).toBe(201);
    const slideId = (slide.json.data as { id: string }).id;
    expect((await api('POST', '/poll/update', { pollId, isVisible: true })).status).toBe(200);
    const p = '/scale';
    receiver.script(p, [{ status: 200 }]);
    const hook = await api('POST', '/webhooks', { pollId, url: receiver.url(p), deliveryRule: 'partial' });
    expect(hook.status, JSON.stringify(hook.json)).toBe(201);
    const webhookId = (hook.json.data as { id: string }).id;
    const secret = hook.json.signingSecret as string;

    const respondent = apiClient(base, null);
    const acked = new Set<string>();
    const submit = async (i: number) => {
      const r = await respondent('POST', '/participant/responses', { pollId, participantId: `r-${i}`, answers: [{ slideId, value: `answer ${i}` }] });
      expect(r.status, JSON.stringify(r.json)).toBe(201);
      acked.add(`r-${i}`);
    };
    const hooks = () => receiver.received.filter((r) => r.path === p);
    const participantOf = (r: Received) => (JSON.parse(r.rawBody) as { participantId: string }).participantId;
    const arrived = () => new Set(hooks().map(participantOf));

    // Phase 1: a few thousand deliveries, three workers competing for them.
    await pool(
      Array.from({ length: RESPONSES }, (_, i) => i),
      16,
      submit,
    );
    expect(acked.size).toBe(RESPONSES);
    mark('submitted');
    await until(`${RESPONSES} deliveries to arrive`, () => arrived().size >= RESPONSES, 45_000);
    await until('the log to show them delivered', async () => (await count(api, webhookId, 'delivered')) === RESPONSES, 15_000);

    mark('phase1 done');
    // Phase 2: replies held, so attempts are in flight; one worker dies under them.
    receiver.script(p, [{ status: 200, delayMs: 1_500 }]);
    const sentBefore = hooks().length;
    await pool(
      Array.from({ length: AFTER_KILL }, (_, i) => RESPONSES + i),
      16,
      submit,
    );
    await until('attempts in flight', () => hooks().length - sentBefore >= 50, 15_000);
    mark('kill');
    workers[0]!.child.kill('SIGKILL');
    expect((await workers[0]!.exited).signal).toBe('SIGKILL');
    receiver.script(p, [{ status: 200 }]);
    await until(
      'every acknowledged response to arrive and be recorded delivered',
      async () => arrived().size >= acked.size && (await count(api, webhookId, 'delivered')) === acked.size,
      LEASE_MS + 20_000,
    );

    mark('phase2 done');
    const got = arrived();
    for (const id of acked) expect(got.has(id), `delivery for ${id}`).toBe(true);
    expect(await count(api, webhookId, 'pending')).toBe(0);
    expect(await count(api, webhookId, 'in_flight')).toBe(0);
    const pairs = new Map<string, number>();
    const ids = new Set<string>();
    for (const r of hooks()) {
      const pair = `${r.headers['x-service-delivery-id']}#${r.headers['x-service-attempt']}`;
      pairs.set(pair, (pairs.get(pair) ?? 0) + 1);
      ids.add(r.headers['x-service-delivery-id']!);
    }
    const twice = [...pairs].filter(([, n]) => n > 1);
    expect(twice, 'no (delivery id, attempt) pair twice').toEqual([]);
    expect(ids.size).toBe(acked.size);
    for (const r of hooks().slice(0, 50)) verifySignature({ secret, header: r.headers['x-service-signature'], rawBody: r.rawBody });

    // The survivors and the API stop cleanly.
    for (const proc of [workers[1]!, workers[2]!, server]) expect(await proc.stop(), proc.output()).toEqual({ code: 0, signal: null });
  }, 120_000);
});
