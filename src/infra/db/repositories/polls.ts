import { sql, type Kysely, type Selectable } from 'kysely';
import type { PollRepo, PollRow } from '../../../app/ports/index.js';
import type { PollBody } from '../../../domain/poll.js';
import type { DB, PollsTable, SlidesTable, WebhooksTable } from '../schema.js';
import { toSlide } from './slides.js';
import { toWebhook } from './webhooks.js';
import { executeTogether } from '../pipelined-driver.js';

/** A row as json_agg renders it: times arrive as strings. */
type JsonRow<T> = Omit<Selectable<T>, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string };
import { json } from './page.js';

const toPoll = (r: Selectable<PollsTable>): PollRow => ({
  id: r.id,
  accountId: r.account_id,
  title: r.title,
  isVisible: r.is_visible,
  ...(r.body as PollBody),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function bodyOf(p: PollBody): PollBody {
  return {
    pageRules: p.pageRules,
    pageExcludeRules: p.pageExcludeRules,
    settings: p.settings,
    displaySettings: p.displaySettings,
    emailDisplaySettings: p.emailDisplaySettings,
    smsDisplaySettings: p.smsDisplaySettings,
    pageDisplaySettings: p.pageDisplaySettings,
    visibilitySettings: p.visibilitySettings,
    targetingSettings: p.targetingSettings,
    schedule: p.schedule,
    languageSettings: p.languageSettings,
    actionLogic: p.actionLogic,
  };
}

export function pollRepo(db: Kysely<DB>): PollRepo {
  // One round trip for a whole group of submissions: slides and webhooks come along as JSON
  // arrays of their rows. The poll's translations (up to 1 MiB), which no submission, payload
  // or test event reads, stay behind. `p.id COLLATE "default"`: a poll's id is in "C", its slides' and
  // webhooks' poll_id in the default collation, and compared in "C" the lookup could not use
  // their poll_id indexes (a scan of every slide and webhook per poll; see docs/performance.md).
  async function forSubmission(ids: string[], lock: ReturnType<typeof sql>) {
    if (!ids.length) return [];
    const r = await sql<
      Selectable<PollsTable> & { slide_rows: JsonRow<SlidesTable>[]; webhook_rows: JsonRow<WebhooksTable>[] }
    >`
      SELECT p.id, p.account_id, p.title, p.is_visible, p.body - 'languageSettings' AS body, p.created_at, p.updated_at,
        (SELECT coalesce(json_agg(s ORDER BY s.idx, s.id), '[]'::json) FROM slides s WHERE s.poll_id = p.id COLLATE "default") AS slide_rows,
        (SELECT coalesce(json_agg(w ORDER BY w.id), '[]'::json) FROM webhooks w WHERE w.poll_id = p.id COLLATE "default") AS webhook_rows
      FROM polls p WHERE p.id = ANY(${ids}::text[])
      ${lock}`.execute(db);
    return r.rows.map(({ slide_rows, webhook_rows, ...poll }) => ({
      poll: toPoll(poll),
      slides: slide_rows.map((s) =>
        toSlide({ ...s, created_at: new Date(s.created_at), updated_at: new Date(s.updated_at) }),
      ),
      webhooks: webhook_rows.map((w) =>
        toWebhook({
          ...w,
          created_at: new Date(w.created_at),
          paused_at: w.paused_at === null ? null : new Date(w.paused_at),
        }),
      ),
    }));
  }

  return {
    async insert(p) {
      // The poll's trigger counts it (migration 015); the count is read behind the insert, in
      // the same round trip, so it includes this poll. Until the transaction ends, the count's
      // row lock queues the account's other creates.
      const insert = db
        .insertInto('polls')
        .values({
          id: p.id,
          account_id: p.accountId,
          title: p.title,
          is_visible: p.isVisible,
          body: json(bodyOf(p)),
          created_at: p.createdAt,
          updated_at: p.updatedAt,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .compile();
      const usage = db.selectFrom('account_usage').select('polls').where('account_id', '=', p.accountId).compile();
      const [inserted, counted] = await executeTogether(db, [insert, usage]);
      if (Number(inserted!.numAffectedRows ?? 0n) === 0) return { inserted: false, pollsInAccount: 0 };
      return { inserted: true, pollsInAccount: (counted!.rows[0] as { polls: number }).polls };
    },
    async get(id) {
      const r = await db.selectFrom('polls').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toPoll(r);
    },
    async update(id, f) {
      await db
        .updateTable('polls')
        .set({ title: f.title, is_visible: f.isVisible, body: json(bodyOf(f.body)), updated_at: f.updatedAt })
        .where('id', '=', id)
        .execute();
    },
    async lock(id) {
      await db.selectFrom('polls').select('id').where('id', '=', id).forUpdate().execute();
    },
    async lockForResearch(id) {
      return !!(await db.selectFrom('polls').select('id').where('id', '=', id).forNoKeyUpdate().executeTakeFirst());
    },
    async getForSubmission(ids, keyShare = false) {
      // `keyShare` (a submission's read, whose answers' foreign keys take that lock anyway): a
      // change of the poll under way (its FOR UPDATE: making it anonymous, say) is waited for
      // and read as it leaves the poll, and one that comes later waits for the deliveries made
      // from this read to commit, so that it sees them.
      return forSubmission(ids, keyShare ? sql`FOR KEY SHARE OF p` : sql``);
    },
    async anonymousAmong(ids) {
      if (!ids.length) return new Set<string>();
      const r = await sql<{ id: string }>`
        SELECT id FROM polls WHERE id = ANY(${[...ids]}::text[]) AND body->'settings'->'anonymous' = 'true'::jsonb`.execute(
        db,
      );
      return new Set(r.rows.map((x) => x.id));
    },
    async delete(id, accountId, at) {
      const r = await db
        .deleteFrom('polls')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      await db
        .insertInto('deleted_polls')
        .values({ id, account_id: accountId, deleted_at: at })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      return Number(r.numDeletedRows) > 0;
    },
    async ownerOfDeleted(id) {
      const r = await db.selectFrom('deleted_polls').select('account_id').where('id', '=', id).executeTakeFirst();
      return r?.account_id;
    },
    async listByAccount(accountId, page, maxBytes) {
      // Sizes first, as a trigger keeps them with each poll (docs/operations.md, "Memory"), so
      // that only the bodies the page may hold are read; a poll without one is counted here.
      let q = db
        .selectFrom('polls')
        .select(['id', sql<number>`coalesce(body_bytes, octet_length(body::text))`.as('bytes')])
        .where('account_id', '=', accountId);
      if (page.startCursor) q = q.where('id', '>', page.startCursor);
      const sizes = await q
        .orderBy('id')
        .limit(page.limit + 1)
        .execute();
      const ids: string[] = [];
      let total = 0;
      for (const s of sizes.slice(0, page.limit)) {
        if (ids.length && total + Number(s.bytes) > maxBytes) break;
        total += Number(s.bytes);
        ids.push(s.id);
      }
      const rows = ids.length
        ? await db
            .selectFrom('polls')
            .selectAll()
            .where('account_id', '=', accountId)
            .where('id', 'in', ids)
            .orderBy('id')
            .execute()
        : [];
      // A poll deleted between the two reads is left out; the cursor still moves past it.
      const endCursor = ids.length ? ids[ids.length - 1]! : null;
      return { data: rows.map(toPoll), hasNextPage: sizes.length > ids.length, endCursor };
    },
  };
}
