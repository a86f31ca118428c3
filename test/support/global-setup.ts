import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import lockfile from 'proper-lockfile';
import { makeTestCa } from './tls.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Runs once, in vitest's main process, before the test workers start: what it puts in
 * process.env they inherit. NODE_EXTRA_CA_CERTS is read only at process start, so this is
 * the one place a test CA can be made trusted for in-process senders and spawned servers alike.
 */
export default async function setup(): Promise<() => void> {
  await freshBuild();
  const dir = path.join(os.tmpdir(), `canvass-test-ca-${process.pid}`);
  const { caFile } = makeTestCa(dir);
  process.env.NODE_EXTRA_CA_CERTS = caFile;
  process.env.CANVASS_TEST_TLS_DIR = dir;
  // Made by the first test that needs it (pglite-template.ts), removed after the run.
  const template = path.join(os.tmpdir(), `canvass-test-pglite-${process.pid}`);
  process.env.CANVASS_TEST_PGLITE_TEMPLATE = template;
  dropStaleTemplates();
  await dropStaleDatabases();
  return () => rmSync(template, { recursive: true, force: true });
}

/** Removes PGlite templates (40 MB each) left behind by a run that was killed, an hour on. */
function dropStaleTemplates(): void {
  const tmp = os.tmpdir();
  for (const name of readdirSync(tmp)) {
    if (!name.startsWith('canvass-test-pglite-')) continue;
    const dir = path.join(tmp, name);
    try {
      if (statSync(dir).mtimeMs < Date.now() - 3_600_000) rmSync(dir, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
  }
}

/** Removes databases left behind by a run that was killed before its files could drop their own. */
async function dropStaleDatabases(): Promise<void> {
  const url = process.env.CANVASS_TEST_PG_URL;
  if (!url) return;
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const old = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'canvass_test_%' AND datname < $1",
      [`canvass_test_${Date.now() - 3_600_000}`],
    );
    for (const { datname } of old.rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** The newest modification time of `dir` (a file removed from it changes it) or of anything under it. */
function newestUnder(dir: string): number {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(at) : statSync(at).mtimeMs);
  }
  return newest;
}

/** The newest modification time of any of `paths` (files, or directories with what they hold). */
function newestOf(paths: string[]): number {
  return Math.max(...paths.map((p) => (statSync(p).isDirectory() ? newestUnder(p) : statSync(p).mtimeMs)));
}

/** When `output` is older than the newest of `inputs` (or missing), what it was modified at; else undefined. */
function staleSince(output: string, inputs: string[]): number | undefined {
  const builtAt = existsSync(output) ? statSync(output).mtimeMs : 0;
  return newestOf(inputs) > builtAt ? builtAt : undefined;
}

/**
 * Runs `args` with node; a failure is tolerated only when `output` was written anew (tsc writes
 * its output in spite of a type error, as tsx runs in spite of one). Asynchronous, so that the
 * build lock's holder keeps refreshing it while the build runs.
 */
async function build(args: string[], output: string, builtAt: number, cwd: string): Promise<void> {
  const code = await new Promise<number | null>((resolve, reject) =>
    spawn(process.execPath, args, { cwd, stdio: 'inherit' }).on('error', reject).on('exit', resolve),
  );
  if (code !== 0 && (!existsSync(output) || statSync(output).mtimeMs <= builtAt))
    throw new Error(`${args.join(' ')} failed`);
}

/** A build the tests need: in `dir`, `output` made from `inputs` by running `args` with node. */
type Build = { how: string; dir: string; output: string; inputs: string[]; args: () => string[]; after?: () => void };

/**
 * Spawned `canvass` processes run dist/ (processes.ts), which imports @canvass/verify from its
 * own dist/, and the dashboard tests load web/dist: each is rebuilt here, as `npm run build`
 * builds it, when what it is built from (or the lockfile: an upgraded dependency) is newer.
 */
async function freshBuild(): Promise<void> {
  const require = createRequire(import.meta.url);
  const builds: Build[] = [
    {
      how: 'its build script',
      dir: 'packages/verify',
      output: 'dist/esm/index.js',
      inputs: ['src', 'scripts', 'tsconfig.json', 'tsconfig.cjs.json'],
      args: () => ['scripts/build.mjs'],
    },
    {
      how: 'tsc -p tsconfig.build.json',
      dir: '.',
      output: 'dist/cli/index.js',
      inputs: ['src', 'tsconfig.json', 'tsconfig.build.json'],
      args: () => [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      // Copied afresh, so that a migration removed from src/ is gone from dist/ too.
      after: () => {
        rmSync(path.join(ROOT, 'dist/infra/db/migrations'), { recursive: true, force: true });
        cpSync(path.join(ROOT, 'src/infra/db/migrations'), path.join(ROOT, 'dist/infra/db/migrations'), {
          recursive: true,
        });
      },
    },
    {
      how: 'vite build web',
      dir: '.',
      output: 'web/dist/index.html',
      inputs: ['web/src', 'web/public', 'web/index.html', 'web/vite.config.ts', 'web/tsconfig.json'],
      args: () => [path.join(path.dirname(require.resolve('vite/package.json')), 'bin/vite.js'), 'build', 'web'],
    },
  ];
  const stale = (b: Build) => {
    const dir = path.join(ROOT, b.dir);
    return staleSince(path.join(dir, b.output), [
      ...b.inputs.map((p) => path.join(dir, p)),
      path.join(ROOT, 'package-lock.json'),
    ]);
  };
  // Under the lock even when all is fresh: a run that holds it may be writing an output now.
  await withBuildLock(async () => {
    for (const b of builds) {
      const since = stale(b);
      if (since === undefined) continue;
      console.log(`${path.join(b.dir, b.output)} is older than its sources: building it (${b.how})`);
      await build(b.args(), path.join(ROOT, b.dir, b.output), since, path.join(ROOT, b.dir));
      b.after?.();
    }
  });
}

/**
 * One run at a time looks at the builds and makes them: two test runs started together would
 * otherwise build at once, or one would start its tests on an output the other is still writing.
 * (A run started while another's tests are under way may still rebuild under them.) The lock
 * (proper-lockfile: a directory, its time refreshed while held) is taken over once it has gone
 * 30 s without a refresh, as a run that died leaves it.
 */
async function withBuildLock(run: () => Promise<void>): Promise<void> {
  const target = path.join(ROOT, 'test-artifacts', 'build');
  mkdirSync(path.dirname(target), { recursive: true });
  const options = {
    realpath: false,
    stale: 30_000,
    update: 5_000,
    onCompromised: (err: Error) => console.warn(`the test build lock was lost: ${err.message}`),
  };
  const release = await lockfile.lock(target, options).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ELOCKED') throw err;
    console.log('another test run holds the build lock: waiting for it');
    return lockfile.lock(target, { ...options, retries: { retries: 1_200, minTimeout: 100, maxTimeout: 500 } });
  });
  try {
    await run();
  } finally {
    // A lock lost meanwhile (onCompromised) is another run's now: nothing to release.
    await release().catch(() => undefined);
  }
}
