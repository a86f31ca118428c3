import type { Kysely } from 'kysely';
import type { KeyRepo } from '../../../app/ports/index.js';
import type { DB } from '../schema.js';

export function keyRepo(db: Kysely<DB>): KeyRepo {
  return {
    async insert(k) {
      await db
        .insertInto('api_keys')
        .values({ id: k.id, user_id: k.userId, key_hash: k.keyHash, created_at: k.createdAt })
        .execute();
    },
    async findByHash(hash) {
      const r = await db
        .selectFrom('api_keys')
        .select(['id', 'user_id'])
        .where('key_hash', '=', hash)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return r && { keyId: r.id, userId: r.user_id };
    },
  };
}
