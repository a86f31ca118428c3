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
  const queue = async (leaseToken?: string) => {
    const now = new Date();
    await createStore(database.db).deliveries.insert([
      {
        ...(leaseToken ? { leaseToken } : {}),
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

      // Rows queued leased (the batch flush hands them to its own runner) wake nobody: no other
      // worker could claim them. Notifications arrive in commit order, so once the unleased
      // row's has come, one for the leased row would have come before it.
      await queue('lease-of-the-flushing-worker');
      await queue();
      await until(() => calls >= 4, 'the notification of the unleased row');
      expect(calls).toBe(4);
    } finally {
      await admin.end();
    }
  });
});
