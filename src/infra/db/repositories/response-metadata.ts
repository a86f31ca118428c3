import type { Kysely, Selectable } from 'kysely';
import type { ResponseRow } from '../../../domain/response.js';
import type { DB, ResponsesTable } from '../schema.js';
import { json } from './page.js';

/** An answer as stored; its metadata may be held by another answer of its submission (below). */
export const toResponse = (r: Selectable<ResponsesTable>): ResponseRow => ({
  id: r.id,
  accountId: r.account_id,
  pollId: r.poll_id,
  participantId: r.participant_id,
  slideId: r.slide_id,
  value: r.value,
  metadata: r.metadata,
  synthetic: r.synthetic,
  createdAt: r.created_at,
});

/**
 * A submission's metadata is stored once (migration 017): the first of its answers holds it, the
 * others hold {} and name that one in `metadata_from`. The answers of one submission share one
 * metadata object, which is how they are told apart from another submission's equal metadata.
 */
export function metadataOnce(rows: readonly Pick<ResponseRow, 'id' | 'pollId' | 'participantId' | 'metadata'>[]): {
  metadata: string;
  from: string | null;
}[] {
  // Per respondent: a holder is read with its respondent's answers (respondentAnswers), so one
  // object shared by several respondents' rows gets a holder for each.
  const holders = new Map<string, Map<object, string>>();
  return rows.map((r) => {
    if (!Object.keys(r.metadata).length) return { metadata: '{}', from: null };
    const key = `${r.pollId}\u0000${r.participantId}`;
    let theirs = holders.get(key);
    if (!theirs) holders.set(key, (theirs = new Map()));
    const holder = theirs.get(r.metadata);
    if (holder !== undefined) return { metadata: '{}', from: holder };
    theirs.set(r.metadata, r.id);
    return { metadata: json(r.metadata), from: null };
  });
}

/** Rows as answers, each given its submission's metadata from a holder among `rows` or in `holders`. */
function resolve(
  rows: readonly Selectable<ResponsesTable>[],
  holders: ReadonlyMap<string, Record<string, unknown>>,
): ResponseRow[] {
  return rows.map((r) => {
    const a = toResponse(r);
    if (r.metadata_from !== null) a.metadata = holders.get(r.metadata_from) ?? {};
    return a;
  });
}

const holdersIn = (rows: readonly Selectable<ResponsesTable>[]) =>
  new Map(rows.map((r) => [r.id, r.metadata] as const));

/**
 * A respondent's answers, whole: each submission's holder is among them, so its metadata is read
 * once and shared by the submission's answers, never copied per answer.
 */
export const respondentAnswers = (rows: readonly Selectable<ResponsesTable>[]): ResponseRow[] =>
  resolve(rows, holdersIn(rows));

/** A page of answers: holders not on the page are read by id, in the same poll. */
export async function pageOfAnswers(
  db: Kysely<DB>,
  rows: readonly Selectable<ResponsesTable>[],
): Promise<ResponseRow[]> {
  const holders = holdersIn(rows);
  const missing = rows.filter((r) => r.metadata_from !== null && !holders.has(r.metadata_from));
  if (missing.length) {
    const found = await db
      .selectFrom('responses')
      .select(['id', 'metadata'])
      .where('id', 'in', [...new Set(missing.map((r) => r.metadata_from!))])
      .where('poll_id', 'in', [...new Set(missing.map((r) => r.poll_id))])
      .execute();
    for (const h of found) holders.set(h.id, h.metadata);
  }
  return resolve(rows, holders);
}
