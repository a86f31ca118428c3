import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/infra/db/database.js';
import { createStore } from '../../../src/infra/db/store.js';
import { listenForDue, type DueListener } from '../../../src/infra/db/due-listener.js';
import { newId } from '../../../src/domain/ids.js';
import { createPgDatabase, onPostgres } from '../../support/db.js';

const until = async (pred: () => boolean, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

// Workers in other processes hear of queued deliveries through LISTEN/NOTIFY (migration 011).
describe.skipIf(!onPostgres)('new deliveries notify listening workers', () => {
  let made: Awaited<ReturnType<typeof createPgDatabase>>;
  let database: Database;
  let listener: DueListener | undefined;
  const queue = async () => {
    const now = new Date();
    await createStore(database.db).deliveries.insert([
      {
        id: newId('dlv'),
        accountId: 'acc_1',
        pollId: 'poll_1',
        webhookId: null,
        endpointId: 'end_1',
        source: 'webhook',
        url: 'https://hooks.example.com/',
        participantId: 'p1',
        type: 'completed-survey',
        body: '{}',
        createdAt: now,
        nextAttemptAt: now,
      },
    ]);
  };

  beforeAll(async () => {
    made = await createPgDatabase();
    database = await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'apply' });
    const now = new Date();
    await sql`INSERT INTO accounts (id, name, plan, created_at, updated_at) VALUES ('acc_1', 'A', 'free', ${now}, ${now})`.execute(
      database.db,
    );
  });
  afterAll(async () => {
    await listener?.close();
    await database?.close();
    await made?.drop();
  });

  it('calls back once per queuing transaction, and again after its connection is cut and restored', async () => {
    let calls = 0;
    const errors: unknown[] = [];
    listener = listenForDue(made.url, () => calls++, { retryMs: 100, onError: (e) => errors.push(e) });
    const admin = new pg.Client({ connectionString: made.url });
    await admin.connect();
    try {
      const listening = async () =>
        (
          await admin.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`,
          )
        ).rows;
      for (let i = 0; !(await listening()).length; i++) {
        if (i > 500) throw new Error('the listener never listened');
        await new Promise((r) => setTimeout(r, 20));
      }
      await queue();
      await until(() => calls === 1, 'the first notification');

      // Cut its connection: it reports the failure once, reconnects, and calls back for what may
      // have been queued meanwhile.
      const [{ pid }] = (await listening()) as [{ pid: number }];
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      await until(() => calls === 2, 'the call after reconnecting');
      expect(errors).toHaveLength(1);
      await queue();
      await until(() => calls === 3, 'a notification after reconnecting');
    } finally {
      await admin.end();
    }
  });

  // Rows queued leased (the batch flush hands them to its own runner) wake nobody: no other
  // worker could claim them. A session hears its own notifications before its statement's
  // answer, so each count is read right after its statement.
  it('notifies for a statement that queues an unleased row, not for one whose rows are all leased', async () => {
    const session = new pg.Client({ connectionString: made.url });
    await session.connect();
    try {
      let heard = 0;
      session.on('notification', (n) => n.channel === 'canvass_new_deliveries' && heard++);
      await session.query('LISTEN canvass_new_deliveries');
      const queue = (leaseTokens: (string | null)[]) =>
        session.query(
          `WITH v AS (SELECT gen_random_uuid()::text AS id, t AS token FROM unnest($1::text[]) AS t),
           d AS (
             INSERT INTO deliveries (id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, status, body, created_at)
             SELECT id, 'acc_1', 'poll_1', NULL, 'end_1', 'webhook', 'https://hooks.example.com/', 'p1', 'completed-survey', 'pending', '{}', now() FROM v
           )
           INSERT INTO delivery_queue (delivery_id, next_attempt_at, lease_token, attempt_count)
           SELECT id, now(), token, CASE WHEN token IS NULL THEN 0 ELSE 1 END FROM v`,
          [leaseTokens],
        );
      await queue(['lease-a', 'lease-b']);
      expect(heard).toBe(0);
      await queue(['lease-c', null]);
      expect(heard).toBe(1);
      await queue([null]);
      expect(heard).toBe(2);
    } finally {
      await session.end();
    }
  });
});
