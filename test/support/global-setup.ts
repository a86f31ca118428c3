import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync } from 'node:fs';
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
  return newestOf(inputs.map((p) => path.join(ROOT, p))) > builtAt ? builtAt : undefined;
}

/**
 * Runs `args` with node; a failure is tolerated only when `output` was written anew (tsc writes
 * its output in spite of a type error, as tsx runs in spite of one).
 */
function build(args: string[], output: string, builtAt: number, cwd = ROOT): void {
  try {
    execFileSync(process.execPath, args, { cwd, stdio: 'inherit' });
  } catch {
    if (!existsSync(output) || statSync(output).mtimeMs <= builtAt) throw new Error(`${args.join(' ')} failed`);
  }
}

/**
 * Spawned `canvass` processes run dist/ (processes.ts), which imports @canvass/verify from its
 * own dist/, and the dashboard tests load web/dist: each is rebuilt here, as `npm run build`
 * builds it, when what it is built from is newer (an upgraded dependency included).
 */
function freshBuild(): void {
  const require = createRequire(import.meta.url);
  const verify = path.join(ROOT, 'packages/verify');
  const verifyBuilt = path.join(verify, 'dist/esm/index.js');
  const verifySince = staleSince(verifyBuilt, [
    'packages/verify/src',
    'packages/verify/scripts',
    'packages/verify/tsconfig.json',
    'packages/verify/tsconfig.cjs.json',
  ]);
  if (verifySince !== undefined) {
    console.log('packages/verify/dist/ is older than its sources: building it');
    build([path.join(verify, 'scripts/build.mjs')], verifyBuilt, verifySince, verify);
  }
  const built = path.join(ROOT, 'dist/cli/index.js');
  const apiSince = staleSince(built, ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']);
  if (apiSince !== undefined) {
    console.log('dist/ is older than its sources: building it for the spawned processes (tsc -p tsconfig.build.json)');
    build([require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], built, apiSince);
    // Copied afresh, so that a migration removed from src/ is gone from dist/ too.
    rmSync(path.join(ROOT, 'dist/infra/db/migrations'), { recursive: true, force: true });
    cpSync(path.join(ROOT, 'src/infra/db/migrations'), path.join(ROOT, 'dist/infra/db/migrations'), {
      recursive: true,
    });
  }
  const page = path.join(ROOT, 'web/dist/index.html');
  const webSince = staleSince(page, [
    'web/src',
    'web/public',
    'web/index.html',
    'web/vite.config.ts',
    'web/tsconfig.json',
    'package-lock.json',
  ]);
  if (webSince !== undefined) {
    console.log('web/dist/ is older than its sources: building the dashboard (vite build web)');
    const vite = path.join(path.dirname(require.resolve('vite/package.json')), 'bin/vite.js');
    build([vite, 'build', 'web'], page, webSince);
  }
}
