import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifySignature } from '../../src/verify.js';
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
import { startReceiver, type Received } from '../support/receiver.js';

/**
 * At-least-once across a crash of the API itself, with real processes: `canvass serve` is
 * SIGKILLed in the middle of a burst of respondent submissions (batches open, deliveries queued
 * and in flight) and restarted on the same storage. Every answer that was acknowledged with a
 * 201 reaches the endpoint in some delivery (duplicates allowed, losses not); answers whose
 * request failed were never promised and may or may not arrive.
 *
 * Embedded pass: PGlite data directory. PostgreSQL pass (CANVASS_TEST_PG_URL): a database of
 * its own, migrated with `canvass migrate`.
 */

const DEADLINE_MS = 2_000;
const LEASE_MS = 2 * DEADLINE_MS + 5_000;
// Fast, but long enough in total that a burst of load-induced timeouts cannot exhaust it.
const LADDER = '300,600,1200,2400,4800';
const PARTICIPANTS = 150; // two submissions each: 300
const PARALLEL = 16;
const KILL_AFTER_ACKS = 110;
const PARTIAL = '/api-crash-partial';
const COMPLETE = '/api-crash-complete';

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let storage: Awaited<ReturnType<typeof processStorage>> | undefined;
let env: Env;
const procs: CanvassProcess[] = [];

beforeAll(async () => {
  receiver = await startReceiver();
  env = {
    CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
    CANVASS_DELIVERY_TIMEOUT_MS: String(DEADLINE_MS),
    // Small but not zero: answers go through open batches that the scheduler flushes.
    CANVASS_BATCH_WINDOW_MS: '200',
    CANVASS_RETRY_LADDER_MS: LADDER,
    CANVASS_SCHEDULER_TICK_MS: '50',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
  };
  storage = await processStorage(env, 'api-crash');
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop(5_000)));
  await receiver?.close();
  await storage?.drop();
});

const serve = (name: string) => startServe(name, env, procs);

type Payload = { type: string; participantId: string; responses: Record<string, { value: unknown }> };
const parse = (r: Received) => JSON.parse(r.rawBody) as Payload;

describe(`SIGKILL of the API mid-burst (real processes, ${onPostgres ? 'PostgreSQL' : 'embedded PGlite'})`, () => {
  it('every acknowledged answer is delivered after a restart on the same storage', async () => {
    receiver.script(PARTIAL, [{ status: 200, delayMs: 150 }]);
    receiver.script(COMPLETE, [{ status: 200, delayMs: 150 }]);
    const first = await serve('canvass serve (to be killed)');
    const { accountId, key } = await ownerOf(first.proc, env, 'Crash');
    const survey = await surveyWithWebhooks(apiClient(first.base, key), accountId, {
      title: 'API crash',
      slides: ['First question', 'Second question'],
      webhooks: [
        { url: receiver.url(PARTIAL), deliveryRule: 'partial' },
        { url: receiver.url(COMPLETE), deliveryRule: 'complete' },
      ],
    });
    const [slideA, slideB] = survey.slideIds as [string, string];
    const secret = survey.secret!;
    expect(secret).toMatch(/^whsec_/);

    // The burst: each respondent answers the first question, then (if that was acknowledged) the second.
    type Answer = { participantId: string; slideId: string; value: string };
    const acked: Answer[] = [];
    const failed: Answer[] = [];
    const unexpected: string[] = [];
    let killedAt = 0;
    const respondent = apiClient(first.base, null);
    const submit = async (a: Answer): Promise<boolean> => {
      try {
        const r = await respondent('POST', '/participant/responses', {
          pollId: survey.pollId,
          participantId: a.participantId,
          answers: [{ slideId: a.slideId, value: a.value }],
        });
        if (r.status !== 201) {
          unexpected.push(`${r.status} ${JSON.stringify(r.json)}`);
          return false;
        }
        acked.push(a);
        if (acked.length === KILL_AFTER_ACKS) {
          // In the middle of the burst: other submissions are in the process right now.
          first.proc.child.kill('SIGKILL');
          killedAt = Date.now();
        }
        return true;
      } catch {
        // The process died under this request, or before it: never acknowledged.
        failed.push(a);
        return false;
      }
    };
    await pool(
      Array.from({ length: PARTICIPANTS }, (_, i) => i),
      PARALLEL,
      async (i) => {
        const participantId = `burst-${i}`;
        if (await submit({ participantId, slideId: slideA, value: `first ${i}` }))
          await submit({ participantId, slideId: slideB, value: `second ${i}` });
      },
    );
    expect(unexpected, 'answers other than 201 before the kill').toEqual([]);
    expect((await first.proc.exited).signal).toBe('SIGKILL');
    expect(killedAt).toBeGreaterThan(0);
    expect(acked.length).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
    expect(failed.length, 'submissions cut off by the kill').toBeGreaterThan(0);
    // Some answers were stored but not yet sent when the process died (else this proves little).
    const participantOf = (r: Received) => parse(r).participantId;
    const sentBefore = new Set(receiver.received.filter((r) => r.path === PARTIAL).map(participantOf));
    const ackedParticipants = new Set(acked.map((a) => a.participantId));
    expect(
      [...ackedParticipants].filter((p) => !sentBefore.has(p)).length,
      'acknowledged participants not yet delivered at the kill',
    ).toBeGreaterThan(0);

    receiver.script(PARTIAL, [{ status: 200 }]);
    receiver.script(COMPLETE, [{ status: 200 }]);
    const second = await serve('canvass serve (restarted)');
    const api = apiClient(second.base, key);

    // Storage kept every acknowledged answer.
    const stored = await listAll<{ participantId: string; slideId: string; value: unknown }>(
      api,
      `/responses?pollId=${survey.pollId}`,
    );
    const storedKeys = new Set(stored.map((r) => `${r.participantId} ${r.slideId} ${JSON.stringify(r.value)}`));
    for (const a of acked)
      expect(
        storedKeys.has(`${a.participantId} ${a.slideId} ${JSON.stringify(a.value)}`),
        `stored: ${JSON.stringify(a)}`,
      ).toBe(true);

    // Delivered: each acknowledged answer in some submitted-responses delivery of its participant,
    // and each participant whose second (completing) answer was acknowledged in a completed-survey one.
    const completedBoth = [...ackedParticipants].filter((p) => acked.filter((a) => a.participantId === p).length === 2);
    const missing = () => {
      const partial = new Map<string, Payload[]>();
      const complete = new Map<string, Payload[]>();
      for (const r of receiver.received) {
        const into = r.path === PARTIAL ? partial : r.path === COMPLETE ? complete : undefined;
        if (!into) continue;
        const p = parse(r);
        into.set(p.participantId, [...(into.get(p.participantId) ?? []), p]);
      }
      const lost: string[] = [];
      for (const a of acked) {
        if (
          !(partial.get(a.participantId) ?? []).some(
            (p) => p.type === 'submitted-responses' && p.responses[a.slideId]?.value === a.value,
          )
        )
          lost.push(`partial ${JSON.stringify(a)}`);
      }
      for (const id of completedBoth) {
        const ok = (complete.get(id) ?? []).some(
          (p) => p.type === 'completed-survey' && Object.keys(p.responses).length === 2,
        );
        if (!ok) lost.push(`completed-survey of ${id}`);
      }
      return lost;
    };
    await until('every acknowledged answer to arrive', () => missing().length === 0, LEASE_MS + 30_000).catch(
      (e: Error) => {
        throw new Error(`${e.message}; still missing ${missing().length}: ${missing().slice(0, 5).join('; ')}`);
      },
    );

    // The log agrees: nothing left pending or in flight, nothing given up.
    const settledStates = async () => {
      const states = new Map<string, number>();
      for (const w of survey.webhookIds) {
        for (const d of await listAll<{ status: string }>(api, `/webhooks/deliveries?webhookId=${w}`))
          states.set(d.status, (states.get(d.status) ?? 0) + 1);
      }
      return states;
    };
    await until(
      'the delivery log to settle',
      async () => [...(await settledStates()).keys()].every((s) => s === 'delivered'),
      20_000,
    );

    // What arrived is signed and a delivery id always carries the same bytes.
    const bodyOf = new Map<string, string>();
    for (const r of receiver.received.filter((x) => x.path === PARTIAL || x.path === COMPLETE)) {
      verifySignature({ secret, header: r.headers['x-service-signature'], rawBody: r.rawBody });
      const id = r.headers['x-service-delivery-id']!;
      expect(bodyOf.get(id) ?? r.rawBody, `body of ${id}`).toBe(r.rawBody);
      bodyOf.set(id, r.rawBody);
    }

    expect(await second.proc.stop(), second.proc.output()).toEqual({ code: 0, signal: null });
  }, 85_000);
});
