import type { Kysely, Selectable } from 'kysely';
import type { PollRepo, PollRow } from '../../../app/ports.js';
import type { PollBody } from '../../../domain/poll.js';
import type { DB, PollsTable } from '../schema.js';
import { json, toPage } from './page.js';

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
  return {
    async insert(p) {
      const r = await db
        .insertInto('polls')
        .values({ id: p.id, account_id: p.accountId, title: p.title, is_visible: p.isVisible, body: json(bodyOf(p)), created_at: p.createdAt, updated_at: p.updatedAt })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
    },
    async get(id) {
      const r = await db.selectFrom('polls').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toPoll(r);
    },
    async update(id, f) {
      await db.updateTable('polls').set({ title: f.title, is_visible: f.isVisible, body: json(bodyOf(f.body)), updated_at: f.updatedAt }).where('id', '=', id).execute();
    },
    async lock(id) {
      await db.selectFrom('polls').select('id').where('id', '=', id).forUpdate().execute();
    },
    async delete(id) {
      const r = await db.deleteFrom('polls').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
    async listByAccount(accountId, page) {
      let q = db.selectFrom('polls').selectAll().where('account_id', '=', accountId);
      if (page.startCursor) q = q.where('id', '>', page.startCursor);
      const rows = await q.orderBy('id').limit(page.limit + 1).execute();
      return toPage(rows.map(toPoll), page);
    },
  };
}
