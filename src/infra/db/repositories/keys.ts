import type { Kysely } from 'kysely';
import type { Role } from '../../../domain/access.js';
import type { KeyRepo } from '../../../app/ports/index.js';
import type { DB } from '../schema.js';
import { toPage } from './page.js';

export function keyRepo(db: Kysely<DB>): KeyRepo {
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
        })
        .execute();
    },
    async findByHash(hash) {
      const r = await db
        .selectFrom('api_keys')
        .select(['id', 'user_id', 'account_id', 'last_used_at'])
        .where('key_hash', '=', hash)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return r && { keyId: r.id, userId: r.user_id, accountId: r.account_id, lastUsedAt: r.last_used_at };
    },
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
      const r = await db
        .selectFrom('api_keys')
        .select(['id', 'user_id', 'account_id', 'revoked_at'])
        .where('id', '=', id)
        .executeTakeFirst();
      return r && { id: r.id, userId: r.user_id, accountId: r.account_id, revokedAt: r.revoked_at };
    },
    async listForAccount(accountId, page, viewer, viewerLimited = false) {
      let q = db
        .selectFrom('api_keys as k')
        .innerJoin('memberships as m', 'm.user_id', 'k.user_id')
        .innerJoin('users as u', 'u.id', 'k.user_id')
        .select(['k.id', 'k.prefix', 'u.email', 'm.role', 'k.created_at', 'k.last_used_at', 'k.revoked_at'])
        .where('m.account_id', '=', accountId)
        .where((eb) =>
          eb.or([
            eb('k.account_id', '=', accountId),
            eb.and([
              eb('k.account_id', 'is', null),
              // A key of the user's own (good in all their accounts) is shown to a viewer only
              // when the viewer owns or administers every other account it opens. A viewer's
              // own such keys too, unless the viewer's key is limited to this account: whoever
              // made that key (an owner here, for a member of other accounts) holds it.
              viewer
                ? eb.or([
                    ...(viewerLimited ? [] : [eb('k.user_id', '=', viewer)]),
                    eb.not(
                      eb.exists(
                        eb
                          .selectFrom('memberships as other')
                          .select('other.user_id')
                          .whereRef('other.user_id', '=', 'k.user_id')
                          .where('other.account_id', '<>', accountId)
                          // A viewer whose own key is limited to this account administers no other.
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
                    ),
                  ])
                : eb.lit(true),
            ]),
          ]),
        );
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
          createdAt: r.created_at,
          lastUsedAt: r.last_used_at,
          revokedAt: r.revoked_at,
        })),
        page,
      );
    },
    async revoke(filter, now) {
      let q = db.updateTable('api_keys').set({ revoked_at: now }).where('revoked_at', 'is', null);
      if ('id' in filter) q = q.where('id', '=', filter.id);
      else {
        q = q.where('user_id', '=', filter.userId);
        if (filter.accountId) q = q.where('account_id', '=', filter.accountId);
      }
      const r = await q.executeTakeFirst();
      return Number(r.numUpdatedRows);
    },
  };
}
