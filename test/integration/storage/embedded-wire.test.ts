import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/infra/db/database.js';
import { openEmbedded, type EmbeddedDb } from '../../../src/infra/db/embedded-client.js';
import { ROOT } from '../../support/processes.js';

// The embedded database is spoken to in PostgreSQL's wire protocol and its answers are read with
// node-postgres's parsers (embedded-wire.ts): a statement's rows and parameters are those the
// PostgreSQL driver gives, whichever storage runs it.
describe('embedded storage speaks the wire protocol as node-postgres does', () => {
  let database: Database;
  let raw: EmbeddedDb;
  beforeAll(async () => {
    database = await openDatabase({ dataDir: '', memory: true, schema: 'none' });
    raw = await openEmbedded(null);
  });
  afterAll(async () => {
    await database?.close();
    await raw?.close();
  });

  it('reads each column type as the PostgreSQL driver does', async () => {
    const r = await sql<Record<string, unknown>>`
      SELECT 42::int4 AS i4, 9007199254740991::int8 AS i8, 1.5::float8 AS f8, 12.30::numeric AS num,
        true AS flag, 'x'::text AS t, '2026-11-25T06:00:00.123Z'::timestamptz AS ts,
        '{"a":[1,"b"]}'::jsonb AS j, ARRAY['a','b"c',NULL]::text[] AS arr, ARRAY[1,2]::int4[] AS ints,
        NULL::text AS nothing, '\\x0102'::bytea AS bin`.execute(database.db);
    expect(r.rows).toEqual([
      {
        i4: 42,
        i8: 9007199254740991,
        f8: 1.5,
        num: '12.30',
        flag: true,
        t: 'x',
        ts: new Date('2026-11-25T06:00:00.123Z'),
        j: { a: [1, 'b'] },
        arr: ['a', 'b"c', null],
        ints: [1, 2],
        nothing: null,
        // A Buffer on PostgreSQL; its bytes cross the thread as a Uint8Array.
        bin: new Uint8Array([1, 2]),
      },
    ]);
  });

  it('sends parameters as the PostgreSQL driver does: dates, arrays, objects, buffers and nulls', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const r = await sql<Record<string, unknown>>`
      SELECT ${at}::timestamptz AS at, ${['a', 'b,c', 'd"e', null]}::text[] AS arr,
        ${JSON.stringify({ k: [1, 2] })}::jsonb AS obj, ${Buffer.from('hi')}::bytea AS bin,
        ${null}::int AS nothing, ${7}::int + 1 AS n`.execute(database.db);
    expect(r.rows).toEqual([
      {
        at,
        arr: ['a', 'b,c', 'd"e', null],
        obj: { k: [1, 2] },
        bin: new Uint8Array(Buffer.from('hi')),
        nothing: null,
        n: 8,
      },
    ]);
  });

  it('counts the rows a statement changed, and none for a query', async () => {
    await sql`CREATE TABLE counted (n int)`.execute(database.db);
    const inserted = await sql`INSERT INTO counted SELECT generate_series(1, 5)`.execute(database.db);
    const updated = await sql`UPDATE counted SET n = n + ${1} WHERE n > ${2}`.execute(database.db);
    const deleted = await sql`DELETE FROM counted WHERE n > ${5}`.execute(database.db);
    const selected = await sql`SELECT * FROM counted WHERE n > ${0}`.execute(database.db);
    expect([inserted, updated, deleted].map((r) => r.numAffectedRows)).toEqual([5n, 3n, 1n]);
    expect(selected.numAffectedRows).toBeUndefined();
    expect(selected.rows).toHaveLength(4);
  });

  it('runs a script of several statements, one result each, and stops at the first error', async () => {
    const results = await raw.exec(
      `CREATE TABLE script (n int); INSERT INTO script VALUES (1), (2); SELECT n FROM script ORDER BY n`,
    );
    expect(results.map((r) => r.command)).toEqual(['CREATE', 'INSERT', 'SELECT']);
    expect(results[1]!.affectedRows).toBe(2);
    expect(results[2]!.rows).toEqual([{ n: 1 }, { n: 2 }]);
    const err = await raw
      .exec(`INSERT INTO script VALUES (3); SELECT 1/0; INSERT INTO script VALUES (4)`)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '22012' });
    // A script runs as one implicit transaction: its first statement is undone with it.
    expect((await raw.query('SELECT count(*)::int AS n FROM script', [])).rows).toEqual([{ n: 2 }]);
  });

  it("keeps an error's fields and no field of the parser's own", async () => {
    const err = await raw.query('SELECT $1::int', ['not a number']).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: '22P02', message: expect.stringContaining('invalid input syntax') });
    expect(err).not.toHaveProperty('length');
    // The next statement runs normally: the failed one's Sync ended it.
    expect((await raw.query('SELECT $1::int AS n', [3])).rows).toEqual([{ n: 3 }]);
  });

  it('returns a large answer whole (more than one chunk of PostgreSQL output)', async () => {
    const r = await raw.query("SELECT g AS n, repeat('x', 1000) AS pad FROM generate_series(1, 2000) g", []);
    expect(r.rows).toHaveLength(2000);
    expect(r.rows.at(-1)).toEqual({ n: 2000, pad: 'x'.repeat(1000) });
  });

  // A `prepared:NAME` comment makes a statement a named prepared statement, as on a PostgreSQL
  // connection (prepared.ts): parsed by its first call, bound by the later ones.
  const listed = async (name: string) =>
    (
      await raw.query(
        'SELECT prepare_time, (generic_plans + custom_plans)::int AS runs FROM pg_prepared_statements WHERE name = $1',
        [name],
      )
    ).rows as { prepare_time: Date; runs: number }[];

  it('parses a named statement once and binds it on every later call', async () => {
    const text = '/* prepared:wire-once */ SELECT $1::int + 1 AS n';
    expect((await raw.query(text, [1])).rows).toEqual([{ n: 2 }]);
    const [first] = await listed('wire-once');
    expect(first?.runs).toBe(1);
    expect((await raw.query(text, [41])).rows).toEqual([{ n: 42 }]);
    expect((await raw.query(text, [null])).rows).toEqual([{ n: null }]);
    const [later] = await listed('wire-once');
    expect(later).toEqual({ prepare_time: first!.prepare_time, runs: 3 });
  });

  it('parses a named statement again after a first call that failed', async () => {
    const text = '/* prepared:wire-retry */ SELECT 10 / $1::int AS n';
    expect(await raw.query(text, [0]).catch((e: unknown) => e)).toMatchObject({ code: '22012' });
    expect(await listed('wire-retry')).toEqual([]);
    expect((await raw.query(text, [5])).rows).toEqual([{ n: 2 }]);
    expect((await listed('wire-retry')).map((r) => r.runs)).toEqual([1]);
  });

  it('refuses a name already given to another text, and keeps the first', async () => {
    await raw.query('/* prepared:wire-twice */ SELECT 1 AS n', []);
    const err = await raw.query('/* prepared:wire-twice */ SELECT 2 AS n', []).catch((e: unknown) => e);
    expect(err).toMatchObject({
      message: expect.stringContaining('"wire-twice" was already parsed from another text'),
    });
    expect((await raw.query('/* prepared:wire-twice */ SELECT 1 AS n', [])).rows).toEqual([{ n: 1 }]);
  });

  it('refuses a statement that reaches the thread after close, as storage unavailable (08006)', async () => {
    const db = await openEmbedded(null);
    const first = db.query('SELECT 1 AS n', []);
    const closing = db.close();
    const late = db.query('SELECT 2 AS n', []).catch((e: unknown) => e);
    await closing;
    expect((await first).rows).toEqual([{ n: 1 }]);
    expect(await late).toMatchObject({ code: '08006' });
  });

  // The suite runs the thread from source (through tsx); the service runs it from dist/, plain
  // JavaScript, where its imports of pg's and pg-protocol's modules resolve by themselves.
  it('runs from the build as it ships (dist/)', () => {
    const client = path.join(ROOT, 'dist/infra/db/embedded-client.js');
    expect(existsSync(client), 'dist/ is built by npm install (prepare) or npm run build').toBe(true);
    const script = `
      const { openEmbedded } = await import(${JSON.stringify(client)});
      const db = await openEmbedded(null);
      const r = await db.query('SELECT $1::int8 + 1 AS n, $2::text[] AS a', [41, ['x', 'y"z']]);
      console.log(JSON.stringify(r.rows));
      await db.close();`;
    // A file, not --eval: the database's thread inherits the process's flags.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'canvass-dist-'));
    const file = path.join(dir, 'run.mjs');
    writeFileSync(file, script);
    const run = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
    rmSync(dir, { recursive: true, force: true });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([{ n: 42, a: ['x', 'y"z'] }]);
  });
});
