import { randomUUID } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `the data directory ${dir} is in use by another Canvass process (pid ${pid}); stop it first, or point CANVASS_DATA_DIR elsewhere`,
    );
    this.name = 'DataDirLockedError';
  }
}

/** Gives the directory back: removes the lock file if it is still this process's. */
export type Unlock = () => Promise<void>;

export type LockOptions = {
  /**
   * Guard a takeover with a socket the kernel frees when its process dies (Linux's abstract
   * sockets). Default: on Linux. Elsewhere, a takeover is guarded by a file.
   */
  kernel?: boolean;
};

const code = (e: unknown) => (e as NodeJS.ErrnoException).code;

/**
 * PGlite has one writer: a second process on the same directory would corrupt it, so a process
 * locks the data directory before it opens the database. The lock is the file `canvass.lock`,
 * naming its holder (pid, and the holder's start time where /proc tells it).
 * - It appears with its content (written aside, then hard-linked into place): no process ever
 *   reads a lock that is still empty and takes it for a dead one's.
 * - A lock whose holder no longer runs (`holderRuns`) is taken over, not obeyed forever: removed
 *   under a guard that one process holds at a time, and only if it still holds what was read as
 *   stale. Two processes starting after a kill cannot both remove the dead one's lock, the second
 *   removing the first's new one.
 * - Processes in separate pid namespaces (two containers) sharing one data directory cannot see
 *   each other's pids; the embedded storage is for one host.
 */
export async function lockDataDir(dir: string, opts: LockOptions = {}): Promise<Unlock> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'canvass.lock');
  const guard = (opts.kernel ?? process.platform === 'linux') ? socketGuard(dir, file) : fileGuard(file);
  const mine = ownContent();
  const aside = `${file}.${process.pid}.${randomUUID()}`;
  writeFileSync(aside, mine, { flag: 'wx' });
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        linkSync(aside, file);
        let released = false;
        return async () => {
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
      if (holder && holderRuns(holder)) throw new DataDirLockedError(dir, holder.pid);
      if (!(await takeOver(file, seen, guard))) await sleep(5);
    }
    throw new Error(
      `could not lock ${dir}: another process is taking over its lock${guard.stale ? `, or one died doing so (${guard.stale})` : ''}`,
    );
  } finally {
    rmSync(aside, { force: true });
  }
}

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

function holderIn(content: string): Holder | null {
  const [pid, , started] = content.trim().split(/\s+/);
  const n = Number(pid);
  return Number.isInteger(n) && n > 0 ? { pid: n, started: started ?? null } : null;
}

/** Fields 3 onwards of /proc/PID/stat (state first, start time at index 19); null where unreadable. */
function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces and parentheses itself.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function ownContent(): string {
  const started = procStat(process.pid)?.[19];
  return `${process.pid} ${randomUUID()}${started ? ` ${started}` : ''}\n`;
}

/**
 * Whether the process a lock file names still runs. A live pid is not enough where /proc tells
 * more: a pid reused since by an unrelated process started at another time, and a killed holder
 * its parent has not yet reaped (a zombie) runs no more. Where /proc does not tell (another
 * platform, a process of another user hidden from this one), the pid is taken at its word.
 */
function holderRuns(holder: Holder): boolean {
  // This process's own pid: its own lock if the start time is its own, else an earlier process
  // that ran as the same pid (a container restarted after a kill).
  if (holder.pid === process.pid) return holder.started !== null && holder.started === procStat(process.pid)?.[19];
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if (code(e) !== 'EPERM') return false;
  }
  const stat = procStat(holder.pid);
  if (!stat) return true;
  if (stat[0] === 'Z' || stat[0] === 'X') return false;
  return holder.started === null || stat[19] === holder.started;
}

/** One process at a time may take over a stale lock. */
type Guard = {
  /** Null while another process holds the guard; else its release. */
  acquire(): Promise<(() => Promise<void>) | null>;
  /** How a guard left by a process that died holding it is cleared, for the error message. */
  stale?: string;
};

/**
 * Removes a dead process's lock, if it still holds `seen`, under the guard.
 * False when another process is taking over: the caller waits and tries again.
 */
async function takeOver(file: string, seen: string, guard: Guard): Promise<boolean> {
  const release = await guard.acquire();
  if (!release) return false;
  try {
    if (readLock(file) === seen) rmSync(file, { force: true });
  } finally {
    await release();
  }
  return true;
}

/** A takeover file older than this was left by a process that died during it (one takes milliseconds). */
const TAKEOVER_STALE_MS = 10_000;

/**
 * The guard as a file created exclusively. A process that dies holding it leaves it behind; it is
 * cleared once older than TAKEOVER_STALE_MS, and then two processes may both clear it and take
 * over together: the race the socket guard has not.
 */
function fileGuard(file: string): Guard {
  const takeover = `${file}.takeover`;
  return {
    stale: `its ${path.basename(takeover)} is cleared after ${TAKEOVER_STALE_MS / 1000} s`,
    async acquire() {
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
        return null;
      }
      return async () => {
        closeSync(fd);
        rmSync(takeover, { force: true });
      };
    },
  };
}

/**
 * The guard as a listening abstract socket named for the directory's device and inode (every
 * path to it names the same guard). Binding is atomic and the kernel unbinds it when its process
 * dies, however it dies: no guard is ever left behind. `exclusive`, since a listen in a cluster
 * worker is otherwise handed to the primary, which shares one socket among all workers asking.
 * The name is padded to the full address length, the address Node 20 binds for any name. While
 * it holds the socket, a process also respects a fresh takeover file, which a process locking
 * without the socket (another platform's build) makes. Where the kernel refuses the socket for
 * another reason than its being held, the file guard serves. Abstract sockets have no
 * permissions: a local user who binds the name holds up takeovers of dead processes' locks, never
 * a start on a free directory.
 */
function socketGuard(dir: string, file: string): Guard {
  const { dev, ino } = statSync(dir, { bigint: true });
  const name = `\0canvass-takeover-${dev}-${ino}`.padEnd(108, '\0');
  const files = fileGuard(file);
  return {
    async acquire() {
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
        if (code(e) === 'EADDRINUSE') return null;
        return files.acquire();
      }
      const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
      try {
        const age = Date.now() - statSync(`${file}.takeover`).mtimeMs;
        if (age <= TAKEOVER_STALE_MS) {
          await close();
          return null;
        }
      } catch (e) {
        if (code(e) !== 'ENOENT') {
          await close();
          throw e;
        }
      }
      return close;
    },
  };
}
