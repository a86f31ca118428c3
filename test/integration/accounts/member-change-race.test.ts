import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { holdTransaction } from '../../support/hold.js';

/**
 * A member's request under way while the owner removes or demotes them (docs/operations.md,
 * "API keys, members and the signing secret"): changes to an account's members, keys and settings queue on its lock, and
 * the caller is checked again once it is theirs, so a request that waited acts on the membership
 * that committed, and a removed admin's key request cannot put them back. PostgreSQL only: the
 * embedded database runs one transaction at a time.
 */
describe.skipIf(!onPostgres)('a member change under way while the member acts', () => {
  let h: Harness;
  let acct: TestAccount;
  beforeAll(async () => {
    h = await harness();
    acct = await h.account();
  });
  afterAll(() => h?.close());

  const userOf = async (email: string) =>
    (await sql<{ id: string }>`SELECT id FROM users WHERE email = ${email}`.execute(h.database.db)).rows[0]!.id;
  const roleOf = async (userId: string) =>
    (
      await sql<{
        role: string;
      }>`SELECT role FROM memberships WHERE account_id = ${acct.accountId} AND user_id = ${userId}`.execute(
        h.database.db,
      )
    ).rows[0]?.role;
  /** The account's member change under way: its row locked, as the owner's request locks it, then `change`. */
  const ownerChanging = (change: string) =>
    holdTransaction(h.database.db, async (trx) => {
      await sql`SELECT id FROM accounts WHERE id = ${acct.accountId} FOR UPDATE`.execute(trx);
      await sql.raw(change).execute(trx);
    });
  const waiting = (n: number) =>
    expect
      .poll(
        async () =>
          (
            await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(h.database.db)
          ).rows[0]!.n,
        { timeout: 10_000, interval: 20 },
      )
      .toBeGreaterThanOrEqual(n);

  it('a removed admin’s requests that waited behind the removal change nothing', async () => {
    const email = 'removed-admin@example.com';
    const key = await h.member(acct.accountId, 'admin', email);
    const bystander = 'bystander@example.com';
    await h.member(acct.accountId, 'editor', bystander);
    const userId = await userOf(email);
    const removal = await ownerChanging(
      `DELETE FROM memberships WHERE account_id = '${acct.accountId}' AND user_id = '${userId}'`,
    );
    const inject = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
      h.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
    const requests = Promise.all([
      inject('POST', '/keys', { accountId: acct.accountId, email, role: 'admin' }),
      inject('PATCH', '/account/settings', { accountId: acct.accountId, notificationRecipients: [email] }),
      inject('DELETE', `/members?accountId=${acct.accountId}&email=${encodeURIComponent(bystander)}`),
    ]);
    await waiting(3);
    await removal.release();
    const answers = await requests;
    expect(answers.map((r) => r.statusCode)).toEqual([404, 404, 404]);
    expect(await roleOf(userId)).toBeUndefined();
    expect(await roleOf(await userOf(bystander))).toBe('editor');
    const account = await h.deps.store.accounts.get(acct.accountId);
    expect(account?.notificationRecipients ?? null).toBeNull();
  });

  it('a demoted admin’s key request that waited behind the demotion does not make them admin again', async () => {
    const email = 'demoted-admin@example.com';
    const key = await h.member(acct.accountId, 'admin', email);
    const userId = await userOf(email);
    const demotion = await ownerChanging(
      `UPDATE memberships SET role = 'editor' WHERE account_id = '${acct.accountId}' AND user_id = '${userId}'`,
    );
    const request = h.app.inject({
      method: 'POST',
      url: '/keys',
      headers: bearer(key),
      payload: { accountId: acct.accountId, email, role: 'admin' },
    });
    await waiting(1);
    await demotion.release();
    const res = await request;
    expect(res.statusCode).toBe(403);
    expect(await roleOf(userId)).toBe('editor');
  });
});
