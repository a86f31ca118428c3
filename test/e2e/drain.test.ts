import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/db.js';
import { listAll, surveyWithWebhooks, until, type Api } from '../support/e2e.js';
import {
  apiClient,
  freePort,
  runCanvassJson,
  spawnCanvass,
  waitForHttp,
  processStorage,
  type CanvassProcess,
  type Env,
} from '../support/processes.js';
import { startReceiver } from '../support/receiver.js';

/**
 * SIGTERM drains, with real processes. A stopping worker claims nothing more, lets the attempts
 * it has in flight finish (an answer, or the delivery deadline) and be recorded, and exits; an
 * attempt it still cannot record after the drain window (deadline + 2 s) is released: due at
 * once, so another worker sends it without waiting for the lease (2 × deadline + 5 s) to expire.
 *
 * PostgreSQL pass: `canvass worker` processes beside one `canvass serve --no-worker`.
 * Embedded pass: `canvass serve` (API and worker in one process) on a PGlite directory, and
 * `canvass serve --no-worker` on the same directory to look at what was left behind.
 */

const DEADLINE_MS = 4_000;
const DRAIN_MS = DEADLINE_MS + 2_000;
const LADDER_MS = [300, 600, 1200, 2400, 4800];
const QUICK_REPLY_MS = 2_000; // in flight for a while, well inside the deadline
const SLOW_REPLY_MS = 20_000; // far beyond the deadline and the drain window
const QUICK = '/drain-quick';
const SLOW = '/drain-slow';
const LOCKED = '/drain-locked';

type Delivery = {
  id: string;
  participantId: string;
  status: string;
  attemptCount: number;
  nextAttemptAt: string | null;
};
type Detail = Delivery & { attempts: { number: number; statusCode: number | null; error: string | null }[] };
type Survey = Awaited<ReturnType<typeof surveyWithWebhooks>>;

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let storage: Awaited<ReturnType<typeof processStorage>> | undefined;
let env: Env;
let key: string;
let accountId: string;
/** PostgreSQL: the API process that stays up throughout. */
let apiServer: { proc: CanvassProcess; api: Api } | undefined;
const procs: CanvassProcess[] = [];
const surveys: Record<string, Survey> = {};

beforeAll(async () => {
  receiver = await startReceiver();
  env = {
    CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
    CANVASS_DELIVERY_TIMEOUT_MS: String(DEADLINE_MS),
    CANVASS_BATCH_WINDOW_MS: '0',
    CANVASS_RETRY_LADDER_MS: LADDER_MS.join(','),
    CANVASS_SCHEDULER_TICK_MS: '50',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  };
  storage = await processStorage(env, 'drain');
  ({ accountId, apiKey: key } = await runCanvassJson<{ accountId: string; apiKey: string }>(
    ['accounts', 'create', '--name', 'Drain', '--owner-email', 'drain@example.com', '--json'],
    env,
  ));
  if (onPostgres) apiServer = await startServe('canvass serve --no-worker', false);
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop(5_000)));
  await receiver?.close();
  await storage?.drop();
});

async function startServe(name: string, worker: boolean) {
  const port = await freePort();
  const proc = spawnCanvass(name, worker ? ['serve'] : ['serve', '--no-worker'], {
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
  });
  procs.push(proc);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, 60_000, proc);
  return { proc, api: apiClient(base, key) };
}

/** A process that delivers, and an API to talk to while it runs. */
async function startWorker(name: string): Promise<{ proc: CanvassProcess; api: Api }> {
  if (!apiServer) return startServe(`canvass serve (${name})`, true);
  const proc = spawnCanvass(`canvass ${name}`, ['worker'], { ...env, LOG_LEVEL: 'info' });
  procs.push(proc);
  await proc.waitForOutput(/canvass worker running/, 60_000);
  return { proc, api: apiServer.api };
}

/** Reads storage while nothing delivers: the long-running API, or an API-only process on the data directory. */
async function inspect<T>(fn: (api: Api) => Promise<T>): Promise<T> {
  if (apiServer) return fn(apiServer.api);
  const observer = await startServe('canvass serve --no-worker (observer)', false);
  try {
    return await fn(observer.api);
  } finally {
    expect(await observer.proc.stop(), observer.proc.output()).toEqual({ code: 0, signal: null });
  }
}

const deliveriesOf = (api: Api, s: Survey) =>
  listAll<Delivery>(api, `/webhooks/deliveries?webhookId=${s.webhookIds[0]}`);
const detail = async (api: Api, id: string) =>
  (await api('GET', `/webhooks/delivery?deliveryId=${id}`)).json.data as Detail;

async function answer(api: Api, s: Survey, n: number, prefix: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await api('POST', '/participant/responses', {
      pollId: s.pollId,
      participantId: `${prefix}-${i}`,
      answers: [{ slideId: s.slideIds[0], value: `${prefix} ${i}` }],
    });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
  }
}

const at = (p: string) => receiver.received.filter((r) => r.path === p);

/** SIGTERM (`again`: twice, 200 ms apart), then how long the process took to exit and how. */
async function terminate(
  proc: CanvassProcess,
  again = false,
): Promise<{ ms: number; code: number | null; signal: NodeJS.Signals | null }> {
  const t0 = Date.now();
  proc.child.kill('SIGTERM');
  if (again) setTimeout(() => proc.child.kill('SIGTERM'), 200);
  const kill = setTimeout(() => proc.child.kill('SIGKILL'), 60_000);
  const r = await proc.exited;
  clearTimeout(kill);
  return { ms: Date.now() - t0, ...r };
}

describe(`SIGTERM drains (real processes, ${onPostgres ? 'PostgreSQL' : 'embedded PGlite'})`, () => {
  it('quick replies: attempts in flight finish and are recorded, then it exits 0, a second SIGTERM notwithstanding', async () => {
    receiver.script(QUICK, [{ status: 200, delayMs: QUICK_REPLY_MS }]);
    receiver.script(SLOW, [{ status: 200, delayMs: SLOW_REPLY_MS }]);
    receiver.script(LOCKED, [{ status: 200, delayMs: 300 }]);
    const w1 = await startWorker('worker 1');
    for (const [name, p] of [
      ['quick', QUICK],
      ['slow', SLOW],
      ['locked', LOCKED],
    ] as const) {
      surveys[name] = await surveyWithWebhooks(w1.api, accountId, {
        title: `Drain ${name}`,
        slides: ['Anything?'],
        webhooks: [{ url: receiver.url(p), deliveryRule: 'partial' }],
      });
    }

    await answer(w1.api, surveys.quick!, 6, 'quick');
    await receiver.waitFor(() => at(QUICK).length === 6, 20_000);
    const lastSent = Math.max(...at(QUICK).map((r) => r.at));
    // Attempts are in flight right now: sent, not yet answered.
    expect(at(QUICK).filter((r) => r.at + QUICK_REPLY_MS > Date.now()).length).toBeGreaterThan(0);
    const stopped = await terminate(w1.proc, true);
    expect(stopped, w1.proc.output()).toMatchObject({ code: 0, signal: null });
    expect(w1.proc.output()).toMatch(/SIGTERM again: still draining/);
    // It waited for the answers, and not much longer.
    expect(Date.now()).toBeGreaterThanOrEqual(lastSent + QUICK_REPLY_MS);
    expect(stopped.ms).toBeLessThan(DRAIN_MS + 3_000);
    expect(w1.proc.output()).not.toMatch(/were released/);

    await inspect(async (api) => {
      const ds = await deliveriesOf(api, surveys.quick!);
      expect(ds).toHaveLength(6);
      for (const d of ds) {
        expect(d, JSON.stringify(d)).toMatchObject({ status: 'delivered', attemptCount: 1 });
        const full = await detail(api, d.id);
        expect(full.attempts).toMatchObject([{ number: 1, statusCode: 200, error: null }]);
      }
    });
    // Recorded, so never sent again.
    expect(new Set(at(QUICK).map((r) => r.headers['x-service-delivery-id'])).size).toBe(6);
    expect(at(QUICK)).toHaveLength(6);
  }, 80_000);

  it('replies slower than the deadline: it exits within the deadline, the attempts recorded as timeouts, due again on the ladder', async () => {
    const w2 = await startWorker('worker 2');
    await answer(w2.api, surveys.slow!, 4, 'slow');
    await receiver.waitFor(() => at(SLOW).length === 4, 20_000);
    const leasedUntil = Math.min(
      ...(await deliveriesOf(w2.api, surveys.slow!)).map((d) => Date.parse(d.nextAttemptAt!)),
    );
    const firstSent = Math.min(...at(SLOW).map((r) => r.at));
    const stopped = await terminate(w2.proc);
    const exitedAt = Date.now();
    expect(stopped, w2.proc.output()).toMatchObject({ code: 0, signal: null });
    // Bounded by the deadline of attempts already running, not by the 20 s the endpoint takes.
    expect(exitedAt - firstSent).toBeLessThan(DEADLINE_MS + 6_000);
    expect(stopped.ms).toBeLessThan(DRAIN_MS + 4_000);
    // Finished (as timeouts) within the drain window: nothing had to be released.
    expect(w2.proc.output()).not.toMatch(/were released/);

    await inspect(async (api) => {
      for (const d of await deliveriesOf(api, surveys.slow!)) {
        expect(d, JSON.stringify(d)).toMatchObject({ status: 'pending', attemptCount: 1 });
        // Due on the retry ladder from the recorded timeout, not when the lease would have run out.
        expect(Date.parse(d.nextAttemptAt!)).toBeLessThan(leasedUntil);
        expect(Date.parse(d.nextAttemptAt!)).toBeLessThanOrEqual(exitedAt + LADDER_MS[0]!);
        expect((await detail(api, d.id)).attempts).toMatchObject([{ number: 1, statusCode: null, error: 'timeout' }]);
      }
    });

    // The next worker sends them at once, as attempt 2.
    receiver.script(SLOW, [{ status: 200 }]);
    const w3 = await startWorker('worker 3');
    const readyAt = Date.now();
    await receiver.waitFor(() => at(SLOW).filter((r) => r.headers['x-service-attempt'] === '2').length === 4, 15_000);
    const resent = at(SLOW).filter((r) => r.headers['x-service-attempt'] === '2');
    expect(Math.max(...resent.map((r) => r.at)) - readyAt).toBeLessThan(5_000);
    await until(
      'the retries to be recorded',
      async () =>
        (await deliveriesOf(w3.api, surveys.slow!)).every((d) => d.status === 'delivered' && d.attemptCount === 2),
      15_000,
    );
    if (!apiServer) expect(await w3.proc.stop(), w3.proc.output()).toEqual({ code: 0, signal: null });
  }, 85_000);

  // Only PostgreSQL lets the test hold a lock against the worker's writes.
  it.skipIf(!onPostgres)(
    'attempts it cannot record within the drain window are released: due at once, taken by the next worker',
    async () => {
      const w3 = procs.find((p) => p.name === 'canvass worker 3')!;
      const api = apiServer!.api;
      // Hold the attempt log: the worker's result transactions wait on it.
      const blocker = new pg.Client({ connectionString: storage!.url! });
      await blocker.connect();
      let locked = true;
      try {
        await blocker.query('BEGIN');
        await blocker.query('LOCK TABLE attempts IN SHARE MODE');
        await answer(api, surveys.locked!, 4, 'locked');
        await receiver.waitFor(() => at(LOCKED).length === 4, 20_000);
        await new Promise((r) => setTimeout(r, 1_000)); // answered, and stuck recording
        const held = await deliveriesOf(api, surveys.locked!);
        for (const d of held) expect(d, JSON.stringify(d)).toMatchObject({ status: 'in_flight', attemptCount: 1 });
        const leasedUntil = Math.min(...held.map((d) => Date.parse(d.nextAttemptAt!)));

        const t0 = Date.now();
        w3.child.kill('SIGTERM');
        await w3.waitForOutput(/were released/, DRAIN_MS + 10_000);
        const releasedAt = Date.now();
        expect(releasedAt - t0).toBeGreaterThanOrEqual(DRAIN_MS - 500);
        expect(releasedAt - t0).toBeLessThan(DRAIN_MS + 4_000);
        expect(w3.output()).toMatch(/"released":4/);

        // Given back: pending and due now, long before the lease would have expired; the attempt
        // may have reached the endpoint, so its number stays used.
        for (const d of await deliveriesOf(api, surveys.locked!)) {
          expect(d, JSON.stringify(d)).toMatchObject({ status: 'pending', attemptCount: 1 });
          expect(Date.parse(d.nextAttemptAt!)).toBeLessThanOrEqual(releasedAt);
          expect(Date.parse(d.nextAttemptAt!)).toBeLessThan(leasedUntil - 2_000);
        }
        await blocker.query('ROLLBACK');
        locked = false;
        const exit = await Promise.race([w3.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
        expect(exit, w3.output()).toEqual({ code: 0, signal: null });
      } finally {
        if (locked) await blocker.query('ROLLBACK').catch(() => {});
        await blocker.end();
      }
      // Its late result was fenced off by the release: logged, but deciding nothing.
      for (const d of await deliveriesOf(api, surveys.locked!)) expect(d.status).toBe('pending');

      receiver.script(LOCKED, [{ status: 200 }]);
      await startWorker('worker 4');
      await receiver.waitFor(
        () => at(LOCKED).filter((r) => r.headers['x-service-attempt'] === '2').length === 4,
        15_000,
      );
      await until(
        'the released deliveries to be delivered',
        async () =>
          (await deliveriesOf(api, surveys.locked!)).every((d) => d.status === 'delivered' && d.attemptCount === 2),
        15_000,
      );
    },
    80_000,
  );
});
