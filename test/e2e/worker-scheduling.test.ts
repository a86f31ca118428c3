import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  SCHED_BATCH,
  SCHED_OTHER,
  schedulingPolicy,
  useBatchScheduling,
} from '../../src/infra/process/batch-scheduling.js';
import { until } from '../support/e2e.js';
import { processStorage, spawnCanvass, type CanvassProcess, type Env } from '../support/processes.js';

/** The policy of each thread of `pid` still running when read. */
function policies(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`)
    .map((tid) => schedulingPolicy(Number(tid), pid))
    .filter((p): p is number => p !== null);
}

// Where util-linux's chrt (with --all-tasks) is missing, the worker keeps the normal policy and
// says why; these tests need it, and a test runner started under the normal policy.
const chrtUsable = spawnSync('chrt', ['--help'], { encoding: 'utf8' }).stdout?.includes('--all-tasks') ?? false;
const runnable = process.platform === 'linux' && chrtUsable && schedulingPolicy(process.pid) === SCHED_OTHER;

// `canvass worker` runs under SCHED_BATCH on Linux, every thread of it (docs/performance.md,
// "Several workers"); CANVASS_WORKER_BATCH_SCHEDULING=false keeps the normal policy.
describe.runIf(runnable)('a worker process asks for batch scheduling', () => {
  const procs: CanvassProcess[] = [];
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop(5_000)));
    for (const drop of drops) await drop();
  });

  async function worker(name: string, extra: Env): Promise<CanvassProcess> {
    const env: Env = { LOG_LEVEL: 'info' };
    drops.push((await processStorage(env, name)).drop);
    const proc = spawnCanvass(`canvass worker (${name})`, ['worker'], { ...env, ...extra });
    procs.push(proc);
    await proc.waitForOutput(/canvass worker running/, 60_000);
    return proc;
  }

  it('runs every thread under SCHED_BATCH, and says so', async () => {
    const proc = await worker('sched-batch', {});
    const seen = policies(proc.child.pid!);
    expect(seen.length).toBeGreaterThan(1);
    expect(new Set(seen)).toEqual(new Set([SCHED_BATCH]));
    expect(proc.output()).toMatch(/"scheduling":"batch"/);
  });

  it('keeps the normal policy when told to, and says why', async () => {
    const proc = await worker('sched-normal', { CANVASS_WORKER_BATCH_SCHEDULING: 'false' });
    expect(new Set(policies(proc.child.pid!))).toEqual(new Set([SCHED_OTHER]));
    expect(proc.output()).toMatch(/"scheduling":"normal","schedulingNote":"CANVASS_WORKER_BATCH_SCHEDULING is off"/);
  });

  it('keeps a policy the process was started under', async () => {
    const SCHED_IDLE = 5;
    const child = spawn('chrt', ['--idle', '0', 'sleep', '30'], { stdio: 'ignore' });
    try {
      await until('sleep under SCHED_IDLE', () => schedulingPolicy(child.pid!) === SCHED_IDLE, 10_000, 20);
      expect(useBatchScheduling(child.pid!)).toEqual({
        policy: 'kept',
        reason: `started under scheduling policy ${SCHED_IDLE}`,
      });
      expect(schedulingPolicy(child.pid!)).toBe(SCHED_IDLE);
    } finally {
      child.kill();
    }
  });
});
