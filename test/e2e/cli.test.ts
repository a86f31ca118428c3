import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_DEFAULTS } from '../../src/domain/poll-defaults.js';
import { migrationNames } from '../../src/infra/db/migrate.js';
import { createPgDatabase, onPostgres } from '../support/db.js';
import { apiClient, freePort, spawnCanvass, waitForHttp, type CanvassProcess, type Env } from '../support/processes.js';

/**
 * The `canvass` command line as operators use it (README, docs/operations.md): real processes, each
 * on its own data directory. PGlite needs a few seconds per open (more for a new directory),
 * so the embedded scenario reuses one directory through the steps that build on each other.
 */

const KEY = /^cvk_[0-9A-Za-z]{32}$/;
const SLOW = 180_000;

const live = new Set<CanvassProcess>();
let tmp: string;

beforeAll(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'canvass-cli-'));
});
afterAll(async () => {
  await Promise.all([...live].map((p) => p.stop(5_000)));
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

type Run = { code: number | null; stdout: string; stderr: string; ms: number };

/** A one-shot `canvass …`: exit code, stdout and stderr apart, and how long it took. */
async function canvass(args: string[], env: Env, timeoutMs = 120_000): Promise<Run> {
  const started = Date.now();
  const proc = spawnCanvass(`canvass ${args.join(' ')}`, args, { LOG_LEVEL: 'warn', ...env });
  live.add(proc);
  let stdout = '';
  let stderr = '';
  proc.child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const closed = new Promise<number | null>((r) => proc.child.once('close', (code) => r(code)));
  const t = setTimeout(() => proc.child.kill('SIGKILL'), timeoutMs);
  const code = await closed;
  clearTimeout(t);
  live.delete(proc);
  return { code, stdout, stderr, ms: Date.now() - started };
}

/** stdout of a --json command: exactly one line holding one JSON object. */
function oneObject(run: Run): Record<string, unknown> {
  const lines = run.stdout.split('\n').filter((l) => l !== '');
  expect(lines, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toHaveLength(1);
  const value: unknown = JSON.parse(lines[0]!);
  expect(value).toBeTypeOf('object');
  expect(Array.isArray(value)).toBe(false);
  return value as Record<string, unknown>;
}

function succeeded(run: Run): Record<string, unknown> {
  expect(run.code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  return oneObject(run);
}

/** `canvass serve` on a free port, waited for until /healthz answers. */
async function startServe(env: Env): Promise<{ proc: CanvassProcess; base: string }> {
  const port = await freePort();
  const proc = spawnCanvass('canvass serve', ['serve'], {
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    ...env,
  });
  live.add(proc);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, 150_000, proc);
  return { proc, base };
}

async function stopServe(proc: CanvassProcess): Promise<void> {
  const { code } = await proc.stop(20_000);
  live.delete(proc);
  expect(code, proc.output()).toBe(0);
}

describe('arguments and environment are checked before storage is touched', () => {
  it(
    'a bad plan or role is refused with a message naming the allowed values, and creates nothing',
    async () => {
      const dir = path.join(tmp, 'never');
      const env = { CANVASS_DATA_DIR: dir };
      const [plan, setPlan, role] = await Promise.all([
        canvass(['accounts', 'create', '--name', 'N', '--owner-email', 'n@example.com', '--plan', 'gold'], env),
        canvass(['accounts', 'set-plan', '--account', 'acc_x', '--plan', 'platinum', '--json'], env),
        canvass(['keys', 'create', '--account', 'acc_x', '--email', 'e@example.com', '--role', 'boss', '--json'], env),
      ]);
      for (const [run, what] of [
        [plan, 'plan'],
        [setPlan, 'plan'],
        [role, 'role'],
      ] as const) {
        expect(run.code, run.stderr).not.toBe(0);
        expect(run.stderr).toMatch(new RegExp(`${what} must be one of`));
      }
      expect(plan.stderr).toMatch(/free, basic, premium, enterprise/);
      expect(role.stderr).toMatch(/owner, admin, billing_admin, editor, read_only/);
      // With --json the failure is still one JSON object on stdout.
      expect(oneObject(setPlan)).toEqual({ error: expect.stringMatching(/plan must be one of/) });
      expect(oneObject(role)).toEqual({ error: expect.stringMatching(/role must be one of/) });
      // An email that is none, a blank name, or a page cursor that is no key's id, the same way.
      const [noEmail, blankName, badMember, badCursor] = await Promise.all([
        canvass(['accounts', 'create', '--name', 'N', '--owner-email', 'bob', '--json'], env),
        canvass(['accounts', 'create', '--name', '  ', '--owner-email', 'n@example.com', '--json'], env),
        canvass(
          ['keys', 'create', '--account', 'acc_x', '--email', 'e@@example.com', '--role', 'editor', '--json'],
          env,
        ),
        canvass(['keys', 'list', '--account', 'acc_x', '--start-cursor', 'whk_0000000000000000000000', '--json'], env),
      ]);
      for (const [run, what] of [
        [noEmail, /must be an email address/],
        [blankName, /must be 1 to 200 characters/],
        [badMember, /must be an email address/],
        [badCursor, /must be a key_ id/],
      ] as const) {
        expect(run.code, run.stderr).not.toBe(0);
        expect(oneObject(run)).toEqual({ error: expect.stringMatching(what) });
      }
      expect(existsSync(dir)).toBe(false);
    },
    SLOW,
  );

  it(
    'a bad environment value stops start-up with a message naming the variable',
    async () => {
      const dir = path.join(tmp, 'never-env');
      const runs = await Promise.all([
        canvass(['serve'], { CANVASS_DATA_DIR: dir, PORT: 'abc' }),
        canvass(['accounts', 'create', '--name', 'N', '--owner-email', 'n@example.com', '--json'], {
          CANVASS_DATA_DIR: dir,
          PORT: 'abc',
        }),
        canvass(['serve'], { CANVASS_DATA_DIR: dir, PORT: '70000' }),
        canvass(['serve'], { CANVASS_DATA_DIR: dir, CANVASS_RETRY_LADDER_MS: '1,2' }),
        canvass(['serve'], { CANVASS_DATA_DIR: dir, DATABASE_URL: 'mysql://localhost/x' }),
        // An empty secret: refused rather than taken for embedded storage (the directory stays unmade).
        canvass(['serve'], { CANVASS_DATA_DIR: dir, DATABASE_URL: '' }),
      ]);
      const [port, create, range, ladder, url, blankUrl] = runs as [Run, Run, Run, Run, Run, Run];
      for (const run of runs) expect(run.code, run.stdout + run.stderr).not.toBe(0);
      expect(port.stderr).toMatch(/PORT/);
      expect(port.stderr).toMatch(/abc/);
      expect(create.stderr).toMatch(/PORT/);
      expect(oneObject(create)).toEqual({ error: expect.stringMatching(/PORT/) });
      expect(range.stderr).toMatch(/PORT.*65535/);
      expect(ladder.stderr).toMatch(/CANVASS_RETRY_LADDER_MS/);
      expect(url.stderr).toMatch(/DATABASE_URL/);
      expect(blankUrl.stderr).toMatch(/DATABASE_URL: is set but blank/);
      expect(existsSync(dir)).toBe(false);
    },
    SLOW,
  );
});

describe('a port that cannot be bound', () => {
  it(
    'stops start-up naming the variables, with no one-time key shown and lost; the next start shows it',
    async () => {
      const busy = createServer();
      await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
      const port = (busy.address() as AddressInfo).port;
      try {
        const env = { CANVASS_DATA_DIR: path.join(tmp, 'busy'), HOST: '127.0.0.1' };
        const [api, metrics] = await Promise.all([
          canvass(['serve'], { ...env, PORT: String(port) }),
          canvass(['worker'], { CANVASS_DATA_DIR: path.join(tmp, 'busy-worker'), CANVASS_METRICS_PORT: String(port) }),
        ]);
        expect(api.code, api.stdout + api.stderr).not.toBe(0);
        expect(api.stderr).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(HOST, PORT\\).*EADDRINUSE`));
        expect(api.stdout).not.toMatch(/cvk_/);
        expect(metrics.code, metrics.stdout + metrics.stderr).not.toBe(0);
        expect(metrics.stderr).toMatch(/\(HOST, CANVASS_METRICS_PORT\).*EADDRINUSE/);
        const { proc } = await startServe(env);
        const [, key] = await proc.waitForOutput(/Owner API key, shown only this once: (cvk_[0-9A-Za-z]+)/);
        expect(key).toMatch(KEY);
        await stopServe(proc);
      } finally {
        busy.close();
      }
    },
    SLOW,
  );
});

describe('a signal while the process starts', () => {
  it(
    'a second one stops a start that hangs (a database that never answers) at once, saying so',
    async () => {
      // Accepts the connection and never answers: the worker's start waits on it.
      const silent = createServer(() => {});
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const connected = new Promise<void>((r) => silent.once('connection', () => r()));
      const port = (silent.address() as AddressInfo).port;
      try {
        const proc = spawnCanvass('canvass worker', ['worker'], {
          DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/x`,
          LOG_LEVEL: 'warn',
        });
        live.add(proc);
        await connected;
        // The first is noted (the process would stop once started); the second stops it.
        proc.child.kill('SIGTERM');
        await proc.waitForOutput(/SIGTERM while starting: stopping once started/);
        proc.child.kill('SIGTERM');
        const { code } = await proc.exited;
        live.delete(proc);
        expect(code).toBe(1);
        expect(proc.output()).toMatch(/SIGTERM again while starting; stopping at once/);
      } finally {
        silent.close();
      }
    },
    SLOW,
  );
});

describe('canvass migrate (embedded)', () => {
  it(
    'applies every migration to a new data directory',
    async () => {
      // A directory that is up to date gets nothing: the embedded scenario below.
      const env = { CANVASS_DATA_DIR: path.join(tmp, 'migrate') };
      expect(succeeded(await canvass(['migrate', '--json'], env))).toEqual({ applied: migrationNames() });
    },
    SLOW,
  );
});

describe('a lock whose holder is no Canvass server', () => {
  it(
    "an operator command says what holds the directory and how to free it, past a killed server's socket file",
    async () => {
      const dir = path.join(tmp, 'left');
      mkdirSync(dir);
      // A lock naming a live process (a build that wrote no start time, its pid since reused),
      // and the socket file a killed server left: nothing listens on it.
      const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
      try {
        writeFileSync(path.join(dir, 'canvass.lock'), `${other.pid} earlier\n`);
        writeFileSync(path.join(dir, 'canvass.sock'), '');
        const run = await canvass(['accounts', 'create', '--name', 'N', '--owner-email', 'n@example.com', '--json'], {
          CANVASS_DATA_DIR: dir,
        });
        expect(run.code, run.stdout + run.stderr).not.toBe(0);
        expect(oneObject(run)).toEqual({
          error: expect.stringMatching(
            new RegExp(`in use by another Canvass process \\(pid ${other.pid}\\).*remove .*canvass\\.lock`),
          ),
        });
      } finally {
        other.kill('SIGKILL');
      }
    },
    SLOW,
  );
});

describe('embedded storage: serve, the directory lock and operator commands', () => {
  let env: Env;
  let server: { proc: CanvassProcess; base: string } | undefined;
  let defaultKey: string;
  let defaultAccountId: string;
  let created: { accountId: string; userId: string; apiKey: string };
  let editorKey: string;

  beforeAll(() => {
    env = { CANVASS_DATA_DIR: path.join(tmp, 'embedded') };
  });

  it(
    'serve on an empty data directory creates the Default account and prints its owner key once',
    async () => {
      server = await startServe(env);
      // Printed once the ports are held, so just after /healthz first answers.
      await server.proc.waitForOutput(/Owner API key, shown only this once: cvk_\w+\n/);
      const out = server.proc.output();
      const keys = out.match(/cvk_[0-9A-Za-z]+/g) ?? [];
      expect(keys, out).toHaveLength(1);
      defaultKey = keys[0]!;
      expect(defaultKey).toMatch(KEY);
      expect(out).toMatch(/Owner API key, shown only this once: cvk_/);
      defaultAccountId = /Default account (acc_[0-9A-Za-z]+)/.exec(out)![1]!;

      const api = apiClient(server.base, defaultKey);
      const accounts = await api('GET', '/accounts');
      expect(accounts.status).toBe(200);
      expect(accounts.json.data).toEqual([
        expect.objectContaining({ accountId: defaultAccountId, role: 'owner', plan: 'premium' }),
      ]);
    },
    SLOW,
  );

  it(
    'the printed key works: POST /poll saves a poll with every default',
    async () => {
      const api = apiClient(server!.base, defaultKey);
      const res = await api('POST', '/poll', { accountId: defaultAccountId, title: 'First poll' });
      expect(res.status).toBe(201);
      const poll = res.json.data as Record<string, unknown>;
      expect(poll).toMatchObject({ accountId: defaultAccountId, title: 'First poll', isVisible: false, slides: [] });
      expect(poll.id).toMatch(/^poll_/);
      for (const [field, value] of Object.entries(SPEC_DEFAULTS)) expect(poll[field], field).toEqual(value);
      const read = await api('GET', `/poll?pollId=${String(poll.id)}`);
      expect(read.json.data).toEqual(poll);
      expect(
        (await apiClient(server!.base, null)('POST', '/poll', { accountId: defaultAccountId, title: 'x' })).status,
      ).toBe(401);
    },
    SLOW,
  );

  it(
    'while serve runs, other processes that would open the directory stop at once and say it is in use',
    async () => {
      // Operator commands (accounts, keys, members, support) go through the server instead:
      // e2e/cli-while-serving.test.ts.
      const runs = await Promise.all([
        canvass(['migrate', '--json'], env),
        canvass(['serve'], { ...env, PORT: String(await freePort()) }),
      ]);
      for (const run of runs) {
        expect(run.code, run.stdout + run.stderr).not.toBe(0);
        expect(run.stderr).toMatch(/data directory .* is in use by another Canvass process/);
        // "At once": no waiting for the lock, and no database opened (that alone takes seconds).
        expect(run.ms).toBeLessThan(30_000);
      }
      expect(oneObject(runs[0]!)).toEqual({ error: expect.stringMatching(/in use/) });
      // The server did not notice.
      const api = apiClient(server!.base, defaultKey);
      expect((await api('GET', '/accounts')).json.data).toHaveLength(1);
      expect((await fetch(`${server!.base}/readyz`)).status).toBe(200);
    },
    SLOW,
  );

  it(
    'serve stops cleanly on SIGTERM and releases the directory',
    async () => {
      await stopServe(server!.proc);
      server = undefined;
      expect(existsSync(path.join(env.CANVASS_DATA_DIR!, 'canvass.lock'))).toBe(false);
    },
    SLOW,
  );

  it(
    'accounts create --json prints {accountId, userId, apiKey}',
    async () => {
      const r = succeeded(
        await canvass(['accounts', 'create', '--name', 'Acme', '--owner-email', 'owner@localhost', '--json'], env),
      );
      expect(Object.keys(r).sort()).toEqual(['accountId', 'apiKey', 'userId']);
      expect(r.accountId).toMatch(/^acc_[0-9A-Za-z]{22}$/);
      expect(r.userId).toMatch(/^usr_[0-9A-Za-z]{22}$/);
      expect(r.apiKey).toMatch(KEY);
      expect(r.apiKey).not.toBe(defaultKey);
      created = r as typeof created;
    },
    SLOW,
  );

  it(
    'accounts set-plan --json prints {accountId, plan}; an unknown account fails with a message',
    async () => {
      expect(
        succeeded(
          await canvass(['accounts', 'set-plan', '--account', created.accountId, '--plan', 'basic', '--json'], env),
        ),
      ).toEqual({ accountId: created.accountId, plan: 'basic' });
      const missing = await canvass(
        ['accounts', 'set-plan', '--account', 'acc_0000000000000000000000', '--plan', 'basic', '--json'],
        env,
      );
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/account not found/);
      expect(oneObject(missing)).toEqual({ error: 'account not found' });
    },
    SLOW,
  );

  it(
    'keys create --json prints {userId, apiKey, role}',
    async () => {
      const r = succeeded(
        await canvass(
          [
            'keys',
            'create',
            '--account',
            created.accountId,
            '--email',
            'Editor@Example.com',
            '--role',
            'editor',
            '--json',
          ],
          env,
        ),
      );
      expect(Object.keys(r).sort()).toEqual(['apiKey', 'role', 'userId']);
      expect(r).toMatchObject({
        userId: expect.stringMatching(/^usr_/),
        role: 'editor',
        apiKey: expect.stringMatching(KEY),
      });
      expect(r.userId).not.toBe(created.userId);
      editorKey = r.apiKey as string;
    },
    SLOW,
  );

  it(
    'keys list prints times as ISO 8601 text',
    async () => {
      succeeded(
        await canvass(
          [
            'keys',
            'create',
            '--account',
            created.accountId,
            '--email',
            'brief@example.com',
            '--role',
            'read_only',
            '--json',
          ],
          env,
        ),
      );
      const listed = succeeded(await canvass(['keys', 'list', '--account', created.accountId, '--json'], env)) as {
        data: { id: string; email: string }[];
      };
      const id = listed.data.find((k) => k.email === 'brief@example.com')!.id;
      succeeded(await canvass(['keys', 'revoke', '--key', id, '--json'], env));
      const human = await canvass(['keys', 'list', '--account', created.accountId], env);
      expect(human.code, human.stderr).toBe(0);
      const line = human.stdout.split('\n').find((l) => l.startsWith(id));
      expect(line).toMatch(/ revoked \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    },
    SLOW,
  );

  it(
    'migrate --json on a directory that is up to date applies nothing',
    async () => {
      expect(succeeded(await canvass(['migrate', '--json'], env))).toEqual({ applied: [] });
    },
    SLOW,
  );

  it(
    'a second serve prints no key; the keys made meanwhile work; the refused commands changed nothing',
    async () => {
      server = await startServe(env);
      // The admin socket opens once the Default account would have been made and shown.
      const socket = path.join(env.CANVASS_DATA_DIR!, 'canvass.sock');
      for (let i = 0; !existsSync(socket); i++) {
        expect(i, 'the admin socket within 30 s').toBeLessThan(3_000);
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(server.proc.output()).not.toMatch(/cvk_|Default account/);

      const accounts = await apiClient(server.base, defaultKey)('GET', '/accounts');
      expect(accounts.status).toBe(200);
      const mine = accounts.json.data as { accountId: string; role: string; plan: string }[];
      // Default + Acme (same owner email).
      expect(mine.map((a) => a.accountId).sort()).toEqual([defaultAccountId, created.accountId].sort());
      expect(mine.find((a) => a.accountId === created.accountId)).toMatchObject({ role: 'owner', plan: 'basic' });

      const editor = await apiClient(server.base, editorKey)('GET', '/accounts');
      expect(editor.json.data).toEqual([
        expect.objectContaining({ accountId: created.accountId, role: 'editor', plan: 'basic' }),
      ]);
      // set-plan took effect: basic is below premium.
      const denied = await apiClient(server.base, created.apiKey)('GET', `/polls?accountId=${created.accountId}`);
      expect(denied.status).toBe(403);
      expect(denied.json.code).toBe('plan_required');

      await stopServe(server.proc);
      server = undefined;
    },
    SLOW,
  );
});

describe.skipIf(!onPostgres)('PostgreSQL (DATABASE_URL)', () => {
  let made: Awaited<ReturnType<typeof createPgDatabase>> | undefined;
  let env: Env;

  beforeAll(async () => {
    made = await createPgDatabase();
    // The data directory must not be used: point it somewhere that would show up if it were.
    env = { DATABASE_URL: made.url, CANVASS_DATA_DIR: path.join(tmp, 'pg-unused') };
  });
  afterAll(async () => {
    await Promise.all([...live].map((p) => p.stop(5_000)));
    await made?.drop();
  });

  it(
    'serve refuses an un-migrated database and says to run `canvass migrate`',
    async () => {
      const run = await canvass(['serve'], { ...env, PORT: String(await freePort()) });
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/canvass migrate/);
      expect(run.stderr).toMatch(/not up to date/);
    },
    SLOW,
  );

  it(
    'migrate --json applies every migration, then nothing; serve then starts without seeding',
    async () => {
      expect(succeeded(await canvass(['migrate', '--json'], env))).toEqual({ applied: migrationNames() });
      expect(succeeded(await canvass(['migrate', '--json'], env))).toEqual({ applied: [] });

      const server = await startServe(env);
      expect(server.proc.output()).not.toMatch(/cvk_|Default account/);
      expect((await fetch(`${server.base}/readyz`)).status).toBe(200);

      // Operator commands work beside a running server (no directory lock with PostgreSQL).
      const acct = succeeded(
        await canvass(['accounts', 'create', '--name', 'PG', '--owner-email', 'pg@example.com', '--json'], env),
      );
      const api = apiClient(server.base, acct.apiKey as string);
      const res = await api('POST', '/poll', { accountId: acct.accountId, title: 'On PostgreSQL' });
      expect(res.status).toBe(201);
      expect((res.json.data as Record<string, unknown>).settings).toEqual(SPEC_DEFAULTS.settings);
      const accounts = await api('GET', '/accounts');
      expect(accounts.json.data).toEqual([
        expect.objectContaining({ accountId: acct.accountId, role: 'owner', plan: 'premium' }),
      ]);

      await stopServe(server.proc);
      expect(existsSync(env.CANVASS_DATA_DIR!)).toBe(false);
    },
    SLOW,
  );
});
