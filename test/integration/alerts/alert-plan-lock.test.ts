import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAlerts } from '../../../src/app/alerts/check-alerts.js';
import type { Store } from '../../../src/app/ports/index.js';
import { outboxMailer } from '../../../src/infra/mail/mailer.js';
import { harness, type Harness } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * An alert email's content is read with no lock on its endpoint (src/app/alerts/check-alerts.ts,
 * planNext): its count of responses lost reads up to a week of rows, and the recording of the
 * endpoint's delivery results takes that row lock meanwhile.
 */
const WINDOWS = { quietMs: 60_000, reminderMs: 600_000 };

let h: Harness;
let dir: string;
beforeAll(async () => {
  h = await harness();
  dir = mkdtempSync(path.join(os.tmpdir(), 'canvass-plan-lock-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The store, with countLost held at `gate` once `entered` is called, in and out of transactions. */
function gated(store: Store, entered: () => void, gate: Promise<void>): Store {
  return {
    ...store,
    deliveries: {
      ...store.deliveries,
      countLost: async (...args: Parameters<Store['deliveries']['countLost']>) => {
        entered();
        await gate;
        return store.deliveries.countLost(...args);
      },
    },
    transaction: (fn) => store.transaction((tx) => fn(gated(tx, entered, gate))),
  };
}

describe.skipIf(!onPostgres)('planning an alert email (PostgreSQL)', () => {
  it('holds no row lock on the endpoint while the email is composed', async () => {
    const acct = await h.account();
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/slow-count');
    await h.deps.store.endpoints.recordGivenUp(hook.data.id, h.clock.now(), 'HTTP 500');
    h.clock.advance(WINDOWS.quietMs + 1);

    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const counting = new Promise<void>((r) => (entered = r));
    const mailer = outboxMailer(dir, 'alerts@canvass.test');
    const pass = checkAlerts({ ...h.deps, store: gated(h.deps.store, entered, gate), mailer, alerts: WINDOWS });
    try {
      await counting;
      // What recording a delivery's result does to the endpoint: it takes the row at once.
      const locked = await h.database.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL lock_timeout = '1s'`.execute(trx);
        return (await sql`SELECT id FROM endpoints WHERE id = ${hook.data.id} FOR UPDATE`.execute(trx)).rows.length;
      });
      expect(locked).toBe(1);
    } finally {
      release();
    }
    expect(await pass).toBe(1);
    expect((await h.deps.store.alerts.list(acct.accountId, { limit: 10 })).data).toHaveLength(1);
  });
});
