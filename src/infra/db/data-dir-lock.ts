import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { holderIn, holderLine, holderRuns, namespaceOf, thisProcess } from './data-dir-holder.js';

export class DataDirLockedError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `the data directory ${dir} is in use by another Canvass process (pid ${pid}); stop it first, or point CANVASS_DATA_DIR elsewhere. If no Canvass process uses the directory (pid ${pid} is another program, or the lock was left by a container that has gone), remove ${path.join(dir, 'canvass.lock')}`,
    );
    this.name = 'DataDirLockedError';
  }
}

/** Gives the directory back: removes the lock file if it is still this process's. */
export type Unlock = () => Promise<void>;

export type LockOptions = {
  /**
   * Guard a takeover with a socket the kernel frees when its process dies (Linux's abstract
   * sockets) as well as the takeover file. Default: on Linux. Elsewhere, the file alone.
   */
  kernel?: boolean;
};

const code = (e: unknown) => (e as NodeJS.ErrnoException).code;

/** The tokens of the locks this process holds: a lock file naming one is this process's own. */
const held = new Set<string>();

/** How long a process waits for another's takeover to finish before it gives up. */
const TAKEOVER_WAIT_MS = 2_000;

/**
 * PGlite has one writer: a second process on the same directory would corrupt it, so a process
 * locks the data directory before it opens the database. The lock is the file `canvass.lock`,
 * naming its holder (data-dir-holder.ts).
 * - It appears with its content (written aside, then hard-linked into place): no process ever
 *   reads a lock that is still empty and takes it for a dead one's.
 * - A lock whose holder no longer runs (`holderRuns`) is taken over, not obeyed forever: removed
 *   under a guard that one process holds at a time, and only if it still holds what was read as
 *   stale. Two processes starting after a kill cannot both remove the dead one's lock, the second
 *   removing the first's new one.
 */
export async function lockDataDir(dir: string, opts: LockOptions = {}): Promise<Unlock> {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'canvass.lock');
  const guard = (opts.kernel ?? process.platform === 'linux') ? socketGuard(dir, file) : fileGuard(file);
  const me = thisProcess();
  const mine = holderLine(me);
  const aside = `${file}.${me.token}`;
  writeFileSync(aside, mine, { flag: 'wx' });
  try {
    for (const until = Date.now() + TAKEOVER_WAIT_MS; Date.now() < until;) {
      try {
        linkSync(aside, file);
        held.add(me.token);
        let released = false;
        return async () => {
          if (released) return;
          released = true;
          held.delete(me.token);
          // Only our own lock: one taken over after a stall that outlived us is another's.
          if (readLock(file) === mine) rmSync(file, { force: true });
        };
      } catch (e) {
        if (code(e) !== 'EEXIST') throw e;
      }
      const seen = readLock(file);
      if (seen === null) continue;
      const holder = holderIn(seen);
      if (holder && holderRuns(holder, held)) throw new DataDirLockedError(dir, holder.pid);
      if (!(await takeOver(file, seen, guard))) await sleep(5);
    }
    throw new Error(
      `could not lock ${dir}: another process has been taking over its lock for ${TAKEOVER_WAIT_MS / 1000} s, or one died doing so (${guard.stale}). If no Canvass process uses the directory, remove ${file}`,
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

/** One process at a time may take over a stale lock. */
type Guard = {
  /** Null while another process holds the guard; else its release. */
  acquire(): Promise<(() => Promise<void>) | null>;
  /** How a guard left by a process that died holding it is cleared, for the error message. */
  stale: string;
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
 * The takeover file `canvass.lock.takeover`, created exclusively with `content`; null while
 * another process's is there. One left by a process that died holding it is cleared once older
 * than TAKEOVER_STALE_MS, or at once where `clearable` says it may be.
 */
function takeTakeoverFile(
  file: string,
  content: string,
  clearable: (found: string) => boolean = () => false,
): (() => Promise<void>) | null {
  const takeover = `${file}.takeover`;
  try {
    writeFileSync(takeover, content, { flag: 'wx' });
    return async () => rmSync(takeover, { force: true });
  } catch (e) {
    if (code(e) !== 'EEXIST') throw e;
  }
  try {
    const found = readFileSync(takeover, 'utf8');
    if (clearable(found) || Date.now() - statSync(takeover).mtimeMs > TAKEOVER_STALE_MS) {
      rmSync(takeover, { force: true });
    }
  } catch (e) {
    if (code(e) !== 'ENOENT') throw e;
  }
  return null;
}

/**
 * The takeover file alone. Two processes that find a stale one may both clear it, the second
 * clearing the first's new one, and take over together: the race the socket guard closes among
 * the processes that bind it.
 */
function fileGuard(file: string): Guard {
  return {
    stale: `its canvass.lock.takeover is cleared after ${TAKEOVER_STALE_MS / 1000} s`,
    acquire: async () => takeTakeoverFile(file, ''),
  };
}

/**
 * A listening abstract socket named for the directory's device and inode (every path to it names
 * the same socket), then the takeover file as well.
 * - Binding is atomic and the kernel unbinds the socket when its process dies, however it dies.
 *   A takeover file marked as made under the socket, found by a process of the same network
 *   namespace that now holds the socket, was left by one that died: cleared at once, not after
 *   TAKEOVER_STALE_MS.
 * - The takeover file keeps out the processes that do not bind the socket (another platform's
 *   build, a process whose socket the kernel refused, another network namespace): they create it
 *   exclusively and respect it as this guard does.
 * - `exclusive`, since a listen in a cluster worker is otherwise handed to the primary, which
 *   shares one socket among all the workers asking. The name is padded to the full address
 *   length, the address Node 20 binds for any name.
 * - Abstract sockets have no permissions: a local user who binds the name holds up takeovers of
 *   dead processes' locks, never a start on a free directory.
 * Where the kernel refuses the socket for another reason than its being held, the file serves.
 */
function socketGuard(dir: string, file: string): Guard {
  const { dev, ino } = statSync(dir, { bigint: true });
  const name = `\0canvass-takeover-${dev}-${ino}`.padEnd(108, '\0');
  // Unmarked ('') where the network namespace is unknown: two such processes could not tell
  // whether each other's mark was made under the same socket.
  const netNs = namespaceOf('net');
  const mark = netNs ? `socket ${netNs}\n` : '';
  return {
    stale: `a takeover made under its socket is cleared at once, its canvass.lock.takeover otherwise after ${TAKEOVER_STALE_MS / 1000} s`,
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
        return takeTakeoverFile(file, '');
      }
      const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
      let removeFile: (() => Promise<void>) | null = null;
      try {
        removeFile = takeTakeoverFile(file, mark, (found) => !!mark && found === mark);
      } finally {
        if (!removeFile) await close();
      }
      if (!removeFile) return null;
      const remove = removeFile;
      return async () => {
        try {
          await remove();
        } finally {
          await close();
        }
      };
    },
  };
}
