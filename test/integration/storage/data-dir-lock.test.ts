import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from '../../../src/infra/db/data-dir-lock.js';

/**
 * The embedded data directory's lock (src/infra/db/data-dir-lock.ts), on the real file system,
 * with real processes racing for it.
 */

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'canvass-lock-'));
  dirs.push(d);
  return d;
};
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The pid of a process that has exited: a lock naming it is a dead process's. */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;
/** A live process that has nothing to do with Canvass, as a reused pid would be. */
const unrelated = () => {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
  children.push(child);
  return child;
};
const lockFile = (dir: string) => path.join(dir, 'canvass.lock');
const module = path.resolve('src/infra/db/data-dir-lock.ts');

/** A process that locks `dir` and holds it until killed; resolves once it holds the lock. */
async function holder(dir: string, kernel = true): Promise<ChildProcess> {
  const script = `
    const { lockDataDir } = await import(${JSON.stringify(module)});
    await lockDataDir(${JSON.stringify(dir)}, { kernel: ${kernel} });
    console.log('locked');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
  children.push(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()).includes('locked') && resolve());
    child.on('exit', () => reject(new Error(`the holder exited: ${out}`)));
  });
  return child;
}

const linux = process.platform === 'linux';
/** A lock file's content: pid, token, and the holder's start time where known. */
const OWN = new RegExp(`^${process.pid} [0-9a-f-]{36}( \\d+)?\\n$`);

describe.runIf(linux)('the data directory lock held in the kernel', () => {
  it('names its owner, and refuses a second holder by whatever path it reaches the directory', async () => {
    const dir = tmp();
    const link = path.join(tmp(), 'link');
    symlinkSync(dir, link);
    const release = await lockDataDir(dir);
    expect(readFileSync(lockFile(dir), 'utf8')).toMatch(OWN);
    await expect(lockDataDir(link)).rejects.toMatchObject({ name: 'DataDirLockedError', pid: process.pid });
    await release();
    expect(existsSync(lockFile(dir))).toBe(false);
    await (
      await lockDataDir(link)
    )();
  });

  it('is free the moment its holder is killed, and a pid reused since does not hold it', async () => {
    const dir = tmp();
    const child = await holder(dir);
    await expect(lockDataDir(dir)).rejects.toMatchObject({ pid: child.pid });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // The killed holder's file names a pid that a new, unrelated process carries by now: alive,
    // but started at another time than the file says.
    writeFileSync(lockFile(dir), `${unrelated().pid} gone 1\n`);
    const release = await lockDataDir(dir);
    expect(readFileSync(lockFile(dir), 'utf8')).toMatch(OWN);
    await release();
  }, 30_000);

  it('is refused while a process that locks by the file alone holds the directory', async () => {
    const dir = tmp();
    const child = await holder(dir, false);
    await expect(lockDataDir(dir)).rejects.toMatchObject({ pid: child.pid });
    // A file without a start time, as a build before start times wrote it, is taken at its pid's word.
    const live = unrelated();
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('exit', resolve));
    writeFileSync(lockFile(dir), `${live.pid} older\n`);
    await expect(lockDataDir(dir)).rejects.toMatchObject({ pid: live.pid });
    expect(readFileSync(lockFile(dir), 'utf8')).toBe(`${live.pid} older\n`);
  }, 30_000);

  it('refuses a second cluster worker by its socket, whatever the lock file says', async () => {
    const dir = tmp();
    // One worker locks the directory; its lock file is then overwritten with a dead pid; then a
    // second worker tries. A listen in a cluster worker is otherwise handed to the primary, which
    // shares one socket among all the workers that ask for the name.
    const script = `
      import cluster from 'node:cluster';
      import { writeFileSync } from 'node:fs';
      if (cluster.isPrimary) {
        const results = [];
        const fork = () => cluster.fork().on('message', (m) => {
          results.push(m);
          if (results.length === 1) {
            writeFileSync(${JSON.stringify(lockFile(dir))}, '${deadPid()} gone\\n');
            fork();
          } else {
            console.log(results.join(','));
            process.exit(0);
          }
        });
        fork();
      } else {
        const { lockDataDir } = await import(${JSON.stringify(module)});
        try {
          await lockDataDir(${JSON.stringify(dir)});
          process.send('locked');
        } catch (e) { process.send(e.name === 'DataDirLockedError' ? 'refused' : 'error ' + e.message); }
        setInterval(() => {}, 1000);
      }`;
    const file = path.join(tmp(), 'cluster.mjs');
    writeFileSync(file, script);
    const primary = spawn(process.execPath, ['--import', 'tsx', file]);
    children.push(primary);
    let out = '';
    primary.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await new Promise((resolve) => primary.on('exit', resolve));
    expect(out.trim()).toBe('locked,refused');
  }, 30_000);

  it("keeps its name's key readable by the directory's owner only", async () => {
    const dir = tmp();
    await (
      await lockDataDir(dir)
    )();
    expect(statSync(path.join(dir, 'canvass.lock.key')).mode & 0o077).toBe(0);
  });

  it('ignores a takeover file left by the lock file alone', async () => {
    const dir = tmp();
    writeFileSync(lockFile(dir), `${deadPid()} gone\n`);
    writeFileSync(`${lockFile(dir)}.takeover`, '');
    await (
      await lockDataDir(dir)
    )();
  });
});

describe('the data directory lock held by its file alone', () => {
  const lock = (dir: string) => lockDataDir(dir, { kernel: false });

  it('is written with its owner in it, refuses a live owner, and takes over a dead one', async () => {
    const dir = tmp();
    const release = await lock(dir);
    expect(readFileSync(lockFile(dir), 'utf8')).toMatch(OWN);
    await release();
    expect(existsSync(lockFile(dir))).toBe(false);

    const live = unrelated();
    writeFileSync(lockFile(dir), `${live.pid} someone\n`);
    await expect(lock(dir)).rejects.toThrow(DataDirLockedError);
    writeFileSync(lockFile(dir), `${deadPid()} gone\n`);
    await (
      await lock(dir)
    )();
  });

  it("leaves a dead process's lock to a takeover under way elsewhere, and clears a takeover its process left", async () => {
    const dir = tmp();
    writeFileSync(lockFile(dir), `${deadPid()} gone\n`);
    writeFileSync(`${lockFile(dir)}.takeover`, '');
    await expect(lock(dir)).rejects.toThrow(/could not lock/);
    expect(readFileSync(lockFile(dir), 'utf8')).toMatch(/ gone\n$/);
    // Left by a process that died during its takeover, long ago.
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${lockFile(dir)}.takeover`, old, old);
    await (
      await lock(dir)
    )();
  });

  it('on release, leaves a lock that is no longer its own', async () => {
    const dir = tmp();
    const release = await lock(dir);
    writeFileSync(lockFile(dir), '12345 another\n');
    await release();
    expect(readFileSync(lockFile(dir), 'utf8')).toBe('12345 another\n');
  });
});

describe.each(
  [
    { held: 'in the kernel', kernel: true },
    { held: 'by its file alone', kernel: false },
  ].filter((c) => linux || !c.kernel),
)('the data directory lock held $held', ({ kernel }) => {
  it("goes to exactly one of several processes that start at once on a dead process's lock", async () => {
    const dir = tmp();
    writeFileSync(lockFile(dir), `${deadPid()} gone\n`);
    const go = path.join(dir, 'go');
    const done = path.join(dir, 'done');
    // Each waits for the go file, tries, says how it went, and holds a lock it got until told.
    const script = `
      import { existsSync } from 'node:fs';
      const { lockDataDir } = await import(${JSON.stringify(module)});
      console.log('ready');
      while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 1));
      try {
        const release = await lockDataDir(${JSON.stringify(dir)}, { kernel: ${kernel} });
        console.log('locked');
        while (!existsSync(${JSON.stringify(done)})) await new Promise((r) => setTimeout(r, 5));
        await release();
      } catch (e) { console.log(e.name === 'DataDirLockedError' ? 'refused' : 'error ' + e.message); }`;
    const racers = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]),
    );
    children.push(...racers);
    const outputs = racers.map((child) => {
      let out = '';
      child.stdout.on('data', (b: Buffer) => (out += b.toString()));
      const ready = new Promise<void>((resolve) => child.stdout.on('data', () => out.includes('ready') && resolve()));
      const tried = new Promise<void>((resolve) =>
        child.stdout.on('data', () => /locked|refused|error/.test(out) && resolve()),
      );
      const exited = new Promise<string>((resolve) => child.on('exit', () => resolve(out)));
      return { ready, tried, exited };
    });
    await Promise.all(outputs.map((o) => o.ready));
    writeFileSync(go, '');
    // The winner holds the lock until every process has tried.
    await Promise.all(outputs.map((o) => o.tried));
    writeFileSync(done, '');
    const results = (await Promise.all(outputs.map((o) => o.exited))).map((out) => out.replace('ready', '').trim());
    expect(results.filter((r) => r === 'locked')).toHaveLength(1);
    expect(results.filter((r) => r === 'refused')).toHaveLength(5);
  }, 60_000);
});
