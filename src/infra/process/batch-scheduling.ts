import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const SCHED_OTHER = 0;
export const SCHED_BATCH = 3;

/** The scheduling policy of `tid`: field 41 of /proc/<tid>/stat (0 normal, 3 batch); null if unreadable. */
export function schedulingPolicy(tid: number, pid: number = tid): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The fields after the command name (in parentheses, which may hold spaces) start at field 3.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[41 - 3]);
  } catch {
    return null;
  }
}

/** `kept`: the process was started under another policy than the normal one, and keeps it. */
export type Scheduling = { policy: 'batch' } | { policy: 'normal' | 'kept'; reason: string };

/**
 * Puts every thread of process `pid` under Linux's SCHED_BATCH policy, with util-linux's `chrt`
 * (any user may choose it; threads started later inherit it). A batch task keeps its fair share
 * of the CPU but does not preempt the task running when it wakes: a worker woken by each
 * endpoint answer then no longer cuts into the receiver, the database or another worker, which
 * on two cores kept four workers from delivering as much as one (docs/performance.md).
 */
export function useBatchScheduling(pid: number = process.pid): Scheduling {
  if (process.platform !== 'linux') return { policy: 'normal', reason: `not available on ${process.platform}` };
  // A policy the operator chose (chrt, systemd's CPUSchedulingPolicy=) is kept.
  const current = schedulingPolicy(pid);
  if (current === SCHED_BATCH) return { policy: 'batch' };
  if (current !== null && current !== SCHED_OTHER)
    return { policy: 'kept', reason: `started under scheduling policy ${current}` };
  const r = spawnSync('chrt', ['--batch', '--all-tasks', '--pid', '0', String(pid)], {
    encoding: 'utf8',
    timeout: 5_000,
  });
  if (r.error) return { policy: 'normal', reason: `chrt could not run: ${r.error.message}` };
  if (r.status !== 0) return { policy: 'normal', reason: `chrt failed: ${r.stderr.trim() || `exit ${r.status}`}` };
  return { policy: 'batch' };
}
