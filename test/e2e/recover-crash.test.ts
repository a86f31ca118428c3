import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/db.js';
import { listAll, surveyWithWebhooks, until } from '../support/e2e.js';
import {
  apiClient,
  pool,
  ownerOf,
  processStorage,
  startServe,
  type CanvassProcess,
  type Env,
} from '../support/processes.js';
import { startReceiver } from '../support/receiver.js';

/**
 * A recover survives the death of its process: `canvass serve` is SIGKILLed while it resends
 * the deliveries a recover listed, and a restart on the same storage resends the rest. Every
 * delivery is resent by the recover exactly once (one recover event each) and delivered.
 */

const N = 100;
const PATH = '/recover-crash';
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let storage: Awaited<ReturnType<typeof processStorage>> | undefined;
let env: Env;
const procs: CanvassProcess[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  env = {
    CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
    CANVASS_DELIVERY_TIMEOUT_MS: '2000',
    CANVASS_BATCH_WINDOW_MS: '0',
    CANVASS_RETRY_LADDER_MS: '20,20,20,20,20',
    CANVASS_SCHEDULER_TICK_MS: '50',
    // One delivery per transaction: the recover's work is spread out, so the kill lands inside it.
    CANVASS_RECOVER_BATCH: '1',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  };
  storage = await processStorage(env, 'recover-crash');
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop(5_000)));
  await receiver?.close();
  await storage?.drop();
});

const serve = (name: string) => startServe(name, env, procs);

const resends = () => receiver.received.filter((r) => r.path === PATH && Number(r.headers['x-service-attempt']) >= 7);

describe(`SIGKILL during a recover (real processes, ${onPostgres ? 'PostgreSQL' : 'embedded PGlite'})`, () => {
  it('resends every listed delivery once, the rest after a restart', async () => {
    receiver.script(PATH, [{ status: 500 }]);
    const first = await serve('canvass serve (to be killed)');
    const { accountId, key } = await ownerOf(first.proc, env, 'Recover');
    const api = apiClient(first.base, key);
    const since = new Date(Date.now() - 60_000).toISOString();
    const survey = await surveyWithWebhooks(api, accountId, {
      title: 'Recover crash',
      slides: ['Question'],
      webhooks: [{ url: receiver.url(PATH), deliveryRule: 'partial' }],
    });
    const webhookId = survey.webhookIds[0]!;
    const respondent = apiClient(first.base, null);
    await pool(
      Array.from({ length: N }, (_, i) => i),
      8,
      async (i) => {
        const r = await respondent('POST', '/participant/responses', {
          pollId: survey.pollId,
          participantId: `r-${i}`,
          answers: [{ slideId: survey.slideIds[0], value: `answer ${i}` }],
        });
        expect(r.status).toBe(201);
      },
    );
    const givenUp = async () =>
      listAll<{ id: string }>(api, `/webhooks/deliveries?webhookId=${webhookId}&status=given_up`);
    await until('every delivery given up', async () => (await givenUp()).length === N, 60_000);
    const ids = (await givenUp()).map((d) => d.id);

    receiver.script(PATH, [{ status: 200 }]);
    const res = await api('POST', '/webhooks/recover', { webhookId, since });
    expect(res.status, JSON.stringify(res.json)).toBe(202);
    expect(res.json.data).toEqual({ resent: N });
    await until('the first resend to arrive', () => resends().length > 0, 30_000);
    first.proc.child.kill('SIGKILL');
    expect((await first.proc.exited).signal).toBe('SIGKILL');
    const beforeRestart = new Set(resends().map((r) => r.headers['x-service-delivery-id']));
    expect(beforeRestart.size, 'resends that reached the endpoint before the kill').toBeLessThan(N);

    const second = await serve('canvass serve (restarted)');
    const again = apiClient(second.base, key);
    await until(
      'every delivery delivered',
      async () => (await listAll(again, `/webhooks/deliveries?webhookId=${webhookId}&status=delivered`)).length === N,
      90_000,
    );
    for (const id of ids) {
      const d = await again('GET', `/webhooks/delivery?deliveryId=${id}`);
      const events = (d.json.data as { events: { kind: string; attemptNumber: number }[] }).events;
      expect(events, id).toEqual([expect.objectContaining({ kind: 'recover', attemptNumber: 7 })]);
    }
    // Each delivery's resend reached the endpoint (an attempt leased when the process died is sent
    // again under the next number).
    expect(new Set(resends().map((r) => r.headers['x-service-delivery-id']))).toEqual(new Set(ids));
  }, 240_000);
});
