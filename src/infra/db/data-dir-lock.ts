import { randomUUID } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A takeover older than this was left by a process that died during it (one takes milliseconds). */
const TAKEOVER_STALE_MS = 10_000;

const code = (e: unknown) => (e as NodeJS.ErrnoException).code;

/** The lock's content, or null once it is gone. */
function readLock(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if (code(e) === 'ENOENT') return null;
    throw e;
  }
}

/**
 * PGlite has one writer: a second process on the same directory would corrupt it. The lock file
 * names its owner's pid (and a token of its own) so a lock left by a killed process is taken
 * over, not obeyed forever.
 * - It appears with its content (written aside, then hard-linked into place), so no process
 *   ever reads a lock that is still empty and takes it for a dead one's.
 * - A stale lock is taken over under a second file created exclusively, and only if it still
 *   holds what was read as stale: two processes starting after a kill cannot both remove the
 *   dead one's lock, the second removing the first's new one.
 * - A lock holding this process's own pid is a dead one's: a container restarted after a kill
 *   runs as the same pid. Two processes in separate pid namespaces (containers) sharing one data
 *   directory cannot be told apart this way; the embedded storage is for one host.
 */
export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'canvass.lock');
  const takeover = `${file}.takeover`;
  const token = randomUUID();
  const mine = `${process.pid} ${token}\n`;
  const aside = `${file}.${token}`;
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
      const pid = Number(seen.trim().split(/\s+/)[0]);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) throw new DataDirLockedError(dir, pid);
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
