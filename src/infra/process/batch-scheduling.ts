import { spawnSync } from 'node:child_process';

export type Scheduling = { policy: 'batch' } | { policy: 'normal'; reason: string };

/**
 * Puts every thread of process `pid` under Linux's SCHED_BATCH policy, with util-linux's `chrt`
 * (any user may choose it; threads started later inherit it). A batch task keeps its fair share
 * of the CPU but does not preempt the task running when it wakes: a worker woken by each
 * endpoint answer then no longer cuts into the receiver, the database or another worker, which
 * on two cores kept four workers from delivering as much as one (docs/performance.md).
 */
export function useBatchScheduling(pid: number = process.pid): Scheduling {
  if (process.platform !== 'linux') return { policy: 'normal', reason: `not available on ${process.platform}` };
  const r = spawnSync('chrt', ['--batch', '--all-tasks', '--pid', '0', String(pid)], {
    encoding: 'utf8',
    timeout: 5_000,
  });
  if (r.error) return { policy: 'normal', reason: `chrt could not run: ${r.error.message}` };
  if (r.status !== 0) return { policy: 'normal', reason: `chrt failed: ${r.stderr.trim() || `exit ${r.status}`}` };
  return { policy: 'batch' };
}
