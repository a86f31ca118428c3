import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTestCa } from './tls.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Runs once, in vitest's main process, before the test workers start: what it puts in
 * process.env they inherit. NODE_EXTRA_CA_CERTS is read only at process start, so this is
 * the one place a test CA can be made trusted for in-process senders and spawned servers alike.
 */
export default async function setup(): Promise<() => void> {
  freshBuild();
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
 * its output in spite of a type error, as tsx runs in spite of one).
 */
function build(args: string[], output: string, builtAt: number, cwd: string): void {
  try {
    execFileSync(process.execPath, args, { cwd, stdio: 'inherit' });
  } catch {
    if (!existsSync(output) || statSync(output).mtimeMs <= builtAt) throw new Error(`${args.join(' ')} failed`);
  }
}

/** A build the tests need: in `dir`, `output` made from `inputs` by running `args` with node. */
type Build = { how: string; dir: string; output: string; inputs: string[]; args: () => string[]; after?: () => void };

/**
 * Spawned `canvass` processes run dist/ (processes.ts), which imports @canvass/verify from its
 * own dist/, and the dashboard tests load web/dist: each is rebuilt here, as `npm run build`
 * builds it, when what it is built from (or the lockfile: an upgraded dependency) is newer.
 */
function freshBuild(): void {
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
  if (builds.every((b) => stale(b) === undefined)) return;
  withBuildLock(() => {
    for (const b of builds) {
      // Looked at again under the lock: a run that held it before may have built it.
      const since = stale(b);
      if (since === undefined) continue;
      console.log(`${path.join(b.dir, b.output)} is older than its sources: building it (${b.how})`);
      build(b.args(), path.join(ROOT, b.dir, b.output), since, path.join(ROOT, b.dir));
      b.after?.();
    }
  });
}

/**
 * One build at a time in a checkout: two test runs started together would otherwise build at
 * once, and `vite build` empties web/dist while the other run's dashboard test reads it. A lock
 * left by a run that died (its process gone) is taken over.
 */
function withBuildLock(run: () => void): void {
  const lock = path.join(ROOT, 'test-artifacts', 'build.lock');
  mkdirSync(path.dirname(lock), { recursive: true });
  let told = false;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder: number;
    let since: number;
    try {
      holder = Number(readFileSync(lock, 'utf8').trim() || NaN);
      since = statSync(lock).mtimeMs;
    } catch {
      continue; // released meanwhile
    }
    // A pid not yet written is a run between creating the lock and writing it, or one that died there.
    const gone = Number.isInteger(holder) && holder > 0 ? !alive(holder) : since < Date.now() - 60_000;
    if (gone) {
      rmSync(lock, { force: true });
      continue;
    }
    if (!told) console.log(`another test run (pid ${holder}) is building: waiting for it`);
    told = true;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
  try {
    run();
  } finally {
    rmSync(lock, { force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
