import { isoTime } from '../../../domain/iso-time.js';
import type { Page, PageRequest } from '../../../app/ports/index.js';

/** Rows were fetched with limit + 1: the extra one only tells whether another page exists. */
export function toPage<T extends { id: string }>(rows: T[], page: PageRequest): Page<T> {
  const hasNextPage = rows.length > page.limit;
  const data = hasNextPage ? rows.slice(0, page.limit) : rows;
  return { data, hasNextPage, endCursor: data.length ? data[data.length - 1]!.id : null };
}

export const json = (v: unknown): string => JSON.stringify(v);

/** Plain string order: on ids (ASCII) it is the order COLLATE "C" gives them. */
export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A time as an array element: timestamptz[] parameters take ISO strings. */
export const iso = (d: Date | null): string | null => (d ? isoTime(d) : null);

const QUOTED = /[\\"]/g;

/**
 * A PostgreSQL array literal (`{"a","b",NULL}`) of text or integer elements, for an array
 * parameter cast in SQL (`${arrayLiteral(ids)}::text[]`). Elements are quoted and escaped as
 * node-postgres quotes them; built in one pass, at a fraction of the driver's cost per element
 * on the batch record's hundreds of elements (docs/performance.md).
 */
export function arrayLiteral(values: readonly (string | number | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i];
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'number') out += String(v);
    else out += '"' + (v.includes('"') || v.includes('\\') ? v.replace(QUOTED, '\\$&') : v) + '"';
  }
  return out + '}';
}
