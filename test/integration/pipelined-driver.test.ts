import { sql, type Kysely, Kysely as KyselyDb } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/infra/db/database.js';
import { executeThenCommit, executeTogether, PipelinedPostgresDialect } from '../../src/infra/db/pipelined-driver.js';
import { createPgDatabase, onPostgres } from '../support/db.js';
import { pgProxy, type PgProxy } from '../support/pg-proxy.js';
import { CommitOutcomeUnknownError } from '../../src/app/ports/commit-outcome-unknown.js';

// The driver is PostgreSQL's only (PGlite runs the same helpers as plain statements, which
// every submission test covers).
describe.skipIf(!onPostgres)('PostgreSQL transactions with pipelined BEGIN and COMMIT', () => {
  let made: Awaited<ReturnType<typeof createPgDatabase>>;
  let database: Database;
  let db: Kysely<unknown>;
  let other: pg.Client;
  const rows = async () => (await other.query<{ v: string }>('SELECT v FROM t ORDER BY v')).rows.map((r) => r.v);
  const insert = (v: string) => sql`INSERT INTO t (v) VALUES (${v})`;

  beforeAll(async () => {
    made = await createPgDatabase();
    database = await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'none', poolSize: 2 });
    db = database.db as unknown as Kysely<unknown>;
    other = new pg.Client({ connectionString: made.url });
    await other.connect();
    await other.query('CREATE TABLE t (v text PRIMARY KEY)');
  });
  afterAll(async () => {
    await other?.end();
    await database?.close();
    await made?.drop();
  });
  beforeEach(async () => {
    await other.query('TRUNCATE t');
  });

  /** A database of its own whose socket writes are recorded, in order, with '<answer>' for each read. */
  const recorded = () => {
    const wire: string[] = [];
    const pool = new pg.Pool({ connectionString: made.url, max: 1, pipeline: true });
    pool.on('connect', (client) => {
      const stream = (client as unknown as { connection: { stream: NodeJS.ReadWriteStream } }).connection.stream;
      const write = stream.write.bind(stream) as (chunk: Buffer, ...rest: unknown[]) => boolean;
      stream.write = ((chunk: Buffer, ...rest: unknown[]) => (
        wire.push(chunk.toString('latin1')),
        write(chunk, ...rest)
      )) as typeof stream.write;
      // Ahead of pg's own listener, which may write the next statement as soon as it reads an answer.
      stream.prependListener('data', () => wire.push('<answer>'));
    });
    return { own: new KyselyDb<unknown>({ dialect: new PipelinedPostgresDialect({ pool }) }), wire };
  };
  const answersBetween = (wire: string[], from: number, to: number) =>
    wire.slice(from, to).filter((w) => w === '<answer>').length;

  it('writes BEGIN with the first statement and COMMIT with the last, without waiting for answers in between', async () => {
    const { own, wire } = recorded();
    try {
      await own.transaction().execute(async (trx) => {
        await insert('a').execute(trx);
        await executeThenCommit(trx, insert('b').compile(trx));
      });
      const at = (text: string) => wire.findIndex((w) => w.includes(text));
      expect(at('begin')).toBeGreaterThanOrEqual(0);
      expect(answersBetween(wire, at('begin'), at('VALUES ($1)'))).toBe(0);
      const b = wire.findLastIndex((w) => w.includes('VALUES ($1)'));
      expect(b).toBeGreaterThan(at('VALUES ($1)'));
      expect(answersBetween(wire, b, at('commit'))).toBe(0);
      expect(answersBetween(wire, at('begin'), b)).toBeGreaterThan(0);
      expect(await rows()).toEqual(['a', 'b']);
    } finally {
      await own.destroy();
    }
  });

  it('writes a whole transaction of statements sent together, BEGIN to COMMIT, before reading any answer', async () => {
    const { own, wire } = recorded();
    try {
      await own
        .transaction()
        .execute((trx) =>
          executeTogether(trx, [insert('a').compile(trx), insert('b').compile(trx)], { thenCommit: true }),
        );
      const begin = wire.findIndex((w) => w.includes('begin'));
      const commit = wire.findIndex((w) => w.includes('commit'));
      expect(begin).toBeGreaterThanOrEqual(0);
      expect(commit).toBeGreaterThan(begin);
      expect(answersBetween(wire, begin, commit)).toBe(0);
      expect(await rows()).toEqual(['a', 'b']);
    } finally {
      await own.destroy();
    }
  });

  it('commits a transaction whose last statement took COMMIT along', async () => {
    await db.transaction().execute(async (trx) => {
      await insert('a').execute(trx);
      await executeThenCommit(trx, insert('b').compile(trx));
    });
    expect(await rows()).toEqual(['a', 'b']);
  });

  it('rolls the whole transaction back when that last statement fails, and says so', async () => {
    await other.query("INSERT INTO t VALUES ('taken')");
    const run = db.transaction().execute(async (trx) => {
      await insert('a').execute(trx);
      await executeThenCommit(trx, insert('taken').compile(trx));
    });
    await expect(run).rejects.toThrow(/duplicate key/);
    expect(await rows()).toEqual(['taken']);
  });

  it('does not report a commit when the failures were swallowed: the server rolled back', async () => {
    await other.query("INSERT INTO t VALUES ('taken')");
    const run = db.transaction().execute(async (trx) => {
      await insert('taken')
        .execute(trx)
        .catch(() => {});
      await executeThenCommit(trx, insert('b').compile(trx)).catch(() => {});
    });
    await expect(run).rejects.toThrow(/rolled back/);
    expect(await rows()).toEqual(['taken']);
  });

  it('reports the rollback of a plain COMMIT after a refused statement whose failure was swallowed', async () => {
    await other.query("INSERT INTO t VALUES ('taken')");
    const run = db.transaction().execute(async (trx) => {
      await insert('a').execute(trx);
      await insert('taken')
        .execute(trx)
        .catch(() => {});
    });
    await expect(run).rejects.toThrow(/rolled back/);
    expect(await rows()).toEqual(['taken']);
  });

  it('refuses a statement after the early COMMIT: it would run outside the transaction', async () => {
    const run = db.transaction().execute(async (trx) => {
      await executeThenCommit(trx, insert('a').compile(trx));
      await insert('b').execute(trx);
    });
    await expect(run).rejects.toThrow(/after the transaction was committed/);
    expect(await rows()).toEqual(['a']);
  });

  it('keeps transactions whole with BEGIN sent ahead: a later failure undoes the first write', async () => {
    const run = db.transaction().execute(async (trx) => {
      await insert('a').execute(trx);
      await sql`SELECT 1 / 0`.execute(trx);
    });
    await expect(run).rejects.toThrow(/division by zero/);
    expect(await rows()).toEqual([]);
    // A transaction with no statement at all still commits cleanly, and the connection is reused.
    await db.transaction().execute(async () => {});
    await db.transaction().execute(async (trx) => void (await insert('c').execute(trx)));
    expect(await rows()).toEqual(['c']);
  });

  it('runs statements sent together in order, each seeing the writes before it; a failure fails those behind it', async () => {
    const [, seen] = await db
      .transaction()
      .execute((trx) =>
        executeTogether(trx, [insert('a').compile(trx), sql`SELECT count(*)::int AS n FROM t`.compile(trx)]),
      );
    expect(seen!.rows).toEqual([{ n: 1 }]);
    const run = db
      .transaction()
      .execute((trx) => executeTogether(trx, [insert('a').compile(trx), insert('z').compile(trx)]));
    await expect(run).rejects.toThrow(/duplicate key/);
    expect(await rows()).toEqual(['a']);
  });

  describe('a connection lost with the COMMIT', () => {
    let proxy: PgProxy;
    let proxied: Kysely<unknown>;
    beforeAll(async () => {
      proxy = await pgProxy(made.url);
      const pool = new pg.Pool({ connectionString: proxy.url, max: 1, pipeline: true });
      // A lost connection is also an 'error' event, as in database.ts: the failed statements report it.
      pool.on('error', () => {});
      pool.on('connect', (client) => void client.on('error', () => {}));
      proxied = new KyselyDb<unknown>({ dialect: new PipelinedPostgresDialect({ pool }) });
    });
    afterAll(async () => {
      await proxied?.destroy();
      await proxy?.close();
    });

    it('is an unknown outcome, whether COMMIT went with the last statement or after it; the server did commit', async () => {
      const early = proxy.cut('after-commit');
      const run = proxied.transaction().execute(async (trx) => {
        await insert('a').execute(trx);
        await executeThenCommit(trx, insert('b').compile(trx));
      });
      await expect(run).rejects.toBeInstanceOf(CommitOutcomeUnknownError);
      await early;
      const plain = proxy.cut('after-commit');
      const run2 = proxied.transaction().execute(async (trx) => void (await insert('c').execute(trx)));
      await expect(run2).rejects.toBeInstanceOf(CommitOutcomeUnknownError);
      await plain;
      expect(await rows()).toEqual(['a', 'b', 'c']);
    });

    it('is a plain failure when a statement was refused: that transaction cannot have committed', async () => {
      await other.query("INSERT INTO t VALUES ('taken')");
      const cut = proxy.cut('before-commit');
      const run = proxied.transaction().execute(async (trx) => {
        await insert('taken')
          .execute(trx)
          .catch(() => {});
        await executeThenCommit(trx, insert('b').compile(trx)).catch(() => {});
      });
      const err = await run.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(CommitOutcomeUnknownError);
      expect(await rows()).toEqual(['taken']);
      await cut;
    });
  });
});
