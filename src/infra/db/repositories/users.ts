import type { Kysely } from 'kysely';
import type { UserRepo } from '../../../app/ports/index.js';
import type { Plan, Role } from '../../../domain/access.js';
import type { DB } from '../schema.js';

export function userRepo(db: Kysely<DB>): UserRepo {
  return {
    async findByEmail(emails, mailbox) {
      if (!emails.length) return undefined;
      const rows = await db
        .selectFrom('users')
        .select(['id', 'email', 'mailbox'])
        .where((eb) =>
          mailbox ? eb.or([eb('email', 'in', emails), eb('mailbox', '=', mailbox)]) : eb('email', 'in', emails),
        )
        .execute();
      const found =
        emails.map((e) => rows.find((r) => r.email === e)).find((r) => r !== undefined) ??
        rows.find((r) => r.mailbox === mailbox);
      return found && { id: found.id, email: found.email };
    },
    async insertOrFind(u) {
      // Two requests naming one new mailbox at once (in two accounts, whose locks do not meet),
      // in one form or in two: the second waits for the first's insert and then reads its row,
      // rather than failing or making a second user.
      const inserted = await db
        .insertInto('users')
        .values({ id: u.id, email: u.email, mailbox: u.mailbox, created_at: u.createdAt })
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .executeTakeFirst();
      if (inserted) return inserted.id;
      const stored = await db
        .selectFrom('users')
        .select('id')
        .where((eb) => eb.or([eb('email', '=', u.email), eb('mailbox', '=', u.mailbox)]))
        .orderBy('id')
        .executeTakeFirstOrThrow();
      return stored.id;
    },
    async addMembership(m) {
      await db
        .insertInto('memberships')
        .values({ account_id: m.accountId, user_id: m.userId, role: m.role, created_at: m.createdAt })
        .execute();
    },
    async setRole(accountId, userId, role) {
      await db
        .updateTable('memberships')
        .set({ role })
        .where('account_id', '=', accountId)
        .where('user_id', '=', userId)
        .execute();
    },
    async membership(accountId, userId) {
      const r = await db
        .selectFrom('memberships as m')
        .innerJoin('accounts as a', 'a.id', 'm.account_id')
        .select(['m.account_id', 'm.role', 'a.plan'])
        .where('m.account_id', '=', accountId)
        .where('m.user_id', '=', userId)
        .executeTakeFirst();
      return r && { accountId: r.account_id, role: r.role as Role, plan: r.plan as Plan };
    },
    async memberships(userId) {
      const rows = await db
        .selectFrom('memberships as m')
        .innerJoin('accounts as a', 'a.id', 'm.account_id')
        .select(['m.account_id', 'm.role', 'a.plan', 'a.name'])
        .where('m.user_id', '=', userId)
        .orderBy('a.id')
        .execute();
      return rows.map((r) => ({
        accountId: r.account_id,
        role: r.role as Role,
        plan: r.plan as Plan,
        accountName: r.name,
      }));
    },
    async memberEmails(accountId, roles) {
      if (!roles.length) return [];
      const rows = await db
        .selectFrom('memberships as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select('u.email')
        .where('m.account_id', '=', accountId)
        .where('m.role', 'in', [...roles])
        .execute();
      return rows.map((r) => r.email);
    },
    async ownerEmail(accountId) {
      const r = await db
        .selectFrom('memberships as m')
        .innerJoin('users as u', 'u.id', 'm.user_id')
        .select('u.email')
        .where('m.account_id', '=', accountId)
        .where('m.role', '=', 'owner')
        .orderBy('m.created_at')
        .executeTakeFirst();
      return r?.email;
    },
    async removeMembership(accountId, userId) {
      await db.deleteFrom('memberships').where('account_id', '=', accountId).where('user_id', '=', userId).execute();
    },
    async countOwners(accountId) {
      const r = await db
        .selectFrom('memberships')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .where('role', '=', 'owner')
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
  };
}
