import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { EmbeddedDatabaseStopped } from '../../../src/infra/db/embedded-client.js';
import { openDatabase } from '../../../src/infra/db/database.js';
import { isStorageUnavailable } from '../../../src/infra/db/unavailable.js';
import { openRuntime, runAdminCommand, runWorker, serve, type Runtime } from '../../../src/main.js';
import { createPgDatabase, onPostgres } from '../../support/db.js';

/**
 * Storage lost under a running process (docs/operations.md, "Health and logs"): an embedded
 * database whose thread stops is told once, ends the process's `stopped` (the CLI then exits 1)
 * and fails /healthz; a PostgreSQL that takes no connection or no write is unavailable (503), and
 * a read-only one is not ready.
 */
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const dataDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'canvass-lost-'));
  dirs.push(d);
  return d;
};

/** A runtime opener that keeps what it opened and a logger whose lines the test reads. */
function capture() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
        done();
      },
    }),
  );
  const opened: Runtime[] = [];
  return {
    lines,
    opened,
    open: async (c: Parameters<typeof openRuntime>[0]) => {
      const rt = await openRuntime(c, { logger });
      opened.push(rt);
      return rt;
    },
  };
}

const fatalLines = (lines: { level: number; msg: string }[]) =>
  lines.filter((l) => l.level === 60 && /embedded database stopped/.test(l.msg));

describe.skipIf(onPostgres)('an embedded database that stops under a running process', () => {
  it('ends a worker’s `stopped` with the failure, logged fatal once, and the worker still stops', async () => {
    const c = capture();
    const worker = await runWorker(loadConfig({ CANVASS_DATA_DIR: dataDir(), LOG_LEVEL: 'info' }), { open: c.open });
    await c.opened[0]!.database.thread!.terminate();
    const e = await worker.stopped;
    expect(e).toBeInstanceOf(EmbeddedDatabaseStopped);
    await worker.stop();
    expect(fatalLines(c.lines)).toHaveLength(1);
  });

  it('fails a server’s /healthz and /readyz, refuses requests as unavailable, and ends `stopped`', async () => {
    const c = capture();
    const printed: string[] = [];
    const server = await serve(loadConfig({ CANVASS_DATA_DIR: dataDir(), PORT: '0', LOG_LEVEL: 'info' }), {
      worker: true,
      out: (line) => printed.push(line),
      open: c.open,
    });
    const key = /Owner API key, shown only this once: (\S+)/.exec(printed.join('\n'))![1]!;
    const accountId = /the Default account (\S+)/.exec(printed.join('\n'))![1]!;
    try {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      await c.opened[0]!.database.thread!.terminate();
      expect(await server.stopped).toBeInstanceOf(EmbeddedDatabaseStopped);
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ status: 'failed' });
      expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
      const res = await fetch(`${server.url}/poll`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ accountId, title: 'After the stop' }),
      });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { code: string }).code).toBe('unavailable');
      expect(fatalLines(c.lines)).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });
});

describe('a PostgreSQL that does not answer a new connection', () => {
  it('is given up after CANVASS_DB_CONNECT_TIMEOUT_MS, as storage unavailable', async () => {
    // Accepts the connection and never answers the start-up message.
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    try {
      const cfg = loadConfig({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/x`,
        CANVASS_DB_CONNECT_TIMEOUT_MS: '300',
      });
      expect(cfg.dbConnectTimeoutMs).toBe(300);
      const err = await openDatabase({ ...cfg, connectTimeoutMs: cfg.dbConnectTimeoutMs }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeDefined();
      expect(isStorageUnavailable(err)).toBe(true);
    } finally {
      silent.close();
    }
  });
});

describe.runIf(onPostgres)('a PostgreSQL that takes no writes (a standby after a failover)', () => {
  it('is not ready, and a write there is a 503 unavailable, not a 500', async () => {
    const made = await createPgDatabase();
    const name = new URL(made.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: process.env.CANVASS_TEST_PG_URL! });
    await admin.connect();
    let server: Awaited<ReturnType<typeof serve>> | undefined;
    try {
      const cfg = loadConfig({ DATABASE_URL: made.url, PORT: '0', LOG_LEVEL: 'silent' });
      const migrated = await openDatabase({ ...cfg, schema: 'apply' });
      await migrated.close();
      const created = (await runAdminCommand(
        cfg,
        'accounts.create',
        { name: 'Acme', ownerEmail: 'owner@acme.test', plan: 'premium' },
        pino({ level: 'silent' }),
      )) as { accountId: string; apiKey: string };
      await admin.query(`ALTER DATABASE "${name}" SET default_transaction_read_only = on`);
      server = await serve(cfg, { worker: false, out: () => {} });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'unavailable' });
      const res = await fetch(`${server.url}/poll`, {
        method: 'POST',
        headers: { authorization: `Bearer ${created.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ accountId: created.accountId, title: 'Read-only' }),
      });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { code: string }).code).toBe('unavailable');
      expect(res.headers.get('retry-after')).toBe('5');
      await admin.query(`ALTER DATABASE "${name}" RESET default_transaction_read_only`);
    } finally {
      await server?.stop();
      await admin.end();
      await made.drop();
    }
  });
});
