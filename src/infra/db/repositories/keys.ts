import { sql, type Kysely } from 'kysely';
import type { Role } from '../../../domain/access.js';
import type { KeyRepo } from '../../../app/ports/index.js';
import type { DB } from '../schema.js';
import { toPage } from './page.js';

/** The accounts a key was withdrawn from (api_key_withdrawals), read with the key. */
const withdrawnFrom = sql<string[]>`ARRAY(SELECT w.account_id FROM api_key_withdrawals w WHERE w.key_id = k.id)`.as(
  'withdrawn_from',
);

export function keyRepo(db: Kysely<DB>): KeyRepo {
  /** A live key found by its hash (each request) or its id (a request that runs long checks again). */
  const liveKey = async (by: 'k.key_hash' | 'k.id', value: string) => {
    const r = await db
      .selectFrom('api_keys as k')
      .select(['k.id', 'k.user_id', 'k.account_id', 'k.last_used_at', withdrawnFrom])
      .where(by, '=', value)
      .where('k.revoked_at', 'is', null)
      .executeTakeFirst();
    return (
      r && {
        keyId: r.id,
        userId: r.user_id,
        accountId: r.account_id,
        withdrawnFrom: r.withdrawn_from,
        lastUsedAt: r.last_used_at,
      }
    );
  };
  return {
    async insert(k) {
      await db
        .insertInto('api_keys')
        .values({
          id: k.id,
          user_id: k.userId,
          key_hash: k.keyHash,
          prefix: k.prefix,
          account_id: k.accountId,
          created_at: k.createdAt,
          created_by: k.createdBy ?? null,
          created_with: k.createdWith ?? null,
        })
        .execute();
    },
    findByHash: (hash) => liveKey('k.key_hash', hash),
    findLive: (id) => liveKey('k.id', id),
    async touch(id, now) {
      await db
        .updateTable('api_keys')
        .set({ last_used_at: now })
        .where('id', '=', id)
        .where((eb) =>
          eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', new Date(now.getTime() - 60_000))]),
        )
        .execute();
    },
    async get(id) {
      // The lock first, in a statement of its own: one that waited for it reads, under READ
      // COMMITTED, with its own start's snapshot, so its withdrawals would miss those just committed.
      await db.selectFrom('api_keys').select('id').where('id', '=', id).forUpdate().execute();
      const r = await db
        .selectFrom('api_keys as k')
        .select(['k.id', 'k.user_id', 'k.account_id', 'k.revoked_at', withdrawnFrom])
        .where('k.id', '=', id)
        .executeTakeFirst();
      return (
        r && {
          id: r.id,
          userId: r.user_id,
          accountId: r.account_id,
          withdrawnFrom: r.withdrawn_from,
          revokedAt: r.revoked_at,
        }
      );
    },
    async listForAccount(accountId, page, viewer, viewerLimited = false) {
      let q = db
        .selectFrom('api_keys as k')
        .innerJoin('memberships as m', 'm.user_id', 'k.user_id')
        .innerJoin('users as u', 'u.id', 'k.user_id')
        .leftJoin('api_key_withdrawals as w', (j) =>
          j.onRef('w.key_id', '=', 'k.id').on('w.account_id', '=', accountId),
        )
        .select(['k.id', 'k.prefix', 'u.email', 'm.role', 'k.account_id', 'k.created_at', 'k.last_used_at'])
        .select((eb) => eb.fn.coalesce('k.revoked_at', 'w.withdrawn_at').as('revoked_at'))
        .select((eb) =>
          // Another member's key of their own that also opens an account the viewer neither owns
          // nor administers (any other, for a viewer whose key opens this account only, and then
          // the viewer's own keys too: whoever made that key holds it): its last use may have been
          // there, which is not this viewer's to see.
          (viewer
            ? eb.and([
                eb('k.account_id', 'is', null),
                ...(viewerLimited ? [] : [eb('k.user_id', '<>', viewer)]),
                eb.exists(
                  eb
                    .selectFrom('memberships as other')
                    .select('other.user_id')
                    .whereRef('other.user_id', '=', 'k.user_id')
                    .where('other.account_id', '<>', accountId)
                    .where((x) =>
                      viewerLimited
                        ? x.lit(true)
                        : x.not(
                            x.exists(
                              x
                                .selectFrom('memberships as mine')
                                .select('mine.user_id')
                                .where('mine.user_id', '=', viewer)
                                .whereRef('mine.account_id', '=', 'other.account_id')
                                .where('mine.role', 'in', ['owner', 'admin']),
                            ),
                          ),
                    ),
                ),
              ])
            : eb.lit(false)
          ).as('use_elsewhere'),
        )
        .where('m.account_id', '=', accountId)
        // Limited to this account, or to none: every key that opens it, or did.
        .where((eb) => eb.or([eb('k.account_id', '=', accountId), eb('k.account_id', 'is', null)]));
      if (page.startCursor) q = q.where('k.id', '<', page.startCursor);
      const rows = await q
        .orderBy('k.id', 'desc')
        .limit(page.limit + 1)
        .execute();
      return toPage(
        rows.map((r) => ({
          id: r.id,
          prefix: r.prefix,
          email: r.email,
          role: r.role as Role,
          limited: r.account_id !== null,
          createdAt: r.created_at,
          lastUsedAt: r.use_elsewhere ? null : r.last_used_at,
          revokedAt: r.revoked_at,
        })),
        page,
      );
    },
    async revoke(filter, now) {
      if ('madeBy' in filter || 'madeFor' in filter) {
        // Keys someone saw when they were made: those a user made for others, or a user's made
        // by others; and what was made with those (by whoever held them), on down. Revoked
        // links are followed too: a key revoked since may have made others. Only the keys that
        // give the holder more than before go: all of them for a maker removed (or no longer
        // managing), those of members now outranking a maker demoted, a promoted member's own.
        const outranking = (col: string) =>
          'madeBy' in filter && filter.roles
            ? sql`AND ${sql.ref(col)} IN (SELECT user_id FROM memberships WHERE account_id = ${filter.accountId} AND role IN (${sql.join(filter.roles.length ? filter.roles : [''])}))`
            : sql``;
        const roots =
          'madeBy' in filter
            ? sql`k.created_by = ${filter.madeBy} AND k.user_id <> ${filter.madeBy} AND k.account_id = ${filter.accountId} ${outranking('k.user_id')}`
            : sql`k.user_id = ${filter.madeFor} AND k.account_id = ${filter.accountId} AND k.created_by <> ${filter.madeFor}`;
        const whose = 'madeFor' in filter ? sql`AND user_id = ${filter.madeFor}` : outranking('user_id');
        const r = await sql<{ id: string }>`
          WITH RECURSIVE made(id) AS (
            SELECT k.id FROM api_keys k WHERE ${roots}
            UNION
            SELECT k.id FROM api_keys k JOIN made ON k.created_with = made.id
          )
          UPDATE api_keys SET revoked_at = ${now}
          WHERE id IN (SELECT id FROM made) AND revoked_at IS NULL ${whose}
          RETURNING id`.execute(db);
        return r.rows.length;
      }
      let q = db.updateTable('api_keys').set({ revoked_at: now }).where('revoked_at', 'is', null);
      if ('id' in filter) q = q.where('id', '=', filter.id);
      else {
        q = q.where('user_id', '=', filter.userId);
        if (filter.accountId) q = q.where('account_id', '=', filter.accountId);
      }
      const r = await q.executeTakeFirst();
      return Number(r.numUpdatedRows);
    },
    async withdraw(id, accountIds, now) {
      if (!accountIds.length) return;
      await db
        .insertInto('api_key_withdrawals')
        .values(accountIds.map((accountId) => ({ key_id: id, account_id: accountId, withdrawn_at: now })))
        .onConflict((oc) => oc.columns(['key_id', 'account_id']).doNothing())
        .execute();
    },
  };
}
