import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase } from '../../src/infra/db/database.js';
import { createPgDatabase, onPostgres } from './db.js';
import { seededDataDir } from './pglite-template.js';

/** The checkout root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/**
 * Spawned `canvass` processes run the build, as it ships: the global setup rebuilds dist/ when
 * src/ is newer (global-setup.ts). Through tsx, each took about 2 s more CPU to start.
 */
export const CLI = [path.join(ROOT, 'dist/cli/index.js')];

export type Env = Record<string, string | undefined>;

/**
 * The environment a spawned canvass gets: this process's (NODE_EXTRA_CA_CERTS from the global
 * setup included) without anything that would point it at another database, plus `env`.
 */
function childEnv(env: Env): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(base))
    if (k === 'DATABASE_URL' || (k.startsWith('CANVASS_') && !k.startsWith('CANVASS_TEST_'))) delete base[k];
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete base[k];
    else base[k] = v;
  }
  return base;
}

export type CanvassProcess = {
  child: ChildProcess;
  name: string;
  /** stdout and stderr so far. */
  output(): string;
  waitForOutput(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL if it has not gone after `graceMs`. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/** A long-running `canvass …` (serve, worker). */
export function spawnCanvass(name: string, args: string[], env: Env): CanvassProcess {
  const child = spawn(process.execPath, [...CLI, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  let gone = false;
  void exited.then(() => (gone = true));
  return {
    child,
    name,
    output: () => out,
    async waitForOutput(re, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const m = re.exec(out);
        if (m) return m;
        if (gone) throw new Error(`${name} exited before printing ${re}:\n${out}`);
        if (Date.now() > end) throw new Error(`${name} did not print ${re} within ${timeoutMs} ms:\n${out}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    exited,
    async stop(graceMs = 15_000) {
      if (gone) return exited;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const r = await exited;
      clearTimeout(t);
      return r;
    },
  };
}

/** A one-shot `canvass …` command that must succeed: what it printed on stdout. */
export async function runCanvass(args: string[], env: Env): Promise<string> {
  const child = spawn(process.execPath, [...CLI, ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  if (code !== 0) throw new Error(`canvass ${args.join(' ')} exited ${code}:\n${stdout}\n${stderr}`);
  return stdout;
}

/** A one-shot `canvass … --json` command that must succeed: the JSON object it printed. */
export async function runCanvassJson<T>(args: string[], env: Env): Promise<T> {
  return JSON.parse(await runCanvass(args, env)) as T;
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Waits until GET `url` answers 200. */
export async function waitForHttp(url: string, timeoutMs = 30_000, proc?: CanvassProcess): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > end)
      throw new Error(`${url} not ready within ${timeoutMs} ms${proc ? `:\n${proc.output()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export type ApiAnswer = { status: number; json: { data?: unknown } & Record<string, unknown> };

/** A tiny JSON client for a spawned API; `key` null sends no credentials (a respondent). */
export function apiClient(base: string, key: string | null) {
  return async (method: string, p: string, body?: unknown): Promise<ApiAnswer> => {
    const res = await fetch(base + p, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? (JSON.parse(text) as { data?: unknown }) : {} };
  };
}

/** Runs `fn` over `items`, at most `concurrency` at a time. */
export async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/**
 * Storage for a test's `canvass` processes, as the suite's pass asks: a fresh migrated
 * PostgreSQL database when CANVASS_TEST_PG_URL is set, else a data directory holding a migrated,
 * empty embedded database (test/e2e/cli.test.ts starts `canvass` on empty ones).
 * Adds DATABASE_URL or CANVASS_DATA_DIR to `env`; drop() removes it again.
 */
export async function processStorage(env: Env, name: string): Promise<{ url?: string; drop(): Promise<void> }> {
  if (onPostgres) {
    const made = await createPgDatabase();
    env.DATABASE_URL = made.url;
    try {
      await (await openDatabase({ databaseUrl: made.url, dataDir: '', schema: 'apply', poolSize: 1 })).close();
    } catch (e) {
      await made.drop();
      throw e;
    }
    return { url: made.url, drop: () => made.drop() };
  }
  const dataDir = await seededDataDir(name);
  env.CANVASS_DATA_DIR = dataDir;
  return { drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

/**
 * `canvass serve` (or `args`, such as `serve --no-worker`) on `env` on a free port, ready (health
 * answers); recorded in `procs` for cleanup.
 */
export async function startServe(name: string, env: Env, procs: CanvassProcess[], args: string[] = ['serve']) {
  const port = await freePort();
  const proc = spawnCanvass(name, args, { ...env, PORT: String(port), HOST: '127.0.0.1' });
  procs.push(proc);
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/healthz`, 60_000, proc);
  return { proc, base };
}

/**
 * An account and its owner's key on the storage of `env`: the Default account the first embedded
 * `serve` printed, or (PostgreSQL, where none is seeded) one made with `canvass accounts create`.
 */
export async function ownerOf(
  firstServe: CanvassProcess,
  env: Env,
  name: string,
): Promise<{ accountId: string; key: string }> {
  if (onPostgres) {
    const made = await runCanvassJson<{ accountId: string; apiKey: string }>(
      ['accounts', 'create', '--name', name, '--owner-email', `${name.toLowerCase()}@example.com`, '--json'],
      env,
    );
    return { accountId: made.accountId, key: made.apiKey };
  }
  const m = await firstServe.waitForOutput(
    /(acc_[A-Za-z0-9]+)[^\n]*\n[^\n]*Owner API key, shown only this once: (cvk_[A-Za-z0-9]+)/,
  );
  return { accountId: m[1]!, key: m[2]! };
}
