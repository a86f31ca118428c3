import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type { Database } from '../dist/infra/db/database.js';
import { startCanvass, stopCanvass } from './service.js';
import { insertDeliveries, seedAccount, waitForCount } from './delivery.js';
import { benchDeps, cpuOf, freshDatabase, sleep, threadTicks, type Receiver, type ThreadTicks } from './lib.js';

export type WorkersResult = {
  workers: number;
  deliveries: number;
  perSecond: number;
  /**
   * Each worker's deliveries; when its first arrived; how long before the last delivery of all
   * it sent its own last; and its longest pause between two deliveries, and when it began.
   */
  perWorker: {
    deliveries: number;
    firstMs: number;
    doneBeforeEndMs: number;
    longestGapMs: number;
    /** When that pause began, from the release. */
    longestGapAtMs: number;
  }[];
  duplicates: number;
  /** CPU µs per delivery: all the workers together, the receiver, PostgreSQL. */
  cpu: { workers: number; receiver: number; postgres: number };
  /** Write transactions per 1,000 deliveries (claims, result batches, the scheduler's writes). */
  transactionsPer1000: number;
  /**
   * CPU time the hypervisor gave to others while this machine's processes were ready to run
   * (steal, /proc/stat), summed over the cores, during the measured run: a pause of the whole
   * virtual machine shows here, not in any process's figures.
   */
  stealMs: number;
  /**
   * The workers' threads, summed over the workers: CPU µs per delivery of their main threads
   * (and of that, in the kernel) and of their other threads; the main threads' sleeps and preemptions per 1,000 deliveries.
   */
  threads: {
    mainUs: number;
    mainSystemUs: number;
    othersUs: number;
    sleepsPer1000: number;
    preemptedPer1000: number;
    faultsPerDelivery: number;
  };
};

/** Steal time of all cores so far, in ms (/proc/stat counts it in ticks of 10 ms). */
function stolenMs(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  return Number(cpu[8] ?? 0) * 10;
}

/** Local TCP ports of a process's sockets (its fds' inodes looked up in /proc/net/tcp). */
function localPorts(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9]!)) ports.add(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

/**
 * The next transaction id PostgreSQL will assign. Only a transaction that writes takes one, at
 * once (no statistics delay): two readings count the claims, result batches and other writes
 * between them, cluster-wide (nothing else writes during the bench).
 */
async function nextXid(db: Database['db']): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS n`.execute(db);
  return Number(rows[0]!.n);
}

/**
 * `workers` separate `canvass worker` processes on one PostgreSQL drain `count` deliveries made
 * due at once, after a warm-up round of their own.
 * Which worker sent each delivery is read from the client port the receiver saw.
 */
export async function severalWorkers(receiver: Receiver, workers: number, count: number): Promise<WorkersResult> {
  const fresh = await freshDatabase('postgres');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'canvass-bench-workers-'));
  const children: ChildProcess[] = [];
  try {
    const deps = benchDeps(fresh.database);
    const urls = await seedAccount(deps, receiver.port, 10);
    // A warm-up round first, unmeasured: each worker opens its connections, compiles its code
    // and sizes its heap. 5,000 deliveries per worker, as one worker alone gets: a worker of four
    // given a quarter of that did the rest inside the measured run (docs/performance.md).
    const warm = Math.min(count, 5_000) * workers;
    await insertDeliveries(deps, urls, warm, () => new Date(Date.now() + 3_600_000));
    await insertDeliveries(deps, urls, count, () => new Date(Date.now() + 7_200_000));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      LOG_LEVEL: 'warn',
      DATABASE_URL: fresh.url,
      CANVASS_DATA_DIR: dataDir,
      CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
    };
    for (let i = 0; i < workers; i++) children.push(startCanvass(['worker'], env));
    // Due at once, with the notification a new delivery sends, so every worker starts at once.
    const release = (before: Date) =>
      fresh.database.db.transaction().execute(async (trx) => {
        await trx
          .updateTable('delivery_queue')
          .set({ next_attempt_at: new Date() })
          .where('next_attempt_at', '<', before)
          .execute();
        await sql`NOTIFY canvass_new_deliveries`.execute(trx);
      });
    await sleep(2_000); // started and connected
    await receiver.ask({ cmd: 'reset' });
    await release(new Date(Date.now() + 5_400_000));
    await waitForCount(receiver, warm, 300_000);
    await sleep(500); // idle again, as a service's workers are between bursts
    await receiver.ask({ cmd: 'reset', ports: true });
    const cpu = cpuOf({
      receiver: receiver.child.pid!,
      ...Object.fromEntries(children.map((c, i) => [`w${i}`, c.pid!])),
    });
    const threadsAt = () => children.map((c) => threadTicks(c.pid!));
    const threadsBefore = threadsAt();
    const xidBefore = await nextXid(fresh.database.db);
    // Timed from the commit: no delivery can start before it.
    await release(new Date(Date.now() + 10_800_000));
    const started = Date.now();
    const stealBefore = stolenMs();
    await waitForCount(receiver, count, 300_000);
    const seconds = (Date.now() - started) / 1000;
    const stealMs = stolenMs() - stealBefore;
    const used = cpu(count);
    const threads = threadsAt().reduce(
      (sum, t, i) => {
        const d = (k: keyof ThreadTicks) => t[k] - threadsBefore[i]![k];
        return {
          mainUs: sum.mainUs + (d('main') * 10_000) / count,
          mainSystemUs: sum.mainSystemUs + (d('mainSystem') * 10_000) / count,
          othersUs: sum.othersUs + (d('others') * 10_000) / count,
          sleepsPer1000: sum.sleepsPer1000 + (d('sleeps') * 1000) / count,
          preemptedPer1000: sum.preemptedPer1000 + (d('preempted') * 1000) / count,
          faultsPerDelivery: sum.faultsPerDelivery + d('faults') / count,
        };
      },
      { mainUs: 0, mainSystemUs: 0, othersUs: 0, sleepsPer1000: 0, preemptedPer1000: 0, faultsPerDelivery: 0 },
    );
    const workerUs = children.reduce((sum, _, i) => sum + used[`w${i}`]!, 0);
    // Less the release's own transaction.
    const transactions = (await nextXid(fresh.database.db)) - xidBefore - 1;
    const stats = await receiver.ask<{ requests: number; unique: number }>({ cmd: 'count' });
    const { ports } = await receiver.ask<{ ports: [number, number[]][] }>({ cmd: 'ports' });
    const end = Math.max(...ports.flatMap(([, times]) => times));
    const perWorker = children.map((child) => {
      const mine = localPorts(child.pid!);
      const times = ports
        .filter(([port]) => mine.has(port))
        .flatMap(([, t]) => t)
        .sort((a, b) => a - b);
      let longestGapMs = 0;
      let longestGapAtMs = 0;
      for (let i = 1; i < times.length; i++)
        if (times[i]! - times[i - 1]! > longestGapMs) {
          longestGapMs = times[i]! - times[i - 1]!;
          longestGapAtMs = times[i - 1]! - started;
        }
      return {
        deliveries: times.length,
        firstMs: (times[0] ?? Infinity) - started,
        doneBeforeEndMs: end - (times.at(-1) ?? started),
        longestGapMs,
        longestGapAtMs,
      };
    });
    return {
      workers,
      deliveries: count,
      perSecond: count / seconds,
      perWorker,
      duplicates: stats.requests - stats.unique,
      cpu: { workers: workerUs, receiver: used.receiver!, postgres: used.postgres! },
      transactionsPer1000: (transactions / count) * 1000,
      stealMs,
      threads,
    };
  } finally {
    await Promise.all(children.map(stopCanvass));
    rmSync(dataDir, { recursive: true, force: true });
    await fresh.drop();
  }
}
