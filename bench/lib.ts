import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import type { Database } from '../dist/infra/db/database.js';
import { thisBuild, type Build } from './build.js';
import type { Deps } from '../src/app/ports/index.js';
import { makeTestCa } from '../test/support/tls.js';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const PG_ADMIN = process.env.CANVASS_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const SECRET = 'whsec_benchmark_secret_0123456789abcdefghijklmno';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The test CA, trusted by this process through NODE_EXTRA_CA_CERTS (run.ts re-execs itself with it). */
export function tlsDir(): string {
  const dir = path.join(os.tmpdir(), 'canvass-bench-ca');
  makeTestCa(dir);
  return dir;
}

export type Storage = 'postgres' | 'pglite';

/** A fresh database of either kind; drop() removes it. */
export async function freshDatabase(
  storage: Storage,
  build: Build = thisBuild,
): Promise<{ database: Database; url?: string; drop(): Promise<void> }> {
  const { openDatabase } = build;
  if (storage === 'pglite') {
    // On a data directory, as `canvass serve` opens it by default (docs/performance.md).
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'canvass-bench-pglite-'));
    const removeDir = () => rmSync(dataDir, { recursive: true, force: true });
    const database = await openDatabase({ dataDir, schema: 'apply' }).catch((e: unknown) => {
      removeDir();
      throw e;
    });
    return {
      database,
      async drop() {
        try {
          await database.close();
        } finally {
          removeDir();
        }
      },
    };
  }
  const name = `canvass_bench_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const u = new URL(PG_ADMIN);
  u.pathname = '/' + name;
  const url = u.toString();
  const database = await openDatabase({ databaseUrl: url, dataDir: '', schema: 'apply', poolSize: 10 });
  return {
    database,
    url,
    async drop() {
      await database.close();
      const c = new pg.Client({ connectionString: PG_ADMIN });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

export function benchDeps(database: Database, build: Build = thisBuild): Deps {
  return {
    store: build.createStore(database.db),
    clock: { now: () => new Date() },
    urlPolicy: { allowPrivateTargets: true },
    delivery: {
      retryLadderMs: [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000],
      dnsRetryLadderMs: [60_000, 180_000],
      deliveryTimeoutMs: 10_000,
      batchWindowMs: 5_000,
      userAgent: 'Canvass-Webhooks/bench',
      secretOverlapMs: 0,
    },
  };
}

export type Receiver = {
  port: number;
  child: ChildProcess;
  ask<T>(msg: object): Promise<T>;
  stop(): void;
};

export async function startReceiver(dir: string): Promise<Receiver> {
  const child = fork(path.join(HERE, 'receiver.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_TLS_DIR: dir, BENCH_SECRET: SECRET },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`receiver exited ${code}`)));
  });
  let queue = Promise.resolve<unknown>(undefined);
  return {
    port,
    child,
    ask<T>(msg: object): Promise<T> {
      const next = queue.then(
        () =>
          new Promise<T>((resolve) => {
            child.once('message', (m) => resolve(m as T));
            child.send(msg);
          }),
      );
      queue = next.catch(() => undefined);
      return next;
    },
    stop: () => child.kill('SIGKILL'),
  };
}

/** CPU µs per unit of work: this process, one other process (receiver, API server), PostgreSQL. */
export type CpuSplit = { selfUs: number; otherUs: number; postgresUs: number };

/** The fields of a /proc stat line after the command's name: [0] is field 3 (state) of proc(5). */
function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

export function ticksOf(stat: string): number {
  const f = statFields(stat);
  return Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks (1/100 s on Linux)
}

/**
 * CPU ticks of each PostgreSQL process now, keyed by pid and start time (a pid reused by a new
 * backend is another process).
 */
export function postgresSnapshot(): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const startedAt = statFields(stat)[19];
      ticks.set(`${pid}:${startedAt}`, ticksOf(stat));
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks;
}

/**
 * PostgreSQL's CPU ticks since `before`, process by process: one started meanwhile counts from
 * its start, one that ended meanwhile counts nothing. A pool's connection closes after 10 s
 * idle, so backends end in the middle of long runs (docs/performance.md, "The benchmark").
 */
export function postgresTicksSince(before: Map<string, number>): number {
  let t = 0;
  for (const [pid, ticks] of postgresSnapshot()) t += ticks - (before.get(pid) ?? 0);
  return t;
}

/**
 * A process's threads as /proc reads them now: the main thread's CPU ticks (and of them, those
 * in the kernel), its voluntary context switches (it slept, woken later) and its involuntary
 * ones (preempted while runnable), and the CPU ticks of its other threads (V8's compiler and
 * garbage-collector helpers, libuv's pool), those that have ended included; and the process's
 * minor page faults (memory it touched for the first time, or again after giving it back).
 */
export type ThreadTicks = {
  main: number;
  mainSystem: number;
  others: number;
  sleeps: number;
  preempted: number;
  faults: number;
};

export function threadTicks(pid: number): ThreadTicks {
  // The process's own line keeps the time of threads that have ended; the other threads' share
  // is what it holds beyond the main thread's.
  const main = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const whole = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const mainTicks = ticksOf(main);
  return {
    main: mainTicks,
    mainSystem: Number(statFields(main)[12]),
    others: ticksOf(whole) - mainTicks,
    faults: Number(statFields(whole)[7]), // minflt
    sleeps: Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? NaN),
    preempted: Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? NaN),
  };
}

/**
 * CPU time spent from now until the returned function is called, per unit of work (µs): by
 * this process, by another (the receiver, the API server), and by every PostgreSQL process of
 * the machine (PGlite runs inside its host process). Linux /proc only; NaN elsewhere.
 */
export function cpuSplit(otherPid: number): (units: number) => CpuSplit {
  const otherTicks = () => ticksOf(readFileSync(`/proc/${otherPid}/stat`, 'utf8'));
  let start: { self: NodeJS.CpuUsage; other: number; postgres: Map<string, number> } | null = null;
  try {
    start = { self: process.cpuUsage(), other: otherTicks(), postgres: postgresSnapshot() };
  } catch {
    start = null;
  }
  return (units) => {
    if (!start) return { selfUs: NaN, otherUs: NaN, postgresUs: NaN };
    const self = process.cpuUsage(start.self);
    return {
      selfUs: (self.user + self.system) / units,
      otherUs: ((otherTicks() - start.other) * 10_000) / units,
      postgresUs: (postgresTicksSince(start.postgres) * 10_000) / units,
    };
  };
}

/** Run-queue wait of a thread: ns it was runnable but not running (Linux schedstat). */
function waitNs(pid: number, tid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]);
}

/** Shares of a run that two main threads spent runnable but waiting for a core. */
export type Waits = { self: number; other: number };

/**
 * The share of the time from now until the returned function is called that this process's
 * main thread and another process's main thread spent runnable but waiting for a core. Linux
 * /proc only; NaN elsewhere.
 */
export function runQueueWaits(otherPid: number): () => Waits {
  const read = () => ({
    self: waitNs(process.pid, process.pid),
    other: waitNs(otherPid, otherPid),
    at: performance.now(),
  });
  let start: ReturnType<typeof read> | null;
  try {
    start = read();
  } catch {
    start = null;
  }
  return () => {
    if (!start) return { self: NaN, other: NaN };
    const end = read();
    const wallNs = (end.at - start.at) * 1e6;
    return { self: (end.self - start.self) / wallNs, other: (end.other - start.other) / wallNs };
  };
}

/** Samples a process's resident memory (VmRSS) from /proc; returns the peak seen. */
export function rssSampler(pid: number, everyMs = 50) {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb * 1024);
    } catch {
      // the process is gone
    }
  }, everyMs);
  return {
    stop(): number {
      clearInterval(timer);
      return peak;
    },
  };
}

/**
 * BENCH_CPU_PROF=dir: a V8 CPU profile of this process from now until the returned function is
 * called, written to dir/name.cpuprofile (open it in Chrome DevTools or speedscope).
 */
export async function profileSpan(name: string): Promise<() => Promise<void>> {
  const dir = process.env.BENCH_CPU_PROF;
  if (!dir) return async () => {};
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

/**
 * CPU time per unit of work (µs) of each named process, and of PostgreSQL's, from now until the
 * returned function is called. Linux /proc only.
 */
export function cpuOf(pids: Record<string, number>): (units: number) => Record<string, number> {
  const read = () => {
    const t: Record<string, number> = {};
    for (const [name, pid] of Object.entries(pids)) t[name] = ticksOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return t;
  };
  const start = read();
  const postgresAtStart = postgresSnapshot();
  return (units) => {
    const end = read();
    const used: Record<string, number> = { postgres: postgresTicksSince(postgresAtStart) };
    for (const k of Object.keys(end)) used[k] = end[k]! - start[k]!;
    return Object.fromEntries(Object.entries(used).map(([k, ticks]) => [k, (ticks * 10_000) / units]));
  };
}

/**
 * The share of the machine's cores busy (neither idle nor waiting for the disk) from now until
 * the returned function is called, whatever ran on them: /proc/stat. A step that finds the
 * cores near 100% busy measured a saturated host, where latency is queueing.
 */
export function machineBusy(): () => number {
  const read = () => {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n', 1)[0]!
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number) as number[];
    return { total: user! + nice! + system! + idle! + iowait! + irq! + softirq! + steal!, waiting: idle! + iowait! };
  };
  const start = read();
  return () => {
    const end = read();
    const total = end.total - start.total;
    return total > 0 ? 1 - (end.waiting - start.waiting) / total : NaN;
  };
}
