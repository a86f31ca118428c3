import { Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/infra/db/database.js';
import { PipelinedPostgresDialect } from '../../src/infra/db/pipelined-driver.js';
import type { DB } from '../../src/infra/db/schema.js';
import { createStore } from '../../src/infra/db/store.js';
import { createPgDatabase, onPostgres } from '../support/db.js';

/**
 * Ids are in the "C" collation, the columns that refer to them (slides.poll_id, webhooks.poll_id,
 * attempts.delivery_id, delivery_events.delivery_id, recovery_items.recovery_id) in the
 * database's default one. A lookup that compares the two in "C" cannot use the referring
 * column's index, and reads the whole table for each row it looks up for. These statements
 * compare in the default collation.
 *
 * An account's delivery log reads its deliveries by account (migration 014).
 *
 * Deleting a poll reaches its endpoints and, through the foreign key's cascade, its research
 * runs by poll, through indexes of their own (migration 012).
 *
 * Each statement's plan is the one PostgreSQL runs, the cascade's included: auto_explain sends it
 * to this connection as a notice. Sequential scans are disabled, so a plan that still scans one
 * of these tables has no index it can use.
 */
describe.skipIf(!onPostgres)('lookups by a referring column use its index (PostgreSQL)', () => {
  let made: Awaited<ReturnType<typeof createPgDatabase>>;
  let db: Kysely<DB>;
  const plans: string[] = [];

  beforeAll(async () => {
    made = await createPgDatabase();
    await (await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'apply' })).close();
    const pool = new pg.Pool({ connectionString: made.url, max: 1, pipeline: true } as pg.PoolConfig);
    pool.on('connect', (client) => {
      client.on('notice', (n) => plans.push(n.message ?? ''));
      void client.query(
        "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET client_min_messages = log; SET enable_seqscan = off",
      );
    });
    db = new Kysely<DB>({ dialect: new PipelinedPostgresDialect({ pool }) });
  });
  afterAll(async () => {
    await db?.destroy();
    await made?.drop();
  });

  /** The plans of what `run` sent, one string each. */
  async function plansOf(run: () => Promise<unknown>): Promise<string> {
    plans.length = 0;
    await run();
    return plans.join('\n');
  }

  it("a batch flush's claim reaches each batch's poll by the polls key", async () => {
    const store = createStore(db);
    const plan = await plansOf(() => store.transaction((s) => s.batches.claimDue(new Date(), 10)));
    // Looked up per batch, by the batch's poll id: not a walk of the whole key.
    expect(plan).toMatch(/Index Scan using polls_pkey on polls pl[^\n]*\n\s*Index Cond: \(id = \(b\.poll_id\)/);
    expect(plan).not.toMatch(/Seq Scan on polls/);
  });

  it("a page of GET /emails reads its respondents' answers by the respondent index", async () => {
    const store = createStore(db);
    const plan = await plansOf(() =>
      store.responses.ofParticipants([
        { pollId: 'poll_a', participantId: 'p1' },
        { pollId: 'poll_b', participantId: 'p2' },
      ]),
    );
    expect(plan).toMatch(/responses_participant/);
    expect(plan).not.toMatch(/Seq Scan on responses/);
  });

  it("the read of a poll for submission reaches its slides and webhooks by their poll's index", async () => {
    const store = createStore(db);
    const plan = await plansOf(() => store.polls.getForSubmission(['poll_a', 'poll_b']));
    expect(plan).toMatch(/slides_poll/);
    expect(plan).toMatch(/webhooks_poll/);
    expect(plan).not.toMatch(/Seq Scan on (slides|webhooks)/);
  });

  it('the delivery log finds test sends among the delivery events by delivery', async () => {
    const store = createStore(db);
    const plan = await plansOf(() => store.deliveries.list({ accountIds: ['acc_a'] }, { limit: 50 }));
    expect(plan).toMatch(/delivery_events_delivery/);
    expect(plan).not.toMatch(/Seq Scan on delivery_events/);
  });

  it("an account's delivery log reads that account's deliveries by its index, newest first (migration 014)", async () => {
    const store = createStore(db);
    const plan = await plansOf(() =>
      store.deliveries.list({ accountIds: ['acc_a'] }, { limit: 50, startCursor: 'dlv_b' }),
    );
    expect(plan).toMatch(/Index Scan Backward using deliveries_account on deliveries/);
  });

  it("a recover's finished items are found by their recovery's key", async () => {
    const store = createStore(db);
    const plan = await plansOf(() => store.recoveries.removeItems([{ recoveryId: 'rcv_a', deliveryId: 'dlv_a' }]));
    expect(plan).toMatch(/recovery_items_pkey/);
    expect(plan).not.toMatch(/Seq Scan on recovery_items/);
  });

  /** An account row of its own for one case. */
  const account = (id: string, at: Date) =>
    db
      .insertInto('accounts')
      .values({ id, name: 'a', plan: 'free', defaults: '{}', created_at: at, updated_at: at })
      .execute();

  it('deleting a poll finds its endpoints and research runs by poll', async () => {
    const store = createStore(db);
    const at = new Date();
    await account('acc_p', at);
    await db
      .insertInto('polls')
      .values({
        id: 'poll_p',
        account_id: 'acc_p',
        title: 't',
        is_visible: false,
        body: '{}',
        created_at: at,
        updated_at: at,
      })
      .execute();
    const plan = await plansOf(async () => {
      await store.endpoints.deleteByPoll('acc_p', 'poll_p');
      await store.polls.delete('poll_p', 'acc_p', at);
    });
    expect(plan).toMatch(/endpoints_poll/);
    expect(plan).toMatch(/research_runs_poll/);
    expect(plan).not.toMatch(/Seq Scan on (endpoints|research_runs)/);
  });

  it("a recover lists a webhook's or a poll's failed deliveries from the lost ones, by endpoint", async () => {
    const store = createStore(db);
    const at = new Date();
    await account('acc_r', at);
    const plan = await plansOf(async () => {
      const r = { accountId: 'acc_r', userId: 'usr_r', createdAt: at };
      await store.recoveries.create({ ...r, id: 'rcv_w' }, { webhookId: 'whk_r', since: new Date(0) });
      await store.recoveries.create({ ...r, id: 'rcv_p' }, { pollId: 'poll_r', since: new Date(0) });
    });
    expect(plan.match(/lost_deliveries_endpoint/g)).toHaveLength(2);
    expect(plan).not.toMatch(/Seq Scan on (deliveries|lost_deliveries)/);
  });

  it("the batch flush reads its respondents' answers by respondent", async () => {
    const store = createStore(db);
    const at = new Date();
    const batch = {
      id: 'bat_f',
      webhookId: 'whk_f',
      endpointId: 'whk_f',
      accountId: 'acc_f',
      pollId: 'poll_f',
      participantId: 'prt_f',
      responseIds: ['rsp_f'],
      flushAt: at,
      createdAt: at,
    };
    const plan = await plansOf(() => store.batches.contentsOf([batch]));
    expect(plan).toMatch(/responses_participant/);
    expect(plan).not.toMatch(/Seq Scan on responses/);
  });

  it('a delivery log or answers list in a time window starts its index walk at the window', async () => {
    const store = createStore(db);
    const window = { createdAfter: new Date('2030-01-01T00:00:00Z'), createdBefore: new Date('2030-02-01T00:00:00Z') };
    const log = await plansOf(() => store.deliveries.list({ accountIds: ['acc_w'], ...window }, { limit: 20 }));
    expect(log).toMatch(/Index Cond: [^\n]*account_id[^\n]*id >= [^\n]*id < /);
    const answers = await plansOf(() => store.responses.list({ pollId: 'poll_w', ...window }, { limit: 20 }));
    expect(answers).toMatch(/Index Cond: [^\n]*poll_id[^\n]*id >= [^\n]*id < /);
  });

  it("the purge finds old deliveries' attempts and events by delivery", async () => {
    const store = createStore(db);
    const plan = await plansOf(() => store.deliveries.purgeFinishedBefore(new Date(), 500));
    expect(plan).toMatch(/attempts_pkey/);
    expect(plan).toMatch(/delivery_events_delivery/);
    expect(plan).not.toMatch(/Seq Scan on (attempts|delivery_events)/);
  });
});
