import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/infra/db/database.js';
import { createStore } from '../../src/infra/db/store.js';
import { createPgDatabase, onPostgres, testDatabase } from '../support/db.js';
import { harness } from '../support/app.js';
import { createWebhook, visiblePoll } from '../support/fixtures.js';

/** The result of a first attempt that the endpoint accepted, as the worker records it. */
const delivered = (attemptId: string, deliveryId: string, leaseToken: string) => ({
  attempt: {
    id: attemptId,
    deliveryId,
    number: 1,
    sentAt: new Date(),
    statusCode: 200,
    error: null,
    durationMs: 3,
    responseExcerpt: 'ok',
  },
  leaseToken,
  result: { status: 'delivered' as const, nextAttemptAt: null, finishedAt: new Date(), dnsFailure: false },
});

/**
 * Fresh storage for the describe block, reached through one connection: a PostgreSQL database
 * with a pool of one, or PGlite (one connection by nature; a copy of the run's migrated template).
 */
function oneConnection(): () => Database {
  let made: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
  let database: Database;
  beforeAll(async () => {
    if (!onPostgres) {
      database = await testDatabase();
      return;
    }
    made = await createPgDatabase();
    database = await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'apply', poolSize: 1 });
  });
  afterAll(async () => {
    await database?.close();
    await made?.drop();
  });
  return () => database;
}

/** The shared (generic) plan of the prepared statement `name`, as EXPLAIN shows it. */
async function genericPlan(database: Database, name: string, params: number): Promise<string> {
  return database.db.transaction().execute(async (trx) => {
    await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(trx);
    const args = sql.raw(Array.from({ length: params }, () => 'NULL').join(', '));
    const res = await sql<{ 'QUERY PLAN': string }>`EXPLAIN EXECUTE ${sql.id(name)}(${args})`.execute(trx);
    return res.rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

/**
 * The claim and the batch record run as named prepared statements (parsed and planned once per
 * connection), on PostgreSQL and on PGlite alike. One connection, so the statements it prepared
 * are the ones pg_prepared_statements lists.
 */
describe('named prepared statements', () => {
  const database = oneConnection();

  it('the claim and the batch record are prepared once (the claim planned once too) and give the same results on every call', async () => {
    const store = createStore(database().db);
    const now = new Date();
    await store.accounts.insert({ id: 'acc_prep', name: 'Prep', plan: 'premium', createdAt: now, updatedAt: now });
    await store.accounts.setSigningSecret('acc_prep', 'whsec_prepared', now, now);
    const ids = Array.from({ length: 9 }, (_, i) => `dlv_prep${i}_${randomBytes(4).toString('hex')}`);
    await store.deliveries.insert(
      ids.map((id) => ({
        id,
        accountId: 'acc_prep',
        pollId: 'poll_prep',
        webhookId: null,
        endpointId: 'end_prep',
        source: 'question-logic' as const,
        url: 'https://hooks.example.com/x',
        participantId: 'prt_x',
        type: 'submitted-responses' as const,
        body: '{}',
        createdAt: now,
        nextAttemptAt: now,
      })),
    );

    // Three rounds of three: past the point where PostgreSQL may switch a prepared statement to a generic plan.
    const claimed: string[] = [];
    for (let round = 0; round < 3; round++) {
      const batch = await store.deliveries.claim(
        new Date(),
        3,
        new Date(Date.now() + 60_000),
        `lease-${round}`,
        new Date(0),
      );
      expect(batch).toHaveLength(3);
      expect(batch.every((d) => d.signingSecret === 'whsec_prepared')).toBe(true);
      claimed.push(...batch.map((d) => d.id));
      const recorded = await store.deliveries.recordResults(
        batch.map((d, i) => delivered(`att_prep${round}${i}`, d.id, d.leaseToken)),
        new Date(),
      );
      expect([...recorded].sort()).toEqual(batch.map((d) => d.id).sort());
    }
    expect(claimed.sort()).toEqual([...ids].sort());
    expect(
      await store.deliveries.claim(new Date(), 3, new Date(Date.now() + 60_000), 'lease-empty', new Date(0)),
    ).toEqual([]);
    for (const id of ids) expect((await store.deliveries.get(id))?.status).toBe('delivered');

    const prepared = await sql<{
      name: string;
      custom_plans: number;
    }>`SELECT name, custom_plans::int FROM pg_prepared_statements ORDER BY name`.execute(database().db);
    expect(prepared.rows.map((r) => r.name)).toEqual(['claim-deliveries', 'record-results']);
    // Neither is planned afresh, and the settings that make it so are not left behind for the
    // connection's other statements.
    expect(prepared.rows.map((r) => r.custom_plans)).toEqual([0, 0]);
    const settings = await sql<{ name: string; setting: string }>`
      SELECT name, setting FROM pg_settings WHERE name IN ('plan_cache_mode', 'enable_seqscan', 'enable_sort') ORDER BY name`.execute(
      database().db,
    );
    expect(settings.rows).toEqual([
      { name: 'enable_seqscan', setting: 'on' },
      { name: 'enable_sort', setting: 'on' },
      { name: 'plan_cache_mode', setting: 'auto' },
    ]);
  });
});

// Planned once per connection, the plans outlive the statistics they were made from: plans made
// while the queue was empty, or deliveries new, must still reach rows by key once they hold
// millions.
describe('plans of the claim and the batch record', () => {
  const database = oneConnection();

  it('the claim and the batch record reach deliveries and their queue rows by index or locked ctid, even planned while the queue was empty', async () => {
    const store = createStore(database().db);
    // The statistics of an empty queue, as autovacuum records them between bursts.
    await sql`ANALYZE delivery_queue`.execute(database().db);
    await store.deliveries.claim(new Date(), 3, new Date(Date.now() + 60_000), 'lease-plan', new Date(0));
    await store.deliveries.claim(new Date(), 3, new Date(Date.now() + 60_000), 'lease-plan', new Date(0), {
      accounts: ['acc_x'],
      hosts: ['hooks.example.com acc_y'],
    });
    await store.deliveries.recordResults([delivered('att_plan', 'dlv_none', 'lease-none')], new Date());
    const statements = await sql<{ name: string; params: number }>`
      SELECT name, cardinality(parameter_types)::int AS params FROM pg_prepared_statements ORDER BY name`.execute(
      database().db,
    );
    expect(statements.rows.map((r) => r.name)).toEqual([
      'claim-deliveries',
      'claim-deliveries-excluding',
      'record-results',
    ]);
    for (const { name, params } of statements.rows) {
      // The shared (generic) plan, as the claim always runs and the record may after a few calls.
      const plan = await genericPlan(database(), name, params);
      // By key: no scan of a whole table, no whole index read for a column it does not lead with.
      expect(plan, name).not.toMatch(/Seq Scan on (deliveries|delivery_queue)|deliveries_(poll|webhook)/);
      // In due order from the index, with no sort. The claim that leaves some out reads its
      // window from the index and locks what it takes by ctid: never a ctid list matched
      // against every due row.
      expect(plan, name).not.toMatch(/Sort/);
      if (name === 'claim-deliveries-excluding') {
        expect(plan, name).toMatch(/Index Scan using delivery_queue_due/);
        expect(plan, name).not.toMatch(/Filter: \(+ctid = ANY/);
      }
      expect(plan, name).toMatch(/deliveries_pkey/);
      // The claim updates the rows it locked where they lie; the record finds its rows by key.
      if (name.startsWith('claim-deliveries')) expect(plan, name).toMatch(/Tid Scan on delivery_queue/);
      else expect(plan, name).toMatch(/delivery_queue_pkey/);
    }
  });
});

/**
 * A submission's statements that only insert are named too; those that look participants or
 * responses up are not, since a shared plan made while the tables were nearly empty would keep
 * reading them the way it chose then.
 */
describe('the submission statements', () => {
  const database = oneConnection();

  it('those that only insert are prepared once and run a plan that reads no table; the lookups are not prepared', async () => {
    const h = await harness({ database: database() });
    try {
      const acme = await h.account();
      const poll = await visiblePoll(h, acme);
      await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/partial', 'partial');
      await createWebhook(h, acme, poll.pollId, 'https://hooks.example.com/complete', 'complete');
      const submit = async (participantId: string, answers: { slideId: string; value: string }[]) => {
        const res = await h.app.inject({
          method: 'POST',
          url: '/participant/responses',
          payload: { pollId: poll.pollId, participantId, answers },
        });
        expect(res.statusCode, res.body).toBe(201);
        return res.json().data as { complete: boolean };
      };
      // Past the five calls after which PostgreSQL may switch a prepared statement to a shared plan:
      // respondents who complete in one go, then one who answers in two.
      for (let i = 0; i < 7; i++) {
        const done = await submit(`one-go-${i}`, [
          { slideId: poll.q1, value: 'ads' },
          { slideId: poll.q2, value: `r${i}@example.com` },
        ]);
        expect(done.complete).toBe(true);
      }
      expect((await submit('two-step', [{ slideId: poll.q1, value: 'search' }])).complete).toBe(false);
      expect((await submit('two-step', [{ slideId: poll.q2, value: 'two@example.com' }])).complete).toBe(true);
      const stored = await h.deps.store.responses.ofParticipant(poll.pollId, 'two-step');
      expect(stored.map((r) => r.value).sort()).toEqual(['search', 'two@example.com']);
      const completed = await h.deps.store.deliveries.list({ accountIds: [acme.accountId] }, { limit: 50 });
      expect(completed.data.filter((d) => d.type === 'completed-survey')).toHaveLength(8);

      const prepared = await sql<{ name: string; calls: number; params: number }>`
        SELECT name, (generic_plans + custom_plans)::int AS calls, cardinality(parameter_types)::int AS params
        FROM pg_prepared_statements WHERE name LIKE 'submission-%' ORDER BY name`.execute(database().db);
      // A one-go respondent's outcome writes a batch and a delivery; the two-step one's first a
      // batch; its second, which updates the participant, is not prepared, nor is any answers listing.
      expect(Object.fromEntries(prepared.rows.map((r) => [r.name, r.calls]))).toEqual({
        'submission-lock': 9,
        'submission-outcome-b': 1,
        'submission-outcome-bd': 7,
      });
      for (const { name, params } of prepared.rows) {
        const plan = await genericPlan(database(), name, params);
        // Rows come from the arrays only: no table read, no join, nothing the tables' size could turn.
        expect(plan, name).toMatch(/Function Scan/);
        expect(plan, name).not.toMatch(/(Seq|Index|Index Only|Bitmap Heap|Bitmap Index|Tid) Scan|Join|Nested Loop/);
      }
    } finally {
      await h.close();
    }
  });
});
