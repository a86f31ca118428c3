import { randomUUID } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';

/**
 * Who holds an embedded data directory, as its lock file `canvass.lock` says it, one line:
 * `pid token start-time pid-namespace time-namespace` (the last three `-` where /proc does not
 * tell). Builds before the last three fields wrote `pid token`; every field after the pid is
 * optional to a reader.
 */
export type Holder = {
  pid: number;
  token: string;
  started: string | null;
  pidNs: string | null;
  timeNs: string | null;
};

const known = (field: string | undefined) => (field && field !== '-' ? field : null);

export function holderIn(content: string): Holder | null {
  const [pid, token, started, pidNs, timeNs] = content.trim().split(/\s+/);
  const n = Number(pid);
  if (!Number.isInteger(n) || n <= 0) return null;
  return { pid: n, token: token ?? '', started: known(started), pidNs: known(pidNs), timeNs: known(timeNs) };
}

/** Fields 3 onwards of /proc/PID/stat (the state first, the start time at index 19); null where unreadable. */
function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces and parentheses itself.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** This process's namespace of `kind` (as `pid:[4026531836]`), or null where /proc does not tell. */
export function namespaceOf(kind: 'pid' | 'time' | 'net'): string | null {
  try {
    return readlinkSync(`/proc/self/ns/${kind}`);
  } catch {
    return null;
  }
}

/** This process as a holder, with a token of its own. */
export function thisProcess(): Holder {
  return {
    pid: process.pid,
    token: randomUUID(),
    started: procStat(process.pid)?.[19] ?? null,
    pidNs: namespaceOf('pid'),
    timeNs: namespaceOf('time'),
  };
}

export const holderLine = (h: Holder): string =>
  `${h.pid} ${h.token} ${h.started ?? '-'} ${h.pidNs ?? '-'} ${h.timeNs ?? '-'}\n`;

/**
 * Whether the holder a lock file names may still run, so that its lock is obeyed. `mine` are the
 * tokens of the locks this process holds.
 * - This process's pid under another token was an earlier process's: a container restarted
 *   after a kill runs as the same pid, in this or a new pid namespace.
 * - A holder in another pid namespace (a container, seen from the host) is judged only by
 *   whether its pid is alive here, the most that can be told from outside.
 * - Within one namespace a live pid is not enough where /proc tells more: a pid reused since by
 *   an unrelated process started at another time, and a killed holder its parent has not yet
 *   reaped (a zombie), run no more. Start times count from the boot time of the reader's time
 *   namespace, so they are compared only within one. Where /proc does not tell (another
 *   platform, another user's process hidden from this one), a live pid is taken at its word.
 */
export function holderRuns(holder: Holder, mine: ReadonlySet<string>): boolean {
  if (mine.has(holder.token)) return true;
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const pidNs = namespaceOf('pid');
  if (holder.pidNs && pidNs && holder.pidNs !== pidNs) return true;
  const stat = procStat(holder.pid);
  if (!stat) return true;
  if (stat[0] === 'Z' || stat[0] === 'X') return false;
  const timeNs = namespaceOf('time');
  if (holder.started === null || (holder.timeNs && timeNs && holder.timeNs !== timeNs)) return true;
  return stat[19] === holder.started;
}
