import { createHash, randomBytes, randomUUID } from 'node:crypto';
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
   * dies, however it dies. Default: on Linux. Elsewhere, or where the kernel refuses the socket,
   * the lock is the file alone.
   */
  kernel?: boolean;
};

/**
 * PGlite has one writer: a second process on the same directory would corrupt it, so a process
 * locks the data directory before it opens the database. The lock file `canvass.lock` names the
 * holder (pid, and its start time where /proc tells it), for the error a second process reports
 * and for processes that lock by the file alone.
 */
export async function lockDataDir(dir: string, opts: LockOptions = {}): Promise<Unlock> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'canvass.lock');
  if (opts.kernel ?? process.platform === 'linux') {
    const unlock = await lockInKernel(dir, file);
    if (unlock) return unlock;
  }
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

/** Who a lock file names: a pid, and the start time of the process that wrote it where known. */
type Holder = { pid: number; started: string | null };

function holderIn(content: string | null): Holder | null {
  const [pid, , started] = content?.trim().split(/\s+/) ?? [];
  const n = Number(pid);
  return Number.isInteger(n) && n > 0 ? { pid: n, started: started ?? null } : null;
}

/** When process `pid` started, in clock ticks since boot (field 22 of /proc/PID/stat); null where unknown. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Whether the process a lock file names still runs. Its pid alive is not enough where the start
 * time tells more: a pid reused by an unrelated process started at another time. A file without
 * a start time (written where /proc was not readable) is taken at its pid's word.
 */
function holderRuns(holder: Holder): boolean {
  if (!alive(holder.pid)) return false;
  if (holder.started === null) return true;
  const now = startTime(holder.pid);
  return now === null || now === holder.started;
}

function ownContent(): string {
  const started = startTime(process.pid);
  return `${process.pid} ${randomUUID()}${started ? ` ${started}` : ''}\n`;
}

/**
 * The directory's lock is a listening abstract socket: binding it is atomic and the kernel
 * unbinds it when the process dies, even by SIGKILL, so there is no stale lock to judge and no
 * takeover for two processes to race.
 * - Its name is made from the directory's device and inode (every path to it, symlinks included,
 *   names the same lock) and a random key kept in the directory, readable by its owner only:
 *   abstract sockets have no permissions, and a user who cannot read the directory could
 *   otherwise take the name first and keep Canvass from starting.
 * - `exclusive`: in a cluster worker a listen is otherwise handed to the primary, which shares
 *   one socket among every worker that asks, and all of them would hold the lock.
 * - The name is padded to the full address length, the address Node 20 binds for any name.
 * - A lock file naming a running process is obeyed even so: a process that locks by the file
 *   alone (another platform's build, a host that refused the socket) holds no socket.
 * Null where the kernel refuses the socket for another reason than its being taken.
 */
async function lockInKernel(dir: string, file: string): Promise<Unlock | null> {
  const { dev, ino } = statSync(dir, { bigint: true });
  const digest = createHash('sha256')
    .update(`${dev}:${ino}:${lockKey(dir)}`)
    .digest('hex')
    .slice(0, 40);
  const name = `\0canvass-data-${digest}`.padEnd(108, '\0');
  const server = net.createServer((socket) => socket.destroy());
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ path: name, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    if (code(e) === 'EADDRINUSE') throw new DataDirLockedError(dir, await holderPid(file));
    return null;
  }
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  // A service's lock must not keep its process alive once everything else has ended.
  server.unref();
  const mine = ownContent();
  const aside = `${file}.${process.pid}.${randomUUID()}`;
  try {
    // A file naming this process's pid was left by an earlier process that ran as it (a
    // container restarted after a kill), as it holds no socket here.
    const seen = holderIn(readLock(file));
    if (seen && seen.pid !== process.pid && holderRuns(seen)) throw new DataDirLockedError(dir, seen.pid);
    // Any other lock file was left by a process that has died. It is replaced whole (written
    // aside, renamed), never seen half-written.
    writeFileSync(aside, mine, { flag: 'wx' });
    renameSync(aside, file);
  } catch (e) {
    rmSync(aside, { force: true });
    await close();
    throw e;
  }
  let released: Promise<void> | undefined;
  return () =>
    (released ??= (async () => {
      try {
        if (readLock(file) === mine) rmSync(file, { force: true });
      } finally {
        await close();
      }
    })());
}

/** The key of the directory's lock name, made once by whichever process first locks it. */
function lockKey(dir: string): string {
  const keyFile = path.join(dir, 'canvass.lock.key');
  const read = () => readFileSync(keyFile, 'utf8').trim();
  try {
    return read();
  } catch (e) {
    if (code(e) !== 'ENOENT') throw e;
  }
  // Written aside and linked into place: a racing process reads the whole key or none.
  const aside = `${keyFile}.${randomUUID()}`;
  writeFileSync(aside, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  try {
    linkSync(aside, keyFile);
  } catch (e) {
    if (code(e) !== 'EEXIST') throw e;
  } finally {
    rmSync(aside, { force: true });
  }
  return read();
}

/** The pid of the running holder the file names; the holder writes it just after it binds. */
async function holderPid(file: string): Promise<number | null> {
  for (let i = 0; i < 20; i++) {
    const holder = holderIn(readLock(file));
    if (holder && holderRuns(holder)) return holder.pid;
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
 * process (one that no longer runs: `holderRuns`) is taken over, not obeyed forever.
 * - It appears with its content (written aside, then hard-linked into place), so no process
 *   ever reads a lock that is still empty and takes it for a dead one's.
 * - A stale lock is taken over under a second file created exclusively, and only if it still
 *   holds what was read as stale: two processes starting after a kill cannot both remove the
 *   dead one's lock, the second removing the first's new one.
 * - A lock holding this process's own pid is a dead one's: a container restarted after a kill
 *   runs as the same pid.
 * What it cannot rule out, and the kernel's lock does: a process that dies during its takeover
 * leaves a takeover file that, once stale, two processes may clear and take over together.
 */
function lockByFile(dir: string, file: string): () => void {
  const takeover = `${file}.takeover`;
  const mine = ownContent();
  const aside = `${file}.${process.pid}.${randomUUID()}`;
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
      const holder = holderIn(seen);
      if (holder && holder.pid !== process.pid && holderRuns(holder)) throw new DataDirLockedError(dir, holder.pid);
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
