import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushSomeBatches, FLUSH_BYTES } from '../../../src/app/delivery/flush-batches.js';
import { MAX_RESPONDENT_BYTES } from '../../../src/domain/answer.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';

/**
 * What a respondent's stored answers hold, as JSON, is counted on their participant row
 * (migration 019) and bounded by MAX_RESPONDENT_BYTES; a batch flush reads at most FLUSH_BYTES of
 * its respondents' answers (docs/operations.md, "Memory").
 */

let h: Harness;
let acme: TestAccount;
let poll: { pollId: string; q1: string; q2: string };

beforeAll(async () => {
  h = await harness();
  acme = await h.account();
  poll = await visiblePoll(h, acme);
});
afterAll(() => h?.close());

const submit = (participantId: string, value: string, metadata?: Record<string, unknown>) =>
  h.app.inject({
    method: 'POST',
    url: '/participant/responses',
    payload: {
      pollId: poll.pollId,
      participantId,
      answers: [{ slideId: poll.q1, value }],
      ...(metadata ? { metadata } : {}),
    },
  });
const counted = async (participantId: string) =>
  (
    await h.database.db
      .selectFrom('participants')
      .select('answer_bytes')
      .where('poll_id', '=', poll.pollId)
      .where('id', '=', participantId)
      .executeTakeFirstOrThrow()
  ).answer_bytes;
const setCounted = (participantId: string, bytes: number | null) =>
  sql`UPDATE participants SET answer_bytes = ${bytes} WHERE poll_id = ${poll.pollId} AND id = ${participantId}`.execute(
    h.database.db,
  );
const stored = async (participantId: string) =>
  (await h.deps.store.responses.ofParticipant(poll.pollId, participantId)).length;

describe("a respondent's stored bytes", () => {
  it('are counted by each submission: its answers as JSON, and its metadata once', async () => {
    const long = 'x'.repeat(10_000);
    for (let i = 0; i < 3; i++) expect((await submit('counted', long)).statusCode).toBe(201);
    expect(await counted('counted')).toBe(3 * 10_002);
    expect((await submit('counted', 'é', { utm: 'mail' })).statusCode).toBe(201);
    // "é" is 2 bytes in UTF-8, with its quotes 4; {"utm":"mail"} is 14.
    expect(await counted('counted')).toBe(3 * 10_002 + 4 + 14);
  });

  it(`refuse a submission that would pass ${MAX_RESPONDENT_BYTES} with 409, storing nothing of it`, async () => {
    expect((await submit('full', 'first')).statusCode).toBe(201);
    // As if the respondent's earlier answers held all but 10,001 bytes of the bound.
    await setCounted('full', MAX_RESPONDENT_BYTES - 10_001);
    const over = await submit('full', 'y'.repeat(10_000));
    expect([over.statusCode, over.json().code]).toEqual([409, 'limit_reached']);
    expect(over.json().detail).toContain(String(MAX_RESPONDENT_BYTES));
    expect(over.json().detail).toContain('10002 bytes');
    expect(await stored('full')).toBe(1);
    expect(await counted('full')).toBe(MAX_RESPONDENT_BYTES - 10_001);
    // 9,999 bytes fit, to 2 under the bound; then nothing more does.
    expect((await submit('full', 'z'.repeat(9_997))).statusCode).toBe(201);
    expect(await counted('full')).toBe(MAX_RESPONDENT_BYTES - 2);
    expect((await submit('full', 'a')).statusCode).toBe(409);
    expect(await stored('full')).toBe(2);
  });

  it('not counted yet (stored before the count was kept) are counted from what is stored at the next submission', async () => {
    expect((await submit('older', 'x'.repeat(10_000))).statusCode).toBe(201);
    expect((await submit('older', 'x'.repeat(10_000))).statusCode).toBe(201);
    await setCounted('older', null);
    expect((await submit('older', 'x'.repeat(10_000))).statusCode).toBe(201);
    // The stored two (no metadata) and the new one.
    expect(await counted('older')).toBe(3 * 10_002);
  });
});

describe('a batch flush', () => {
  it(`reads at most ${FLUSH_BYTES} bytes of its respondents' answers, and leaves the other batches to the next flush`, async () => {
    const h2 = await harness({ delivery: { batchWindowMs: 1_000 } });
    try {
      const acct = await h2.account();
      const p = await visiblePoll(h2, acct);
      await createWebhook(h2, acct, p.pollId, 'https://hooks.example.com/bytes');
      const respondents = Array.from({ length: 20 }, (_, i) => `heavy-${i}`);
      for (const id of respondents) {
        const res = await h2.app.inject({
          method: 'POST',
          url: '/participant/responses',
          payload: { pollId: p.pollId, participantId: id, answers: [{ slideId: p.q1, value: id }] },
        });
        expect(res.statusCode, res.body).toBe(201);
      }
      // Each as if holding the most a respondent may; one not counted yet is taken to hold as much.
      await sql`UPDATE participants SET answer_bytes = ${MAX_RESPONDENT_BYTES} WHERE poll_id = ${p.pollId}`.execute(
        h2.database.db,
      );
      await sql`UPDATE participants SET answer_bytes = NULL WHERE poll_id = ${p.pollId} AND id = 'heavy-0'`.execute(
        h2.database.db,
      );
      h2.clock.advance(1_001);
      const perFlush = FLUSH_BYTES / MAX_RESPONDENT_BYTES;
      expect(await flushSomeBatches(h2.deps, 500)).toMatchObject({ batches: 20, deliveries: perFlush });
      expect(await flushSomeBatches(h2.deps, 500)).toMatchObject({ batches: 20 - perFlush, deliveries: 20 - perFlush });
      expect(await flushSomeBatches(h2.deps, 500)).toMatchObject({ batches: 0, deliveries: 0 });
      const made = await h2.database.db.selectFrom('deliveries').select('participant_id').execute();
      expect(made.map((d) => d.participant_id).sort()).toEqual([...respondents].sort());
    } finally {
      await h2.close();
    }
  });
});
