import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/verify.js';
import { createPgDatabase } from '../support/db.js';
import {
  apiClient,
  freePort,
  pool,
  runCanvassJson,
  spawnCanvass,
  waitForHttp,
  type CanvassProcess,
  type Env,
} from '../support/processes.js';
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
// Each response fans out to every webhook of the survey: 400 × 5 = 2,000 deliveries, then 300 more.
const WEBHOOKS = 5;
const RESPONSES = 400;
const AFTER_KILL = 60;

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
    // Fast, but long enough in total that load-induced timeouts cannot exhaust it.
    CANVASS_RETRY_LADDER_MS: '300,600,1200,2400,4800',
    CANVASS_SCHEDULER_TICK_MS: '50',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    // Each worker holds at most 16 attempts, so when replies are held all three have some in
    // flight and the one killed surely dies under its leases: with the default (512) one
    // worker's claim can take every due delivery, leaving the others none.
    CANVASS_WORKER_CONCURRENCY: '16',
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
    const res = await api(
      'GET',
      `/webhooks/deliveries?webhookId=${webhookId}&status=${status}&limit=100${cursor ? `&startCursor=${cursor}` : ''}`,
    );
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    n += (res.json.data as unknown[]).length;
    cursor = res.json.hasNextPage ? (res.json.endCursor as string) : null;
  } while (cursor);
  return n;
}

describe.skipIf(!PG)('three workers and an API on one PostgreSQL database (real processes)', () => {
  it('every delivery arrives, no (delivery id, attempt) twice, and a SIGKILLed worker loses nothing', async () => {
    const migrated = await runCanvassJson<{ applied: string[] }>(['migrate', '--json'], env);
    expect(migrated.applied.length).toBeGreaterThan(0);
    const port = await freePort();
    const server = spawnCanvass('canvass serve --no-worker', ['serve', '--no-worker'], {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    });
    procs.push(server);
    const workers = [1, 2, 3].map((n) => spawnCanvass(`canvass worker ${n}`, ['worker'], env));
    procs.push(...workers);
    // The CLI works beside the running processes (PostgreSQL has no single-writer lock).
    const account = await runCanvassJson<{ accountId: string; userId: string; apiKey: string }>(
      ['accounts', 'create', '--name', 'Scale', '--owner-email', 'scale@example.com', '--json'],
      env,
    );
    expect(account.apiKey).toMatch(/^cvk_/);
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`, 60_000, server);

    const api = apiClient(base, account.apiKey);
    const poll = await api('POST', '/poll', { accountId: account.accountId, title: 'Scale' });
    expect(poll.status, JSON.stringify(poll.json)).toBe(201);
    const pollId = (poll.json.data as { id: string }).id;
    const slide = await api('POST', '/slide', { pollId, type: 'short-answer', title: 'Say something' });
    expect(slide.status, JSON.stringify(slide.json)).toBe(201);
    const slideId = (slide.json.data as { id: string }).id;
    expect((await api('POST', '/poll/update', { pollId, isVisible: true })).status).toBe(200);
    const paths = Array.from({ length: WEBHOOKS }, (_, i) => `/scale-${i}`);
    const webhookIds: string[] = [];
    let secret = '';
    for (const p of paths) {
      receiver.script(p, [{ status: 200 }]);
      const hook = await api('POST', '/webhooks', { pollId, url: receiver.url(p), deliveryRule: 'partial' });
      expect(hook.status, JSON.stringify(hook.json)).toBe(201);
      webhookIds.push((hook.json.data as { id: string }).id);
      secret ||= hook.json.signingSecret as string;
    }
    expect(secret).toMatch(/^whsec_/);
    const script = (replies: Parameters<typeof receiver.script>[1]) =>
      paths.forEach((p) => receiver.script(p, replies));
    // Nothing left in any other state (each such list is one short page when all is well).
    const settled = async () => {
      for (const w of webhookIds)
        for (const status of ['pending', 'in_flight', 'rejected', 'given_up', 'cancelled'])
          if ((await count(api, w, status)) > 0) return false;
      return true;
    };
    const delivered = async () => {
      let n = 0;
      for (const w of webhookIds) n += await count(api, w, 'delivered');
      return n;
    };

    const respondent = apiClient(base, null);
    const acked = new Set<string>();
    const submit = async (i: number) => {
      const r = await respondent('POST', '/participant/responses', {
        pollId,
        participantId: `r-${i}`,
        answers: [{ slideId, value: `answer ${i}` }],
      });
      expect(r.status, JSON.stringify(r.json)).toBe(201);
      acked.add(`r-${i}`);
    };
    const hooks = () => receiver.received.filter((r) => r.path.startsWith('/scale-'));
    const eventOf = (r: Received) => `${r.path} ${(JSON.parse(r.rawBody) as { participantId: string }).participantId}`;
    const arrived = () => new Set(hooks().map(eventOf));
    const expected = () => [...acked].flatMap((id) => paths.map((p) => `${p} ${id}`));

    // Phase 1: a few thousand deliveries, three workers competing for them.
    await pool(
      Array.from({ length: RESPONSES }, (_, i) => i),
      16,
      submit,
    );
    expect(acked.size).toBe(RESPONSES);
    await until(`${RESPONSES * WEBHOOKS} deliveries to arrive`, () => arrived().size >= RESPONSES * WEBHOOKS, 45_000);
    await until('the log to show them delivered', settled, 15_000);
    expect(await delivered()).toBe(RESPONSES * WEBHOOKS);

    // Phase 2: replies held, so attempts are in flight; one worker dies under them.
    script([{ status: 200, delayMs: 800 }]);
    const sentBefore = hooks().length;
    await pool(
      Array.from({ length: AFTER_KILL }, (_, i) => RESPONSES + i),
      16,
      submit,
    );
    await until('attempts in flight', () => hooks().length - sentBefore >= 50, 15_000);
    workers[0]!.child.kill('SIGKILL');
    expect((await workers[0]!.exited).signal).toBe('SIGKILL');
    const killedAt = Date.now();
    script([{ status: 200 }]);
    await until(
      'every acknowledged response to arrive and be recorded delivered',
      async () => arrived().size >= acked.size * WEBHOOKS && (await settled()),
      LEASE_MS + 20_000,
    );

    const got = arrived();
    for (const e of expected()) expect(got.has(e), `delivery of ${e}`).toBe(true);
    expect(await delivered()).toBe(acked.size * WEBHOOKS);
    const pairs = new Map<string, number>();
    const ids = new Set<string>();
    for (const r of hooks()) {
      const pair = `${r.headers['x-service-delivery-id']}#${r.headers['x-service-attempt']}`;
      pairs.set(pair, (pairs.get(pair) ?? 0) + 1);
      ids.add(r.headers['x-service-delivery-id']!);
    }
    const twice = [...pairs].filter(([, n]) => n > 1);
    expect(twice, 'no (delivery id, attempt) pair twice').toEqual([]);
    expect(ids.size).toBe(acked.size * WEBHOOKS);
    // The dead worker's leases expired and its deliveries were taken over, under later attempt numbers.
    expect(hooks().some((r) => r.at > killedAt && Number(r.headers['x-service-attempt']) > 1)).toBe(true);
    // A 2xx ends a delivery. An id sent more than once must have failed (or died
    // unrecorded) before: a recorded 2xx followed by another attempt is a double claim.
    const perId = new Map<string, number>();
    for (const r of hooks())
      perId.set(r.headers['x-service-delivery-id']!, (perId.get(r.headers['x-service-delivery-id']!) ?? 0) + 1);
    for (const [id, n] of perId) {
      if (n === 1) continue;
      const d = await api('GET', `/webhooks/delivery?deliveryId=${id}`);
      const detail = d.json.data as { attemptCount: number; attempts: { number: number; statusCode: number | null }[] };
      expect(n).toBeLessThanOrEqual(detail.attemptCount);
      const early = detail.attempts
        .slice(0, -1)
        .filter((a) => a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300);
      expect(early, `${id} was sent again after a recorded 2xx`).toEqual([]);
    }
    for (const r of hooks()) verifySignature({ secret, header: r.headers['x-service-signature'], rawBody: r.rawBody });

    // The survivors and the API stop cleanly.
    for (const proc of [workers[1]!, workers[2]!, server])
      expect(await proc.stop(), proc.output()).toEqual({ code: 0, signal: null });
  }, 120_000);
});
