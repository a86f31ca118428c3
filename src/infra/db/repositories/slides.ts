import { sql, type Kysely, type Selectable } from 'kysely';
import type { SlideRepo } from '../../../app/ports/index.js';
import type { QuestionRule } from '../../../domain/logic.js';
import type { Slide, SlideAnswer, SlideType } from '../../../domain/slide.js';
import type { DB, SlidesTable } from '../schema.js';
import { json } from './page.js';

export const toSlide = (r: Selectable<SlidesTable>): Slide => ({
  id: r.id,
  pollId: r.poll_id,
  accountId: r.account_id,
  idx: r.idx,
  type: r.type as SlideType,
  title: r.title,
  subtitle: r.subtitle,
  answers: r.answers as SlideAnswer[],
  multi: r.multi,
  logic: r.logic as QuestionRule[],
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toRow = (s: Slide) => ({
  id: s.id,
  poll_id: s.pollId,
  account_id: s.accountId,
  idx: s.idx,
  type: s.type,
  title: s.title,
  subtitle: s.subtitle,
  answers: json(s.answers),
  multi: s.multi,
  logic: json(s.logic),
  created_at: s.createdAt,
  updated_at: s.updatedAt,
});

export function slideRepo(db: Kysely<DB>): SlideRepo {
  return {
    async listByPoll(pollId) {
      const rows = await db
        .selectFrom('slides')
        .selectAll()
        .where('poll_id', '=', pollId)
        .orderBy('idx')
        .orderBy('id')
        .execute();
      return rows.map(toSlide);
    },
    async get(id) {
      const r = await db.selectFrom('slides').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toSlide(r);
    },
    async insert(s) {
      await db.insertInto('slides').values(toRow(s)).execute();
    },
    async update(s) {
      const { id: _id, created_at: _c, ...rest } = toRow(s);
      await db.updateTable('slides').set(rest).where('id', '=', s.id).execute();
    },
    async delete(id) {
      await db.deleteFrom('slides').where('id', '=', id).execute();
    },
    async shiftFrom(pollId, idx) {
      await db
        .updateTable('slides')
        .set({ idx: sql`idx + 1` })
        .where('poll_id', '=', pollId)
        .where('idx', '>=', idx)
        .execute();
    },
  };
}
