import { sql, type Kysely } from 'kysely';
import type { Account } from '../../../domain/account.js';
import type { AccountRepo } from '../../../app/ports/index.js';
import type { Plan } from '../../../domain/access.js';
import type { DB } from '../schema.js';
import { json } from './page.js';

export function accountRepo(db: Kysely<DB>): AccountRepo {
  return {
    async insert(a) {
      await db
        .insertInto('accounts')
        .values({
          id: a.id,
          name: a.name,
          plan: a.plan,
          defaults: json({}),
          created_at: a.createdAt,
          updated_at: a.updatedAt,
        })
        .execute();
    },
    async get(id) {
      const r = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
      if (!r) return undefined;
      return {
        id: r.id,
        name: r.name,
        plan: r.plan as Plan,
        defaults: r.defaults,
        notificationRecipients: r.notification_recipients,
        signingSecret: r.signing_secret,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      } satisfies Account;
    },
    async usage(id) {
      const r = await sql<{ polls: number; members: number; live_keys: number }>`SELECT
          coalesce((SELECT polls FROM account_usage WHERE account_id = ${id}), 0) AS polls,
          (SELECT count(*)::int FROM memberships WHERE account_id = ${id}) AS members,
          (SELECT count(*)::int FROM api_keys WHERE account_id = ${id} AND revoked_at IS NULL) AS live_keys`.execute(
        db,
      );
      const u = r.rows[0]!;
      return { polls: u.polls, members: u.members, liveKeys: u.live_keys };
    },
    async count() {
      const r = await db
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
    async setPlan(id, plan, now) {
      const r = await db.updateTable('accounts').set({ plan, updated_at: now }).where('id', '=', id).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    async setDefaults(id, defaults, recipients, now) {
      await db
        .updateTable('accounts')
        .set({
          defaults: json(defaults),
          notification_recipients: recipients === null ? null : json(recipients),
          updated_at: now,
        })
        .where('id', '=', id)
        .execute();
    },
    async lock(id) {
      await db.selectFrom('accounts').select('id').where('id', '=', id).forUpdate().execute();
    },
    async setSigningSecretIfMissing(id, secret, now) {
      const r = await db
        .updateTable('accounts')
        .set({ signing_secret: secret, updated_at: now })
        .where('id', '=', id)
        .where('signing_secret', 'is', null)
        .executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    async setSigningSecret(id, secret, now, overlapSince, force = false) {
      // The secret it replaces is kept, with the time, for the rotation's overlap; within a
      // running overlap (forced) the secret receivers held before it is kept instead.
      let q = db
        .updateTable('accounts')
        .set((eb) => ({
          previous_signing_secret: eb
            .case()
            .when('signing_secret_rotated_at', '>', overlapSince)
            .then(eb.ref('previous_signing_secret'))
            .else(eb.ref('signing_secret'))
            .end(),
          signing_secret_rotated_at: now,
          signing_secret: secret,
          updated_at: now,
        }))
        .where('id', '=', id);
      if (!force)
        q = q.where((eb) =>
          eb.or([eb('signing_secret_rotated_at', 'is', null), eb('signing_secret_rotated_at', '<=', overlapSince)]),
        );
      const r = await q.executeTakeFirst();
      if (r.numUpdatedRows > 0n) return { rotated: true };
      const last = await db
        .selectFrom('accounts')
        .select('signing_secret_rotated_at')
        .where('id', '=', id)
        .executeTakeFirst();
      return { rotated: false, lastRotatedAt: new Date(last?.signing_secret_rotated_at ?? now) };
    },
  };
}
