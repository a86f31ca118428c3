import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, request, type Json, type Method } from '../../support/api.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { untilSettledOrWaiting } from '../../support/races.js';

/**
 * What one account may hold (src/domain/quotas.ts): polls, members, live keys limited to it, and
 * a poll's synthetic participants. Past a quota a write is 409 limit_reached and nothing of it
 * is kept; freeing a place (a deleted poll, a revoked key) makes room again. The quotas are
 * set small here, as CANVASS_QUOTA_* would set them.
 */

const QUOTAS = { pollsPerAccount: 3, membersPerAccount: 3, liveKeysPerAccount: 2, syntheticParticipantsPerPoll: 250 };

let h: Harness;
let acme: TestAccount;
let rival: TestAccount;

beforeAll(async () => {
  h = await harness({ quotas: QUOTAS });
  acme = await h.account({ name: 'Acme' });
  rival = await h.account({ name: 'Rival' });
});
afterAll(() => h?.close());

const req = (method: Method, url: string, key: string, payload?: Json) => request(h, method, url, key, payload);
const newPoll = (who: TestAccount, extra: Json = {}) =>
  req('POST', '/poll', who.key, { accountId: who.accountId, title: 'Quota', ...extra });
const pollCount = async (accountId: string) =>
  (
    await sql<{ n: number }>`SELECT count(*)::int AS n FROM polls WHERE account_id = ${accountId}`.execute(
      h.database.db,
    )
  ).rows[0]!.n;

describe('polls per account', () => {
  it(`are at most ${QUOTAS.pollsPerAccount}, concurrent creates included; a deleted poll frees its place`, async () => {
    const made = await Promise.all(Array.from({ length: 6 }, () => newPoll(acme)));
    const codes = made.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 201, 201, 409, 409, 409]);
    const refused = made.find((r) => r.statusCode === 409)!;
    expect(expectProblem(refused, 409, 'limit_reached').detail).toContain(`at most ${QUOTAS.pollsPerAccount} polls`);
    expect(await pollCount(acme.accountId)).toBe(QUOTAS.pollsPerAccount);

    // A dry run saves nothing; its commit is a create like any other.
    const preview = await newPoll(acme, { dryRun: true });
    expect(preview.statusCode, preview.body).toBe(200);
    expectProblem(await req('POST', '/commit', acme.key, { data: preview.json().data }), 409, 'limit_reached');

    // Another account's polls are its own.
    expect((await newPoll(rival)).statusCode).toBe(201);

    const first = made.find((r) => r.statusCode === 201)!.json().data.id as string;
    expect((await req('DELETE', `/poll?pollId=${first}`, acme.key)).statusCode).toBe(200);
    const committed = await req('POST', '/commit', acme.key, { data: preview.json().data });
    expect(committed.statusCode, committed.body).toBe(201);
    // Committing the same preview again answers the saved poll and counts nothing.
    expect((await req('POST', '/commit', acme.key, { data: preview.json().data })).statusCode).toBe(200);
    expectProblem(await newPoll(acme), 409, 'limit_reached');
    expect(await pollCount(acme.accountId)).toBe(QUOTAS.pollsPerAccount);
  });
});

describe('members and live keys per account', () => {
  it(`an API caller makes at most ${QUOTAS.liveKeysPerAccount} live keys for the account; revoking one makes room`, async () => {
    const acct = await h.account({ name: 'Keys' });
    const make = (email: string) =>
      req('POST', '/keys', acct.key, { accountId: acct.accountId, email, role: 'editor' });
    expect((await make('k1@example.com')).statusCode).toBe(201);
    expect((await make('k2@example.com')).statusCode).toBe(201);
    // The owner's own key, made with the account, opens no account alone: it is not counted.
    const over = expectProblem(await make('k1@example.com'), 409, 'limit_reached');
    expect(over.detail).toContain(`at most ${QUOTAS.liveKeysPerAccount} live keys`);
    const listed = (await req('GET', `/keys?accountId=${acct.accountId}`, acct.key)).json().data as {
      id: string;
      email: string;
    }[];
    const k1 = listed.find((k) => k.email === 'k1@example.com')!;
    expect((await req('DELETE', `/keys?keyId=${k1.id}`, acct.key)).statusCode).toBe(200);
    expect((await make('k1@example.com')).statusCode).toBe(201);
  });

  it('a role change at the live-keys quota counts the keys it revokes first: an admin is demoted at the quota', async () => {
    const acct = await h.account({ name: 'Demotion' });
    const boss = await req('POST', '/keys', acct.key, {
      accountId: acct.accountId,
      email: 'boss@example.com',
      role: 'admin',
    });
    expect(boss.statusCode, boss.body).toBe(201);
    const bossKey = boss.json().data.apiKey as string;
    const made = await req('POST', '/keys', bossKey, {
      accountId: acct.accountId,
      email: 'made@example.com',
      role: 'editor',
    });
    expect(made.statusCode, made.body).toBe(201);
    // At the quota: the demotion revokes the key the admin made, which makes room for the new one.
    const demoted = await req('POST', '/keys', acct.key, {
      accountId: acct.accountId,
      email: 'boss@example.com',
      role: 'read_only',
    });
    expect(demoted.statusCode, demoted.body).toBe(201);
    expect(demoted.json().data).toMatchObject({ role: 'read_only' });
    const madeKey = made.json().data.apiKey as string;
    expect((await req('GET', `/polls?accountId=${acct.accountId}`, madeKey)).statusCode).toBe(401);
    // A new member's key still meets the quota.
    expectProblem(
      await req('POST', '/keys', acct.key, { accountId: acct.accountId, email: 'third@example.com', role: 'editor' }),
      409,
      'limit_reached',
    );
  });

  it(`an account has at most ${QUOTAS.membersPerAccount} members; a new key for a member is not a new member`, async () => {
    const acct = await h.account({ name: 'Members' });
    // The owner and two more fill it; the operator's keys count against neither quota.
    await h.member(acct.accountId, 'editor', 'm1@example.com');
    await h.member(acct.accountId, 'editor', 'm2@example.com');
    const over = expectProblem(
      await req('POST', '/keys', acct.key, { accountId: acct.accountId, email: 'm3@example.com', role: 'editor' }),
      409,
      'limit_reached',
    );
    expect(over.detail).toContain(`at most ${QUOTAS.membersPerAccount} members`);
    const members = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM memberships WHERE account_id = ${acct.accountId}`.execute(h.database.db);
    expect(members.rows[0]!.n).toBe(QUOTAS.membersPerAccount);
    const again = await req('POST', '/keys', acct.key, {
      accountId: acct.accountId,
      email: 'm1@example.com',
      role: 'read_only',
    });
    expect(again.statusCode, again.body).toBe(201);
    const removed = await req('DELETE', `/members?accountId=${acct.accountId}&email=m2@example.com`, acct.key);
    expect(removed.statusCode, removed.body).toBe(200);
    expect(
      (await req('POST', '/keys', acct.key, { accountId: acct.accountId, email: 'm3@example.com', role: 'editor' }))
        .statusCode,
    ).toBe(201);
  });
});

describe('GET /account/usage', () => {
  it('shows any member each quota and how much of it the account uses; to another account it is a 404', async () => {
    const acct = await h.account({ name: 'Usage' });
    const reader = await h.member(acct.accountId, 'read_only', 'usage.reader@example.com');
    const usage = async () => {
      const res = await req('GET', `/account/usage?accountId=${acct.accountId}`, reader);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    };
    expect(await usage()).toEqual({
      accountId: acct.accountId,
      polls: { used: 0, quota: QUOTAS.pollsPerAccount },
      members: { used: 2, quota: QUOTAS.membersPerAccount },
      liveKeys: { used: 0, quota: QUOTAS.liveKeysPerAccount },
    });
    const poll = (await newPoll(acct)).json().data.id as string;
    await newPoll(acct);
    expect(
      (
        await req('POST', '/keys', acct.key, {
          accountId: acct.accountId,
          email: 'usage.k@example.com',
          role: 'editor',
        })
      ).statusCode,
    ).toBe(201);
    expect((await req('DELETE', `/poll?pollId=${poll}`, acct.key)).statusCode).toBe(200);
    expect(await usage()).toMatchObject({ polls: { used: 1 }, members: { used: 3 }, liveKeys: { used: 1 } });
    // A revoked key is not live; a key of the member's own, made by the operator, is not limited to the account.
    const listed = (await req('GET', `/keys?accountId=${acct.accountId}`, acct.key)).json().data as {
      id: string;
      email: string;
      revokedAt: string | null;
    }[];
    const made = listed.find((k) => k.email === 'usage.k@example.com')!;
    expect((await req('DELETE', `/keys?keyId=${made.id}`, acct.key)).statusCode).toBe(200);
    await h.member(acct.accountId, 'editor', 'usage.k@example.com');
    expect(await usage()).toMatchObject({ members: { used: 3 }, liveKeys: { used: 0 } });
    expectProblem(await req('GET', `/account/usage?accountId=${acct.accountId}`, rival.key), 404, 'not_found');
  });
});

/** A synthetic poll of the account's with one slide to answer. */
async function researchPoll(owner: TestAccount): Promise<string> {
  const poll = (await newPoll(owner, { isSynthetic: true })).json().data.id as string;
  const slide = await req('POST', '/slide', owner.key, { pollId: poll, type: 'star-rating', title: 'Rate' });
  expect(slide.statusCode, slide.body).toBe(201);
  return poll;
}

/** `held` until release(); `isLocked` once locked() is called. */
function gates() {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  return { held, release, locked, isLocked };
}

describe('synthetic participants per poll', () => {
  it(`are at most ${QUOTAS.syntheticParticipantsPerPoll} over all research runs; a run past it stores nothing`, async () => {
    const owner = await h.account({ name: 'Research' });
    const poll = (await newPoll(owner, { isSynthetic: true })).json().data.id as string;
    const slide = await req('POST', '/slide', owner.key, { pollId: poll, type: 'star-rating', title: 'Rate' });
    expect(slide.statusCode, slide.body).toBe(201);
    const run = (participants: number) => req('POST', '/research/start', owner.key, { pollId: poll, participants });
    expect((await run(200)).statusCode).toBe(201);
    const over = expectProblem(await run(100), 409, 'limit_reached');
    expect(over.detail).toContain('this one has 200, so 50 more at most');
    expect((await run(50)).statusCode).toBe(201);
    expectProblem(await run(1), 409, 'limit_reached');
    const stored = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM participants WHERE poll_id = ${poll}`.execute(h.database.db);
    expect(stored.rows[0]!.n).toBe(QUOTAS.syntheticParticipantsPerPoll);
  });

  it.skipIf(!onPostgres)(
    'a run holds up another run of the poll, not the answers of its respondents (PostgreSQL)',
    async () => {
      const owner = await h.account({ name: 'Research lock' });
      const poll = await researchPoll(owner);
      const { held, release, locked, isLocked } = gates();
      // A run's lock, held open as a long run would hold it.
      const run = h.deps.store.transaction(async (store) => {
        await store.polls.lockForResearch(poll);
        locked();
        await held;
      });
      await isLocked;
      try {
        // A respondent's row refers to the poll: its insert goes in while the run holds the lock.
        await sql`INSERT INTO participants (id, seq, poll_id, account_id, metadata, synthetic, complete, created_at, updated_at)
          VALUES ('prt_during_run', 'prt_during_run', ${poll}, ${owner.accountId}, '{}', false, false, now(), now())`.execute(
          h.database.db,
        );
        // Another run waits for it.
        const second = req('POST', '/research/start', owner.key, { pollId: poll, participants: 1 });
        await untilSettledOrWaiting(h.database.db, second, 'for no key update');
        const waiting = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND position('for no key update' in query) > 0`.execute(
          h.database.db,
        );
        expect(waiting.rows[0]!.n).toBe(1);
        release();
        await run;
        expect((await second).statusCode).toBe(201);
      } finally {
        release();
        await run;
      }
    },
  );

  it.skipIf(!onPostgres)(
    'a run whose poll is deleted while it waits for the lock answers 404 and stores nothing (PostgreSQL)',
    async () => {
      const owner = await h.account({ name: 'Research deleted' });
      const poll = await researchPoll(owner);
      const { held, release, locked, isLocked } = gates();
      // A deletion under way: the poll's row lock is held, and the row goes when it commits.
      const deletion = h.database.db.transaction().execute(async (trx) => {
        await sql`SELECT id FROM polls WHERE id = ${poll} FOR UPDATE`.execute(trx);
        locked();
        await held;
        await sql`DELETE FROM polls WHERE id = ${poll}`.execute(trx);
      });
      await isLocked;
      try {
        const started = req('POST', '/research/start', owner.key, { pollId: poll, participants: 5 });
        await untilSettledOrWaiting(h.database.db, started, 'for no key update');
        release();
        await deletion;
        expectProblem(await started, 404, 'not_found');
        const stored = await sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM participants WHERE poll_id = ${poll}`.execute(h.database.db);
        expect(stored.rows[0]!.n).toBe(0);
      } finally {
        release();
        await deletion;
      }
    },
  );
});
