import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { harness } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { answer, visiblePoll } from '../../support/fixtures.js';

// A poll's deletion locks the poll, then (its cascade) its respondents' rows; a returning
// respondent's submission locks their row, then the poll's key (its answers' foreign key). Run at
// once, they deadlock and PostgreSQL aborts one. The submission then reads afresh and answers as
// the deletion says, never a 500. (PGlite runs one transaction at a time: no deadlock there.)
describe.skipIf(!onPostgres)('a submission deadlocked with its poll’s deletion', () => {
  it('answers 404 once the deletion commits', async () => {
    const h = await harness();
    try {
      const acct = await h.account();
      const p = await visiblePoll(h, acct);
      // The submission waits first, so it checks for the deadlock first (deadlock_timeout after
      // it began waiting) and is the one aborted, if the deletion waits by then. If not, the
      // deletion is aborted instead and the submission is stored: the case is tried again.
      let deleted = false;
      for (let attempt = 0; attempt < 3 && !deleted; attempt++) {
        const submission = {
          pollId: p.pollId,
          participantId: `back-${attempt}`,
          answers: [{ slideId: p.q1, value: 'again' }],
        };
        await answer(h, submission);
        await h.database.db.connection().execute(async (conn) => {
          await sql`BEGIN`.execute(conn);
          await sql`SELECT id FROM polls WHERE id = ${p.pollId} FOR UPDATE`.execute(conn);
          const submitted = h.app.inject({ method: 'POST', url: '/participant/responses', payload: submission });
          // Until the submission waits for the poll's lock, holding its respondent's row.
          for (;;) {
            const { rows } = await sql<{ n: number }>`
              SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(h.database.db);
            if (rows[0]!.n > 0) break;
            await new Promise((r) => setTimeout(r, 20));
          }
          try {
            await sql`DELETE FROM polls WHERE id = ${p.pollId}`.execute(conn);
            await sql`COMMIT`.execute(conn);
            deleted = true;
          } catch (err) {
            expect((err as { code?: string }).code).toBe('40P01');
            await sql`ROLLBACK`.execute(conn);
          }
          const res = await submitted;
          expect([res.statusCode, res.json().code], res.body).toEqual(deleted ? [404, 'not_found'] : [201, undefined]);
        });
      }
      expect(deleted).toBe(true);
    } finally {
      await h.close();
    }
  });
});
