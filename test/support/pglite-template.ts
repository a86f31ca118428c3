import { appendFileSync, cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/infra/db/database.js';

/**
 * Embedded storage for tests starts from one migrated PGlite data directory, made once per run
 * and copied: PGlite runs initdb in WebAssembly on every new database, about 3 s here, where a
 * copy and an open take about 1.3 s. Its buffer pool is 16 MB rather than initdb's 128 MB, which
 * PGlite clears on every start: that halves an open again, and a test's tables are far smaller.
 * The global setup names the directory (CANVASS_TEST_PGLITE_TEMPLATE) and removes it after the run.
 */
let made: Promise<string> | undefined;

function templateDir(): Promise<string> {
  return (made ??= (async () => {
    const dir =
      process.env.CANVASS_TEST_PGLITE_TEMPLATE ?? path.join(os.tmpdir(), `canvass-test-pglite-${process.pid}`);
    if (existsSync(dir)) return dir;
    // Made aside and renamed into place, so a test file running at the same time never copies
    // a half-made one; of two made at once, the second is thrown away.
    const making = mkdtempSync(`${dir}-making-`);
    try {
      const database = await openDatabase({ dataDir: making, schema: 'apply' });
      await database.close();
      appendFileSync(path.join(making, 'pgdata', 'postgresql.auto.conf'), 'shared_buffers = 16MB\n');
      renameSync(making, dir);
    } catch (e) {
      rmSync(making, { recursive: true, force: true });
      if (!existsSync(dir)) throw e;
    }
    return dir;
  })().catch((e: unknown) => {
    made = undefined;
    throw e;
  }));
}

/** A new temporary data directory holding a migrated, empty embedded database. */
export async function seededDataDir(name: string): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `canvass-${name}-`));
  try {
    cpSync(path.join(await templateDir(), 'pgdata'), path.join(dir, 'pgdata'), { recursive: true });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return dir;
}
