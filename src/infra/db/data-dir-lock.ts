import { randomUUID } from 'node:crypto';
import {
  closeSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number | null,
  ) {
    super(
      `the data directory ${dir} is in use by another Canvass process${pid === null ? '' : ` (pid ${pid})`}; stop it first, or point CANVASS_DATA_DIR elsewhere`,
    );
    this.name = 'DataDirLockedError';
  }
}

/** Gives the directory back: removes the lock file if it is still this process's. */
export type Unlock = () => Promise<void>;

export type LockOptions = {
  /**
   * Hold the lock in the kernel (Linux's abstract sockets), which frees it the moment its process
   * dies, however it dies. Default: on Linux. Elsewhere the lock is the file alone.
   */
  kernel?: boolean;
};

/**
 * PGlite has one writer: a second process on the same directory would corrupt it, so a process
 * locks the data directory before it opens the database. The lock file `canvass.lock` names the
 * holder's pid, for the error a second process reports.
 */
export async function lockDataDir(dir: string, opts: LockOptions = {}): Promise<Unlock> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'canvass.lock');
  if (opts.kernel ?? process.platform === 'linux') return lockInKernel(dir, file);
  const release = lockByFile(dir, file);
  return async () => release();
}

const code = (e: unknown) => (e as NodeJS.ErrnoException).code;

/** The lock file's content, or null once it is gone. */
function readLock(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if (code(e) === 'ENOENT') return null;
    throw e;
  }
}

const pidIn = (content: string | null): number | null => {
  const pid = Number(content?.trim().split(/\s+/)[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
};

const ownContent = () => `${process.pid} ${randomUUID()}\n`;

/**
 * The directory's lock is a listening abstract socket named for the directory's device and inode
 * (so every path to it, symlinks included, names the same lock). Binding it is atomic and the
 * kernel unbinds it when the process dies, even by SIGKILL: there is no stale lock to judge, and
 * no takeover for two processes to race. Abstract sockets belong to a network namespace: two
 * containers with their own networks sharing one data directory cannot see each other's lock.
 * The embedded storage is for one host.
 */
async function lockInKernel(dir: string, file: string): Promise<Unlock> {
  const { dev, ino } = statSync(dir, { bigint: true });
  const server = net.createServer((socket) => socket.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ path: `\0canvass-data-${dev}-${ino}` }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    if (code(e) === 'EADDRINUSE') throw new DataDirLockedError(dir, await holderPid(file));
    throw e;
  }
  // A service's lock must not keep its process alive once everything else has ended.
  server.unref();
  // Whatever lock file is here was left by a process that has died: this process alone holds the
  // directory now. The file is replaced whole (written aside, renamed), never seen half-written.
  const mine = ownContent();
  const aside = `${file}.${process.pid}.${randomUUID()}`;
  try {
    writeFileSync(aside, mine, { flag: 'wx' });
    renameSync(aside, file);
  } catch (e) {
    rmSync(aside, { force: true });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw e;
  }
  let released: Promise<void> | undefined;
  return () =>
    (released ??= new Promise<void>((resolve) => {
      if (readLock(file) === mine) rmSync(file, { force: true });
      server.close(() => resolve());
    }));
}

/** The pid the holder wrote; it writes the file just after it binds, so a moment's wait may be needed. */
async function holderPid(file: string): Promise<number | null> {
  for (let i = 0; i < 20; i++) {
    const pid = pidIn(readLock(file));
    if (pid !== null) return pid;
    await sleep(10);
  }
  return null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return code(e) === 'EPERM';
  }
}

/** A takeover older than this was left by a process that died during it (one takes milliseconds). */
const TAKEOVER_STALE_MS = 10_000;

/**
 * Where there are no abstract sockets, the lock file alone is the lock; a lock left by a killed
 * process is taken over, not obeyed forever.
 * - It appears with its content (written aside, then hard-linked into place), so no process
 *   ever reads a lock that is still empty and takes it for a dead one's.
 * - A stale lock is taken over under a second file created exclusively, and only if it still
 *   holds what was read as stale: two processes starting after a kill cannot both remove the
 *   dead one's lock, the second removing the first's new one.
 * - A lock holding this process's own pid is a dead one's: a container restarted after a kill
 *   runs as the same pid.
 * What it cannot rule out, and the kernel's lock does: a pid reused by an unrelated process
 * keeps the directory locked, and a process that dies during its takeover leaves a takeover file
 * that, once stale, two processes may clear and take over together.
 */
function lockByFile(dir: string, file: string): () => void {
  const takeover = `${file}.takeover`;
  const mine = ownContent();
  const aside = `${file}.${mine.trim().split(' ')[1]}`;
  writeFileSync(aside, mine, { flag: 'wx' });
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        linkSync(aside, file);
        let released = false;
        return () => {
          if (released) return;
          released = true;
          // Only our own lock: one taken over after a stall that outlived us is another's.
          if (readLock(file) === mine) rmSync(file, { force: true });
        };
      } catch (e) {
        if (code(e) !== 'EEXIST') throw e;
      }
      const seen = readLock(file);
      if (seen === null) continue;
      const pid = pidIn(seen);
      if (pid !== null && pid !== process.pid && alive(pid)) throw new DataDirLockedError(dir, pid);
      if (!takeOver(file, takeover, seen)) pause(5);
    }
    throw new Error(
      `could not lock ${dir}: another process is taking over its lock, or one died doing so (its ${path.basename(takeover)} is cleared after ${TAKEOVER_STALE_MS / 1000} s)`,
    );
  } finally {
    rmSync(aside, { force: true });
  }
}

/** Sleeps this thread: a lock is taken before anything else runs. */
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Removes a dead process's lock, if it still holds `seen`, under an exclusive takeover file.
 * False when another process is taking over (or died doing so): the caller waits and tries again.
 */
function takeOver(file: string, takeover: string, seen: string): boolean {
  let fd: number;
  try {
    fd = openSync(takeover, 'wx');
  } catch (e) {
    if (code(e) !== 'EEXIST') throw e;
    try {
      if (Date.now() - statSync(takeover).mtimeMs > TAKEOVER_STALE_MS) rmSync(takeover, { force: true });
    } catch (err) {
      if (code(err) !== 'ENOENT') throw err;
    }
    return false;
  }
  try {
    if (readLock(file) === seen) rmSync(file, { force: true });
  } finally {
    closeSync(fd);
    rmSync(takeover, { force: true });
  }
  return true;
}
