import http from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idsMadeBefore } from '../../src/domain/ids.js';
import { openDatabase } from '../../src/infra/db/database.js';
import { surveyWithWebhooks } from '../support/e2e.js';
import {
  apiClient,
  processStorage,
  runCanvassJson,
  startServe,
  type CanvassProcess,
  type Env,
} from '../support/processes.js';

/**
 * `canvass serve` stops although a request is still under way: a CSV export whose client has
 * stopped reading holds its response open, and the stop closes its connection once the delivery
 * deadline has passed (src/stopping.ts), then exits 0.
 */

const DEADLINE_MS = 1_000;
let storage: Awaited<ReturnType<typeof processStorage>> | undefined;
const env: Env = {
  CANVASS_DELIVERY_TIMEOUT_MS: String(DEADLINE_MS),
  CANVASS_RATE_LIMIT_PER_MINUTE: '0',
  LOG_LEVEL: 'warn',
};
const procs: CanvassProcess[] = [];

beforeAll(async () => {
  storage = await processStorage(env, 'stop-under-way');
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop(5_000)));
  await storage?.drop();
});

/** Answers enough (about 24 MB of CSV) that a client that stops reading holds the export open. */
async function bulkAnswers(accountId: string, pollId: string, slideId: string) {
  const db = await openDatabase({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.CANVASS_DATA_DIR ?? '',
    schema: 'check',
    poolSize: 1,
  });
  try {
    const at = new Date(Date.now() - 60_000);
    const idHead = `${idsMadeBefore('rsp', at.getTime())}Bulk`;
    await sql`INSERT INTO responses (id, account_id, poll_id, participant_id, slide_id, value, metadata, synthetic, created_at)
      SELECT ${idHead} || lpad(k::text, 10, '0'), ${accountId}, ${pollId}, 'p0', ${slideId}, to_jsonb(repeat('x', 8000)), '{}'::jsonb, false, ${at}
      FROM generate_series(1, 3000) k`.execute(db.db);
  } finally {
    await db.close();
  }
}

describe('canvass serve stopping with a request under way', () => {
  it('closes the connection of an export its client stopped reading, and exits 0', async () => {
    const { accountId, apiKey } = await runCanvassJson<{ accountId: string; apiKey: string }>(
      ['accounts', 'create', '--name', 'Stop', '--owner-email', 'stop@example.com', '--json'],
      env,
    );
    let server = await startServe('canvass serve (setup)', env, procs);
    let api = apiClient(server.base, apiKey);
    const survey = await surveyWithWebhooks(api, accountId, { title: 'Stop', slides: ['Q1'], webhooks: [] });
    const first = await api('POST', '/participant/responses', {
      pollId: survey.pollId,
      participantId: 'p0',
      answers: [{ slideId: survey.slideIds[0], value: 'first' }],
    });
    expect(first.status, JSON.stringify(first.json)).toBe(201);
    // Embedded storage is the serving process's alone: the rows go in while it is stopped.
    expect((await server.proc.stop()).code).toBe(0);
    await bulkAnswers(accountId, survey.pollId, survey.slideIds[0]!);

    server = await startServe('canvass serve', env, procs);
    api = apiClient(server.base, apiKey);
    const url = new URL(`/responses/export?pollId=${survey.pollId}`, server.base);
    const opened = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.get(url, { headers: { authorization: `Bearer ${apiKey}` } }, (res) => {
        res.once('data', () => {
          res.pause();
          resolve(res);
        });
      });
      req.on('error', reject);
    });
    expect(opened.statusCode).toBe(200);
    const cut = new Promise<string>((resolve) => {
      opened.once('aborted', () => resolve('aborted'));
      opened.once('error', () => resolve('error'));
      opened.once('end', () => resolve('end'));
    });

    server.proc.child.kill('SIGTERM');
    const exit = await server.proc.exited;
    expect(exit.code, server.proc.output()).toBe(0);
    expect(server.proc.output()).toContain('closing the connections of requests still under way');
    // The client sees the response cut off, not a whole file.
    opened.resume();
    expect(await cut).not.toBe('end');
  });
});
