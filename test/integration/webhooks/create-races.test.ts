import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { expectProblem, request } from '../../support/api.js';
import { harness, type Harness } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { visiblePoll } from '../../support/fixtures.js';
import { untilSettledOrWaiting } from '../../support/races.js';

/**
 * A webhook created while its poll is being deleted (src/app/webhooks/create-webhook.ts): the
 * create waits for the poll's lock, then reads the poll again and finds it gone, a 404 rather
 * than a foreign-key failure. Only PostgreSQL runs transactions side by side.
 */

let h: Harness;
beforeAll(async () => {
  h = await harness({ allowPrivateTargets: true });
});
afterAll(() => h?.close());

it.skipIf(!onPostgres)(
  'a webhook created while its poll is deleted answers 404 and stores nothing (PostgreSQL)',
  async () => {
    const owner = await h.account({ name: 'Deleted under a create' });
    const { pollId } = await visiblePoll(h, owner);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    // A deletion under way: the poll's row lock is held, and the row goes when it commits.
    const deletion = h.database.db.transaction().execute(async (trx) => {
      await sql`SELECT id FROM polls WHERE id = ${pollId} FOR UPDATE`.execute(trx);
      locked();
      await held;
      await sql`DELETE FROM polls WHERE id = ${pollId}`.execute(trx);
    });
    await isLocked;
    try {
      const created = request(h, 'POST', '/webhooks', owner.key, {
        pollId,
        url: 'https://127.0.0.1:9/hook',
        deliveryRule: 'partial',
      });
      await untilSettledOrWaiting(h.database.db, created, 'for update');
      release();
      await deletion;
      expectProblem(await created, 404, 'not_found');
      const stored = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM webhooks WHERE poll_id = ${pollId}`.execute(h.database.db);
      expect(stored.rows[0]!.n).toBe(0);
    } finally {
      release();
      await deletion;
    }
  },
);
