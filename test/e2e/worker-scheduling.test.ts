import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { processStorage, spawnCanvass, type CanvassProcess, type Env } from '../support/processes.js';

/** The scheduling policy of each thread of `pid`: field 41 of /proc/<pid>/task/<tid>/stat (0 normal, 3 batch). */
function policies(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // Fields after the command name (in parentheses, which may hold spaces) start at field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[41 - 3]);
  });
}

const SCHED_OTHER = 0;
const SCHED_BATCH = 3;

// `canvass worker` runs under SCHED_BATCH on Linux, every thread of it (docs/performance.md,
// "Several workers"); CANVASS_WORKER_BATCH_SCHEDULING=false keeps the normal policy.
describe.runIf(process.platform === 'linux')('a worker process asks for batch scheduling', () => {
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
});
