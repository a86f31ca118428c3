import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, listAll, sleep, surveyWithWebhooks, until } from '../support/e2e.js';
import { canRunPgCluster, startPgCluster, type PgCluster } from '../support/pg-cluster.js';
import {
  apiClient,
  freePort,
  runCanvassJson,
  spawnCanvass,
  waitForHttp,
  type CanvassProcess,
  type Env,
} from '../support/processes.js';
import { startReceiver, type Received } from '../support/receiver.js';

/**
 * PostgreSQL goes away under running processes and comes back: `canvass serve --no-worker` and
 * two `canvass worker`s keep running through a restart of the database (a cluster this test
 * makes itself with initdb in a temporary directory, never the machine's shared one), log the
 * errors, and without being restarted deliver every answer that was acknowledged, before, during
 * (none can be) and after the outage.
 *
 * It needs only the PostgreSQL ≥ 15 server binaries; it runs in the PGlite pass (its cluster is
 * its own, so one pass is enough).
 */

const DEADLINE_MS = 2_000;
const LEASE_MS = 2 * DEADLINE_MS + 5_000;
const OUTAGE_MS = 4_000;
const PATH = '/pg-restart';

const available = canRunPgCluster();
let cluster: PgCluster | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let env: Env;
const procs: CanvassProcess[] = [];

beforeAll(async () => {
  if (!available) return;
  cluster = await startPgCluster();
  receiver = await startReceiver();
  env = {
    DATABASE_URL: cluster.url,
    CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
    CANVASS_DELIVERY_TIMEOUT_MS: String(DEADLINE_MS),
    CANVASS_BATCH_WINDOW_MS: '200',
    // Long enough in total that an outage plus load-induced timeouts cannot exhaust it.
    CANVASS_RETRY_LADDER_MS: '300,600,1200,2400,4800',
    CANVASS_SCHEDULER_TICK_MS: '50',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  };
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop(5_000)));
  await receiver?.close();
  await cluster?.destroy();
});

// It starts its own cluster, so one pass (the PGlite one) is enough.
describe.skipIf(!available || !!process.env.CANVASS_TEST_PG_URL)(
  'a PostgreSQL restart under running workers (real processes, own cluster)',
  () => {
    it('workers and API ride through it without a restart; every acknowledged answer is delivered', async () => {
      const db = cluster!;
      await runCanvassJson(['migrate', '--json'], env);
      const account = await runCanvassJson<{ accountId: string; apiKey: string }>(
        ['accounts', 'create', '--name', 'Restart', '--owner-email', 'restart@example.com', '--json'],
        env,
      );
      const port = await freePort();
      const server = spawnCanvass('canvass serve --no-worker', ['serve', '--no-worker'], {
        ...env,
        PORT: String(port),
        HOST: '127.0.0.1',
      });
      const workers = [1, 2].map((n) => spawnCanvass(`canvass worker ${n}`, ['worker'], env));
      procs.push(server, ...workers);
      const base = `http://127.0.0.1:${port}`;
      await waitForHttp(`${base}/healthz`, 60_000, server);
      const api = apiClient(base, account.apiKey);

      // Replies held a little, so that attempts are in flight when the database goes.
      receiver.script(PATH, [{ status: 200, delayMs: 300 }]);
      const survey = await surveyWithWebhooks(api, account.accountId, {
        title: 'Restart',
        slides: ['Anything?'],
        webhooks: [{ url: receiver.url(PATH), deliveryRule: 'partial' }],
      });
      const slideId = survey.slideIds[0]!;
      const pids = workers.map((w) => w.child.pid);

      // Respondents keep coming throughout, four at a time.
      let phase: 'before' | 'outage' | 'after' = 'before';
      const acked = new Map<string, 'before' | 'outage' | 'after'>();
      const refused: { phase: string; status: number | string }[] = [];
      let flowing = true;
      let n = 0;
      const respondent = apiClient(base, null);
      const flow = Promise.all(
        Array.from({ length: 4 }, async () => {
          while (flowing) {
            const participantId = `flow-${n++}`;
            const during = phase;
            try {
              const r = await respondent('POST', '/participant/responses', {
                pollId: survey.pollId,
                participantId,
                answers: [{ slideId, value: `answer ${participantId}` }],
              });
              if (r.status === 201) acked.set(participantId, during);
              else refused.push({ phase: during, status: r.status });
            } catch (e) {
              refused.push({ phase: during, status: String(e) });
            }
            if (phase === 'outage') await sleep(100);
          }
        }),
      );
      const hooks = () => receiver.received.filter((r) => r.path === PATH);
      const participantOf = (r: Received) => (JSON.parse(r.rawBody) as { participantId: string }).participantId;

      try {
        await until(
          'answers acknowledged and deliveries flowing',
          () => acked.size >= 40 && hooks().length >= 10,
          30_000,
        );

        // The outage: sessions terminated, open transactions rolled back, connections refused.
        await db.stop('fast');
        phase = 'outage';
        const stoppedAt = Date.now();
        await sleep(OUTAGE_MS);
        for (const p of [server, ...workers])
          expect(alive(p.child), `${p.name} died during the outage:\n${p.output()}`).toBe(true);
        await db.start();
        phase = 'after';
        const restartedAt = Date.now();
        // The API recovers by itself: answers are acknowledged again.
        await until(
          'answers to be acknowledged after the restart',
          () => [...acked.values()].filter((p) => p === 'after').length >= 40,
          30_000,
        );
        flowing = false;
        await flow;

        // During the outage the API refused (it did not acknowledge what it could not store).
        expect(refused.filter((r) => r.phase === 'outage').length, 'answers refused during the outage').toBeGreaterThan(
          0,
        );
        for (const r of refused)
          expect(typeof r.status === 'number' && r.status >= 500, `refusal ${JSON.stringify(r)}`).toBe(true);
        expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(OUTAGE_MS);

        // Every acknowledged answer arrives, and the delivery log settles to delivered.
        const missing = () => {
          const got = new Set(hooks().map(participantOf));
          return [...acked.keys()].filter((p) => !got.has(p));
        };
        receiver.script(PATH, [{ status: 200 }]);
        await until('every acknowledged answer to arrive', () => missing().length === 0, LEASE_MS + 30_000).catch(
          (e: Error) => {
            throw new Error(
              `${e.message}; missing ${missing().length} of ${acked.size}: ${missing().slice(0, 5).join(', ')}`,
            );
          },
        );
        await until(
          'the delivery log to settle',
          async () =>
            (await listAll<{ status: string }>(api, `/webhooks/deliveries?webhookId=${survey.webhookIds[0]}`)).every(
              (d) => d.status === 'delivered',
            ),
          20_000,
        );
        expect(
          hooks().some((r) => r.at > restartedAt),
          'deliveries sent after the restart',
        ).toBe(true);

        // The very same processes did it: alive, same pids, and they noticed the outage.
        for (const [i, w] of workers.entries()) {
          expect(alive(w.child), `${w.name}:\n${w.output()}`).toBe(true);
          expect(w.child.pid).toBe(pids[i]);
        }
        expect(alive(server.child), server.output()).toBe(true);
        const logs = workers.map((w) => w.output()).join('\n');
        expect(logs).toMatch(/"level":50/);
        expect(logs).toMatch(/claiming deliveries failed|scheduler task failed|attempt failed to record/);

        // And they still stop cleanly.
        for (const p of [...workers, server]) expect(await p.stop(), p.output()).toEqual({ code: 0, signal: null });
      } finally {
        flowing = false;
        await flow;
      }
    }, 85_000);
  },
);
