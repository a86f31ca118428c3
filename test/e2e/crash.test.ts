import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/verify.js';
import { onPostgres } from '../support/db.js';
import { seededDataDir } from '../support/pglite-template.js';
import { apiClient, freePort, pool, spawnCanvass, waitForHttp, type CanvassProcess } from '../support/processes.js';
import { startReceiver, type Received } from '../support/receiver.js';

/**
 * At-least-once across a crash, with real processes: `canvass serve` on embedded storage is
 * SIGKILLed while deliveries are in flight; a new `serve` on the same data directory must
 * deliver every response it acknowledged (duplicates allowed, losses not). Once with deliveries
 * the API queues (no batch window), once with deliveries a batch flush handed to its runner
 * leased (a window of 200 ms), which only the lease's end makes due again.
 */

const DEADLINE_MS = 1_000;
// The endpoint holds each request a while, so at the kill the worker has requests sent and not
// yet answered; well inside the deadline, so that a loaded machine does not turn it into timeouts.
const REPLY_DELAY_MS = 400;
// Fast, but long enough in total that a burst of load-induced timeouts cannot exhaust it.
const LADDER = '300,600,1200,2400,4800';
const LEASE_MS = 2 * DEADLINE_MS + 5_000;

let receiver: Awaited<ReturnType<typeof startReceiver>>;
const dataDirs: string[] = [];
const procs: CanvassProcess[] = [];

beforeAll(async () => {
  if (onPostgres) return;
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop(5_000)));
  await receiver?.close();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function startServe(dataDir: string, batchWindowMs: number) {
  const port = await freePort();
  const proc = spawnCanvass('canvass serve', ['serve'], {
    CANVASS_DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
    CANVASS_DELIVERY_TIMEOUT_MS: String(DEADLINE_MS),
    CANVASS_BATCH_WINDOW_MS: String(batchWindowMs),
    CANVASS_RETRY_LADDER_MS: LADDER,
    CANVASS_SCHEDULER_TICK_MS: '50',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  });
  procs.push(proc);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, 60_000, proc);
  return { proc, base };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** Every page of a list endpoint. */
async function all<T>(call: ReturnType<typeof apiClient>, p: string): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const res = await call('GET', `${p}&limit=100${cursor ? `&startCursor=${cursor}` : ''}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    out.push(...(res.json.data as T[]));
    cursor = res.json.hasNextPage ? (res.json.endCursor as string) : null;
  } while (cursor);
  return out;
}

// Embedded storage only: the PostgreSQL pass (CANVASS_TEST_PG_URL) would run the very same thing again.
describe.skipIf(onPostgres)('crash recovery (real processes, embedded storage)', () => {
  it.each([
    { batchWindowMs: 0, made: 'queued by the API' },
    { batchWindowMs: 200, made: 'handed by a batch flush to its runner' },
  ])(
    'SIGKILL with deliveries $made in flight: a restarted serve delivers every acknowledged response',
    async ({ batchWindowMs }) => {
      const PATH = `/crash-hook-${batchWindowMs}`;
      const hooks = () => receiver.received.filter((r) => r.path === PATH);
      const dataDir = await seededDataDir('crash');
      dataDirs.push(dataDir);
      receiver.script(PATH, [{ status: 200, delayMs: REPLY_DELAY_MS }]);
      const first = await startServe(dataDir, batchWindowMs);
      const seeded = await first.proc.waitForOutput(
        /(acc_[A-Za-z0-9]+)[^\n]*\n[^\n]*Owner API key, shown only this once: (cvk_[A-Za-z0-9]+)/,
      );
      const [, accountId, key] = seeded;
      let api = apiClient(first.base, key!);

      const poll = await api('POST', '/poll', { accountId, title: 'Crash test' });
      expect(poll.status, JSON.stringify(poll.json)).toBe(201);
      const pollId = (poll.json.data as { id: string }).id;
      const slide = await api('POST', '/slide', { pollId, type: 'short-answer', title: 'Anything to add?' });
      expect(slide.status, JSON.stringify(slide.json)).toBe(201);
      const slideId = (slide.json.data as { id: string }).id;
      expect((await api('POST', '/poll/update', { pollId, isVisible: true })).status).toBe(200);
      const hook = await api('POST', '/webhooks', { pollId, url: receiver.url(PATH), deliveryRule: 'partial' });
      expect(hook.status, JSON.stringify(hook.json)).toBe(201);
      const webhookId = (hook.json.data as { id: string }).id;
      const secret = hook.json.signingSecret as string;
      expect(secret).toMatch(/^whsec_/);

      // Respondents (no key). Only what was acknowledged with a 201 must arrive.
      const acked = new Map<string, string[]>();
      const submit = (base: string, i: number) =>
        apiClient(base, null)('POST', '/participant/responses', {
          pollId,
          participantId: `resp-${i}`,
          answers: [{ slideId, value: `answer ${i}` }],
        }).then(
          (r) => {
            if (r.status === 201) acked.set(`resp-${i}`, (r.json.data as { responseIds: string[] }).responseIds);
            else expect(r.status, JSON.stringify(r.json)).toBe(201);
          },
          () => {
            // The process died under this request: not acknowledged, so no promise was made.
          },
        );
      await pool(
        Array.from({ length: 50 }, (_, i) => i),
        8,
        (i) => submit(first.base, i),
      );
      expect(acked.size).toBe(50);
      await until('deliveries to be in flight', () => hooks().length >= 10, 15_000);
      // A second wave still arriving as the process dies.
      const wave = Array.from({ length: 10 }, (_, i) => submit(first.base, 50 + i));
      await until('a first answer of the second wave', () => acked.size > 50, 10_000);

      first.proc.child.kill('SIGKILL');
      const killedAt = Date.now();
      expect((await first.proc.exited).signal).toBe('SIGKILL');
      await Promise.all(wave);
      // Requests the endpoint had received but not yet answered: the worker cannot have recorded them.
      const unanswered = hooks().filter((r) => r.at + REPLY_DELAY_MS > killedAt + 20);
      expect(unanswered.length, 'requests in flight at the kill').toBeGreaterThan(0);
      const before = hooks().length;

      receiver.script(PATH, [{ status: 200 }]);
      const second = await startServe(dataDir, batchWindowMs);
      // The admin socket opens once the Default account would have been made and shown.
      await until('the admin socket', () => existsSync(path.join(dataDir, 'canvass.sock')), 30_000);
      expect(second.proc.output()).not.toMatch(/Owner API key/);
      api = apiClient(second.base, key!);

      // Nothing acknowledged was lost from storage.
      const stored = await all<{ id: string; participantId: string }>(api, `/responses?pollId=${pollId}`);
      const storedIds = new Set(stored.map((r) => r.id));
      for (const [participant, ids] of acked)
        for (const id of ids) expect(storedIds.has(id), `response ${id} of ${participant}`).toBe(true);

      const participantOf = (r: Received) => (JSON.parse(r.rawBody) as { participantId: string }).participantId;
      await until(
        'every acknowledged response to be delivered',
        async () => {
          const got = new Set(hooks().map(participantOf));
          if (![...acked.keys()].every((p) => got.has(p))) return false;
          const open = [
            ...(await all<{ id: string }>(api, `/webhooks/deliveries?webhookId=${webhookId}&status=pending`)),
            ...(await all<{ id: string }>(api, `/webhooks/deliveries?webhookId=${webhookId}&status=in_flight`)),
          ];
          return open.length === 0;
        },
        LEASE_MS + 20_000,
      );
      expect(hooks().length).toBeGreaterThan(before);

      const deliveries = await all<{ id: string; participantId: string; status: string; attemptCount: number }>(
        api,
        `/webhooks/deliveries?webhookId=${webhookId}`,
      );
      const byParticipant = new Map(deliveries.map((d) => [d.participantId, d]));
      for (const p of acked.keys()) {
        const d = byParticipant.get(p);
        if (d?.status !== 'delivered')
          expect.fail(
            `delivery of ${p}: ${JSON.stringify(d && (await api('GET', `/webhooks/delivery?deliveryId=${d.id}`)).json.data)}`,
          );
      }
      expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);

      // What arrived: signed, one body per delivery id, no (delivery id, attempt) twice.
      const bodyOf = new Map<string, string>();
      const pairs = new Set<string>();
      for (const r of hooks()) {
        verifySignature({ secret, header: r.headers['x-service-signature'], rawBody: r.rawBody });
        const id = r.headers['x-service-delivery-id']!;
        expect(bodyOf.get(id) ?? r.rawBody).toBe(r.rawBody);
        bodyOf.set(id, r.rawBody);
        const pair = `${id}#${r.headers['x-service-attempt']}`;
        expect(pairs.has(pair), `${pair} arrived twice`).toBe(false);
        pairs.add(pair);
      }
      for (const d of deliveries) expect(bodyOf.has(d.id), `delivery ${d.id} never arrived`).toBe(true);
      // Each request left unanswered by the kill came again, same delivery id, a later attempt.
      for (const u of unanswered) {
        const id = u.headers['x-service-delivery-id']!;
        // Not u itself: a request written just before the kill can be read here just after it.
        const again = hooks().filter((r) => r !== u && r.at > killedAt && r.headers['x-service-delivery-id'] === id);
        expect(again.length, `redelivery of ${id}`).toBeGreaterThan(0);
        expect(Number(again[0]!.headers['x-service-attempt'])).toBeGreaterThan(Number(u.headers['x-service-attempt']));
      }

      const stop = await second.proc.stop();
      expect(stop, second.proc.output()).toEqual({ code: 0, signal: null });
    },
    90_000,
  );
});
