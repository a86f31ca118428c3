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

/**
 * Spawned `canvass` processes run dist/ (processes.ts), so it must hold the code under test:
 * rebuilt here (tsc, and the migrations copied, as `npm run build` does) when src/ or the
 * tsconfig is newer than it. A type error does not stop the tests, as it does not stop tsx; a build that
 * wrote nothing does.
 */
function freshBuild(): void {
  const built = path.join(ROOT, 'dist/cli/index.js');
  const builtAt = existsSync(built) ? statSync(built).mtimeMs : 0;
  const sources = [
    newestUnder(path.join(ROOT, 'src')),
    ...['tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(path.join(ROOT, f)).mtimeMs),
  ];
  if (Math.max(...sources) <= builtAt) return;
  console.log('dist/ is older than src/: building it for the spawned processes (tsc -p tsconfig.build.json)');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  } catch {
    if (!existsSync(built) || statSync(built).mtimeMs <= builtAt) throw new Error('tsc did not build dist/');
  }
  // Copied afresh, so that a migration removed from src/ is gone from dist/ too.
  rmSync(path.join(ROOT, 'dist/infra/db/migrations'), { recursive: true, force: true });
  cpSync(path.join(ROOT, 'src/infra/db/migrations'), path.join(ROOT, 'dist/infra/db/migrations'), { recursive: true });
}
