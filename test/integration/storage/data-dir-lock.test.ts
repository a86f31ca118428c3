import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
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
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The pid of a process that has exited: a lock naming it is a dead process's. */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

describe('the embedded data directory lock', () => {
  it('is written with its owner in it, refuses a live owner, and takes over a dead one', () => {
    const dir = tmp();
    const release = lockDataDir(dir);
    expect(readFileSync(path.join(dir, 'canvass.lock'), 'utf8')).toMatch(
      new RegExp(`^${process.pid} [0-9a-f-]{36}\\n$`),
    );
    release();
    expect(existsSync(path.join(dir, 'canvass.lock'))).toBe(false);

    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    try {
      writeFileSync(path.join(dir, 'canvass.lock'), `${live.pid} someone\n`);
      expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    } finally {
      live.kill('SIGKILL');
    }
    writeFileSync(path.join(dir, 'canvass.lock'), `${deadPid()} gone\n`);
    lockDataDir(dir)();
  });

  it("leaves a dead process's lock to a takeover under way elsewhere, and clears a takeover its process left", () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'canvass.lock'), `${deadPid()} gone\n`);
    writeFileSync(path.join(dir, 'canvass.lock.takeover'), '');
    expect(() => lockDataDir(dir)).toThrow(/could not lock/);
    expect(readFileSync(path.join(dir, 'canvass.lock'), 'utf8')).toMatch(/ gone\n$/);
    // Left by a process that died during its takeover, long ago.
    const old = new Date(Date.now() - 60_000);
    utimesSync(path.join(dir, 'canvass.lock.takeover'), old, old);
    lockDataDir(dir)();
  });

  it('on release, leaves a lock that is no longer its own', () => {
    const dir = tmp();
    const release = lockDataDir(dir);
    writeFileSync(path.join(dir, 'canvass.lock'), '12345 another\n');
    release();
    expect(readFileSync(path.join(dir, 'canvass.lock'), 'utf8')).toBe('12345 another\n');
  });

  it("goes to exactly one of several processes that start at once on a dead process's lock", async () => {
    const dir = tmp();
    writeFileSync(path.join(dir, 'canvass.lock'), `${deadPid()} gone\n`);
    const go = path.join(dir, 'go');
    const done = path.join(dir, 'done');
    const module = path.resolve('src/infra/db/data-dir-lock.ts');
    // Each waits for the go file, tries, says how it went, and holds a lock it got until told.
    const script = `
      import { existsSync } from 'node:fs';
      const { lockDataDir } = await import(${JSON.stringify(module)});
      console.log('ready');
      while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 1));
      try {
        const release = lockDataDir(${JSON.stringify(dir)});
        console.log('locked');
        while (!existsSync(${JSON.stringify(done)})) await new Promise((r) => setTimeout(r, 5));
        release();
      } catch (e) { console.log(e.name === 'DataDirLockedError' ? 'refused' : 'error ' + e.message); }`;
    const children = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]),
    );
    const outputs = children.map((child) => {
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
