import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { flushDueBatches } from '../../../src/app/delivery/flush-batches.js';
import { bearer, harness } from '../../support/app.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';

// A submission's metadata is stored once, however many answers carry it (migration 017): stored
// on each, 16 KiB sent with 200 answers took 3.2 MB, and every read of the respondent's answers
// carried it again. Every read still gives each answer its own submission's metadata.
describe("a submission's metadata, stored once", () => {
  for (const batchWindowMs of [0, 1_000]) {
    it(`goes with each of its answers in every read, and in the payloads (batch window ${batchWindowMs} ms)`, async () => {
      const h = await harness({ delivery: { batchWindowMs } });
      try {
        const acct = await h.account();
        const p = await visiblePoll(h, acct);
        const more = [];
        for (const title of ['Three', 'Four']) {
          const res = await h.app.inject({
            method: 'POST',
            url: '/slide',
            headers: bearer(acct.key),
            payload: { pollId: p.pollId, type: 'short-answer', title },
          });
          more.push(res.json().data.id as string);
        }
        const partial = (await createWebhook(h, acct, p.pollId, 'https://hooks.example.com/p')).data.id;
        const complete = (await createWebhook(h, acct, p.pollId, 'https://hooks.example.com/c', 'complete')).data.id;

        const kiosk = { source: 'kiosk', contact: 'meta@example.com' };
        const first = await answer(h, {
          pollId: p.pollId,
          participantId: 'm1',
          answers: [p.q1, ...more].map((slideId) => ({ slideId, value: 'x' })),
          metadata: kiosk,
        });
        h.clock.advance(batchWindowMs + 1);
        await flushDueBatches(h.deps, 10);
        const web = { source: 'web' };
        const second = await answer(h, {
          pollId: p.pollId,
          participantId: 'm1',
          answers: [{ slideId: p.q2, value: 'ann@example.com' }],
          metadata: web,
          complete: true,
        });
        h.clock.advance(batchWindowMs + 1);
        await flushDueBatches(h.deps, 10);

        // Stored: once per submission, not once per answer.
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM responses WHERE participant_id = 'm1' AND metadata <> '{}'::jsonb`.execute(
          h.database.db,
        );
        expect(rows[0]!.n).toBe(2);

        // Read a page of one at a time, so that an answer's holder is mostly on another page.
        const expected = new Map([
          ...first.responseIds.map((id) => [id, kiosk] as const),
          ...second.responseIds.map((id) => [id, web] as const),
        ]);
        const read = new Map<string, unknown>();
        for (let cursor: string | null = null, more = true; more;) {
          const q: string = `/responses?pollId=${p.pollId}&limit=1${cursor ? `&startCursor=${cursor}` : ''}`;
          const body = (await h.app.inject({ method: 'GET', url: q, headers: bearer(acct.key) })).json();
          for (const r of body.data as { id: string; metadata: unknown }[]) read.set(r.id, r.metadata);
          [cursor, more] = [body.endCursor, body.hasNextPage];
        }
        expect(read).toEqual(expected);
        // A respondent's answers, as submissions and flushes read them: the holders among them.
        const theirs = await h.deps.store.responses.ofParticipant(p.pollId, 'm1');
        expect(new Map(theirs.map((r) => [r.id, r.metadata]))).toEqual(expected);

        const emails = await h.app.inject({
          method: 'GET',
          url: `/emails?pollId=${p.pollId}`,
          headers: bearer(acct.key),
        });
        expect(emails.json().data[0].emails).toEqual(['ann@example.com', 'meta@example.com']);

        const bodies = async (webhookId: string) =>
          (await h.deps.store.deliveries.list({ accountIds: [acct.accountId], webhookId }, { limit: 10 })).data
            .map((d) => JSON.parse(d.body) as { metadata: unknown; emails: string[]; timestamp: number })
            .sort((x, y) => x.timestamp - y.timestamp);
        const partials = await bodies(partial);
        expect(partials.map((b) => [b.metadata, b.emails])).toEqual([
          [kiosk, ['meta@example.com']],
          [web, ['ann@example.com', 'meta@example.com']],
        ]);
        expect((await bodies(complete)).map((b) => b.metadata)).toEqual([{ ...kiosk, ...web }]);
      } finally {
        await h.close();
      }
    });
  }
});
