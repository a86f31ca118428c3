import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
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
/** Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot. */
const startTime = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
};
const lockFile = (dir: string) => path.join(dir, 'canvass.lock');
const module = path.resolve('src/infra/db/data-dir-lock.ts');
const linux = process.platform === 'linux';
/** A lock file's content: pid, token, and the holder's start time where known. */
const ns = (kind: string) => {
  try {
    return readlinkSync(`/proc/self/ns/${kind}`).replace(/[[\]]/g, '\\$&');
  } catch {
    return '-';
  }
};
const OWN = new RegExp(
  `^${process.pid} [0-9a-f-]{36} ${linux ? startTime(process.pid) : '-'} ${ns('pid')} ${ns('time')}\\n$`,
);

/** Runs `script` (an ES module) in a child process; resolves with the child once it prints `ready`. */
async function child(script: string): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
  children.push(proc);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.on('data', (b: Buffer) => (out += b.toString()).includes('ready') && resolve());
    proc.on('exit', () => reject(new Error(`the child exited: ${out}`)));
  });
  return proc;
}
const killed = async (proc: ChildProcess) => {
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  proc.kill('SIGKILL');
  await exited;
};

describe.each(
  [
    { guard: 'a socket', kernel: true },
    { guard: 'a file', kernel: false },
  ].filter((c) => linux || !c.kernel),
)('the data directory lock, its takeovers guarded by $guard', ({ kernel }) => {
  const lock = (dir: string) => lockDataDir(dir, { kernel });

  it('is written with its owner in it, refuses a live owner, and takes over a dead one', async () => {
    const dir = tmp();
    const release = await lock(dir);
    expect(readFileSync(lockFile(dir), 'utf8')).toMatch(OWN);
    await expect(lock(dir)).rejects.toThrow(DataDirLockedError);
    await release();
    expect(existsSync(lockFile(dir))).toBe(false);

    const live = unrelated();
    writeFileSync(lockFile(dir), `${live.pid} someone\n`);
    await expect(lock(dir)).rejects.toMatchObject({ name: 'DataDirLockedError', pid: live.pid });
    writeFileSync(lockFile(dir), `${deadPid()} gone\n`);
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
    const outputs = racers.map((proc) => {
      let out = '';
      proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
      const ready = new Promise<void>((resolve) => proc.stdout.on('data', () => out.includes('ready') && resolve()));
      const tried = new Promise<void>((resolve) =>
        proc.stdout.on('data', () => /locked|refused|error/.test(out) && resolve()),
      );
      const exited = new Promise<string>((resolve) => proc.on('exit', () => resolve(out)));
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

describe.runIf(linux)('the data directory lock where /proc tells when a process started', () => {
  it('takes over a lock whose pid a process started since carries', async () => {
    const dir = tmp();
    const live = { pid: unrelated().pid! };
    writeFileSync(lockFile(dir), `${live.pid} gone ${Number(startTime(live.pid)) - 1}\n`);
    const release = await lockDataDir(dir);
    expect(readFileSync(lockFile(dir), 'utf8')).toMatch(OWN);
    await release();
    // The same pid with its own start time is that process's lock.
    writeFileSync(lockFile(dir), `${live.pid} mine ${startTime(live.pid)}\n`);
    await expect(lockDataDir(dir)).rejects.toMatchObject({ pid: live.pid });
  });

  it("takes over a lock naming this process's pid only when an earlier process wrote it", async () => {
    const dir = tmp();
    // A container restarted after a kill runs as the same pid as the process that left the lock.
    for (const left of [`${process.pid} earlier ${Number(startTime(process.pid)) - 1}\n`, `${process.pid} earlier\n`]) {
      writeFileSync(lockFile(dir), left);
      const release = await lockDataDir(dir);
      expect(readFileSync(lockFile(dir), 'utf8')).toMatch(OWN);
      // Locked again by the same process, the lock is its own, and refused.
      await expect(lockDataDir(dir)).rejects.toMatchObject({ pid: process.pid });
      await release();
    }
  });

  it('takes over the lock of a holder killed but not yet reaped by its parent', async () => {
    const dir = tmp();
    // The holder's parent execs into sleep, which never reaps it: killed, it stays a zombie.
    const holderScript = `
      const { lockDataDir } = await import(${JSON.stringify(module)});
      await lockDataDir(${JSON.stringify(dir)});
      console.log('locked');
      setInterval(() => {}, 1000);`;
    const parent = spawn(
      'sh',
      [
        '-c',
        `${JSON.stringify(process.execPath)} --import tsx --input-type=module -e "$HOLDER" & echo $!; exec sleep 60`,
      ],
      { env: { ...process.env, HOLDER: holderScript } },
    );
    children.push(parent);
    let out = '';
    parent.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await new Promise<void>((resolve) => parent.stdout.on('data', () => out.includes('locked') && resolve()));
    const pid = Number(out.trim().split('\n')[0]);
    try {
      await expect(lockDataDir(dir)).rejects.toMatchObject({ pid });
    } finally {
      process.kill(pid, 'SIGKILL');
    }
    const state = () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0];
    await expect.poll(state, { timeout: 10_000 }).toBe('Z');
    await (
      await lockDataDir(dir)
    )();
  }, 30_000);

  it('judges a holder in another pid namespace by its pid being alive here, and nothing else', async () => {
    const dir = tmp();
    const other = 'pid:[1]';
    // Seen from the host, a container's holder: its start time means nothing here.
    const live = unrelated().pid!;
    writeFileSync(lockFile(dir), `${live} container 1 ${other} -\n`);
    await expect(lockDataDir(dir)).rejects.toMatchObject({ pid: live });
    writeFileSync(lockFile(dir), `${deadPid()} container 1 ${other} -\n`);
    await (
      await lockDataDir(dir)
    )();
    // A container restarted after a kill runs in a new pid namespace, as the same pid.
    writeFileSync(lockFile(dir), `${process.pid} earlier 1 ${other} -\n`);
    await (
      await lockDataDir(dir)
    )();
  });
});

describe.runIf(linux)('the data directory lock, its takeovers guarded by a socket', () => {
  it('is not held up by a process that died during its takeover', async () => {
    const dir = tmp();
    writeFileSync(lockFile(dir), `${deadPid()} gone\n`);
    // A process holds the takeover socket and file (as one in the middle of a takeover does), then dies.
    const taker = await child(`
      import net from 'node:net';
      import { readlinkSync, statSync, writeFileSync } from 'node:fs';
      const { dev, ino } = statSync(${JSON.stringify(dir)}, { bigint: true });
      net.createServer().listen({ path: ('\\0canvass-takeover-' + dev + '-' + ino).padEnd(108, '\\0'), exclusive: true }, () => {
        writeFileSync(${JSON.stringify(`${lockFile(dir)}.takeover`)}, 'socket ' + readlinkSync('/proc/self/ns/net') + '\\n');
        console.log('ready');
      });`);
    // While it lives, the dead process's lock is left to its takeover.
    await expect(lockDataDir(dir)).rejects.toThrow(/could not lock .*another process has been taking over its lock/);
    expect(readFileSync(lockFile(dir), 'utf8')).toMatch(/ gone\n$/);
    // Killed, it holds up nothing (its takeover file is fresh): the next process takes over at once.
    await killed(taker);
    const release = await lockDataDir(dir);
    expect(readFileSync(lockFile(dir), 'utf8')).toMatch(OWN);
    expect(existsSync(`${lockFile(dir)}.takeover`)).toBe(false);
    await release();
  }, 30_000);

  it('respects a takeover under way by a process that guards it with a file, or with the socket of another network', async () => {
    const dir = tmp();
    writeFileSync(lockFile(dir), `${deadPid()} gone\n`);
    writeFileSync(`${lockFile(dir)}.takeover`, 'socket net:[1]\n');
    await expect(lockDataDir(dir)).rejects.toThrow(/could not lock/);
    writeFileSync(`${lockFile(dir)}.takeover`, '');
    await expect(lockDataDir(dir)).rejects.toThrow(/could not lock/);
    // One left long ago by a process that died during it is not obeyed.
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${lockFile(dir)}.takeover`, old, old);
    await (
      await lockDataDir(dir)
    )();
  });
});

describe('the data directory lock, its takeovers guarded by a file', () => {
  it("leaves a dead process's lock to a takeover under way elsewhere, and clears a takeover its process left", async () => {
    const dir = tmp();
    writeFileSync(lockFile(dir), `${deadPid()} gone\n`);
    writeFileSync(`${lockFile(dir)}.takeover`, '');
    await expect(lockDataDir(dir, { kernel: false })).rejects.toThrow(/could not lock/);
    expect(readFileSync(lockFile(dir), 'utf8')).toMatch(/ gone\n$/);
    // Left by a process that died during its takeover, long ago.
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${lockFile(dir)}.takeover`, old, old);
    await (
      await lockDataDir(dir, { kernel: false })
    )();
  });
});
