import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/infra/db/database.js';
import { arrayLiteral } from '../../../src/infra/db/repositories/page.js';
import { testDatabase } from '../../support/db.js';

// The batch record passes its columns as array literals it builds itself (page.ts): each element
// must come back from the database exactly as it went in.
describe('array literals round-trip through the database', () => {
  let database: Database;
  beforeAll(async () => {
    database = await testDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('keeps text elements whole: quotes, backslashes, separators, braces, blanks, NULL-like text and nulls', async () => {
    const values = [
      'plain',
      'a "quoted" word',
      'back\\slash',
      '\\"',
      'a,b',
      '{x}',
      ' spaced ',
      '',
      'NULL',
      null,
      'é ✓ 𝄞',
      'line\nbreak',
    ];
    const r = await sql<{ v: (string | null)[] }>`SELECT ${arrayLiteral(values)}::text[] AS v`.execute(database.db);
    expect(r.rows[0]!.v).toEqual(values);
  });

  it('keeps integers, negative and null, and an empty array', async () => {
    const r = await sql<{ ints: (number | null)[]; none: string[] }>`
      SELECT ${arrayLiteral([0, -7, 2147483647, null])}::int[] AS ints, ${arrayLiteral([])}::text[] AS none`.execute(
      database.db,
    );
    expect(r.rows[0]).toEqual({ ints: [0, -7, 2147483647, null], none: [] });
  });

  it('keeps times given as ISO strings', async () => {
    const at = new Date('2026-11-25T07:00:00.123Z');
    const r = await sql<{ v: Date[] }>`SELECT ${arrayLiteral([at.toISOString()])}::timestamptz[] AS v`.execute(
      database.db,
    );
    expect(r.rows[0]!.v).toEqual([at]);
  });
});
