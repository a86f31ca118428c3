/**
 * `npm run bench`: delivery throughput (vs a raw undici baseline), paced latency, claim cost
 * with a large backlog, API load, and worker memory. Prints a table and writes
 * bench/results.json. Needs PostgreSQL (CANVASS_BENCH_PG_URL, default the local server) and a
 * built dist/ (npm run build): the worker, the store and the API server run from there, as they
 * ship. Not part of npm test.
 *
 *   npm run bench                  # everything
 *   npm run bench -- delivery api  # some sections: delivery, paced, workers, claim, api (with the batch flush after it), pipeline, memory
 *   BENCH_PIPELINE_SECONDS=60      # the pipeline's run at BENCH_PIPELINE_RATE (1000/s), then
 *   BENCH_PIPELINE_LADDER=1500,2000,3000,4000  # its rising steps (BENCH_PIPELINE_STEP_SECONDS, 15 s each); empty: none
 *   BENCH_STORAGE=postgres         # one storage only
 *   BENCH_ROUNDS=1                 # delivery rounds (default 3; the median round is reported)
 *   BENCH_CLI=/path/dist/cli/index.js  # another build of canvass for the api, workers and pipeline sections (an A/B)
 *   BENCH_WORKERS=1,4              # the worker counts of the workers section (default 1,2,4; ratios are to the first)
 *   BENCH_CPU_PROF=/tmp/prof       # V8 CPU profiles of the worker, the raw baseline and the API server
 *   npm run bench -- bounds        # the worker on PostgreSQL with its claim, its record or both answered
 *                                  # from memory (bounds.ts), BENCH_ROUNDS rounds; prints, leaves results.json alone
 *   BENCH_AB_DIST=/other/dist npm run bench -- ab
 *                                  # this build's worker (A) against another build's (B), alternating in
 *                                  # one process, BENCH_ROUNDS rounds (default 6) to BENCH_AB_ENDPOINTS
 *                                  # endpoints (10); prints its figures and leaves results.json alone
 *   npm run bench -- stall         # one worker on PostgreSQL with an endpoint that never answers: how long do
 *                                  # 50 deliveries of another account, or of the same account to another
 *                                  # host, wait behind it, behind five endpoints on one stalled host,
 *                                  # (another account's) behind 3,000 stalled ones due before them, or
 *                                  # behind 1,000 on each of two stalled hosts of their account?
 *                                  # BENCH_STALL_CASES=account,endpoint,host,backlog,hosts (the default;
 *                                  # also tied: the backlog all due at one instant, which no window passes);
 *                                  # BENCH_ROUNDS rounds (default 2); with
 *                                  # BENCH_AB_DIST, that build too, alternating; prints, leaves results.json alone
 *   BENCH_AB_DIST=/other/dist npm run bench -- submit-ab
 *                                  # the submission path's CPU, this build (A) against another (B):
 *                                  # BENCH_ROUNDS rounds (default 10) of BENCH_SUBMIT_GROUPS groups
 *                                  # (1000) of BENCH_SUBMIT_GROUP one-go respondents (8), on PostgreSQL
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { abDelivery, median } from './ab.js';
import { apiLoad } from './api.js';
import { loadBuild, thisBuild } from './build.js';
import { deliveryBounds, pct } from './bounds.js';
import { claimCost, type ClaimResult } from './claim.js';
import { closeClients, paced, rawBaseline, throughput, type ThroughputResult } from './delivery.js';
import { HERE, startReceiver, tlsDir, type CpuSplit, type Storage } from './lib.js';
import { workerMemory } from './memory.js';
import { pipeline } from './pipeline.js';
import { submitAb } from './submit-ab.js';
import { severalWorkers, type WorkersResult } from './workers.js';
import { stallRun, type StallCase } from './stall.js';
import { judge } from './targets.js';

const dir = tlsDir();
// The CA must be trusted when the process starts: re-run this script with it in the environment.
if (process.env.NODE_EXTRA_CA_CERTS !== path.join(dir, 'ca.crt')) {
  const r = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(dir, 'ca.crt') },
  });
  process.exit(r.status ?? 1);
}

const wanted = new Set(
  process.argv.slice(2).length
    ? process.argv.slice(2)
    : ['delivery', 'paced', 'workers', 'claim', 'api', 'pipeline', 'memory'],
);
if ((wanted.has('ab') || wanted.has('submit-ab')) && !process.env.BENCH_AB_DIST) {
  console.error('the ab sections compare this build with another: set BENCH_AB_DIST to its dist/ directory');
  process.exit(2);
}
const storages: Storage[] = (process.env.BENCH_STORAGE?.split(',') as Storage[] | undefined) ?? ['postgres', 'pglite'];
// Runs three times as long as 20,000, whose rounds' ratios spread wider on a shared host (docs/performance.md).
const EVENTS = Number(process.env.BENCH_EVENTS ?? 60_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const results: Record<string, unknown> = {
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
  at: new Date().toISOString(),
};
const round = (n: number) => (Number.isFinite(n) ? Math.round(n * 10) / 10 : n);
const round2 = (n: number) => (Number.isFinite(n) ? Math.round(n * 100) / 100 : n);
const cpuText = (c: CpuSplit) => `${Math.round(c.selfUs)} / ${Math.round(c.otherUs)} / ${Math.round(c.postgresUs)}`;
/** The columns the ab and bounds tables share: medians of several runs of one worker. */
const medianRuns = (runs: { perSecond: number[]; ratios: number[]; cpu: CpuSplit[] }) => ({
  'median deliveries/s': round(median(runs.perSecond)),
  'median ratio': round2(median(runs.ratios)),
  rounds: runs.ratios.map(round2).join(' '),
  'CPU µs worker/recv/pg, median': cpuText({
    selfUs: median(runs.cpu.map((c) => c.selfUs)),
    otherUs: median(runs.cpu.map((c) => c.otherUs)),
    postgresUs: median(runs.cpu.map((c) => c.postgresUs)),
  }),
});

const receiver = await startReceiver(dir);
try {
  if (wanted.has('delivery')) {
    // Unmeasured warm-up of the raw side (JIT, TLS sessions, pool).
    await rawBaseline(receiver, 10, 5_000);
    const rows = [];
    // One storage after the other, PostgreSQL first: once a PGlite database has run in this
    // process, even closed, every later run here is slower, the raw client's more than the
    // worker's, so alternating the storages would flatter the PostgreSQL ratio
    // (docs/performance.md).
    for (const storage of storages) {
      await throughput(storage, receiver, 10, 5_000); // its warm-up, unmeasured
      for (const endpoints of [1, 10, 100]) {
        // The machine's speed drifts (a shared VM): each run's baseline is the mean of the raw
        // runs just before and just after it, so a drift weighs on both sides of the ratio
        // alike; and the whole is repeated BENCH_ROUNDS times, the median round reported.
        let before = await rawBaseline(receiver, endpoints, EVENTS);
        const all: Array<ThroughputResult & { rawPerSecond: number; ratio: number; rawCpu: CpuSplit }> = [];
        for (let r = 0; r < ROUNDS; r++) {
          const t = await throughput(storage, receiver, endpoints, EVENTS);
          const after = await rawBaseline(receiver, endpoints, EVENTS);
          const raw = (before.perSecond + after.perSecond) / 2;
          before = after;
          all.push({ ...t, rawPerSecond: raw, ratio: t.perSecond / raw, rawCpu: after.cpu });
          console.log(
            `delivery ${storage} ${endpoints} endpoint(s): ${round(t.perSecond)}/s (raw ${round(raw)}/s, ratio ${round2(t.perSecond / raw)}), p50 ${round(t.p50Ms)} ms, p99 ${round(t.p99Ms)} ms, dup ${t.duplicates}, bad sig ${t.badSignatures}`,
          );
          console.log(
            `  CPU µs per delivery, this process / receiver / PostgreSQL: worker ${cpuText(t.cpu)}, raw ${cpuText(after.cpu)}`,
          );
        }
        const median = [...all].sort((a, b) => a.ratio - b.ratio)[Math.floor(all.length / 2)]!;
        rows.push({ ...median, roundRatios: all.map((x) => x.ratio) });
      }
    }
    results.delivery = rows;
    console.table(
      rows.map((r) => ({
        storage: r.storage,
        endpoints: r.endpoints,
        'deliveries/s': round(r.perSecond),
        'raw/s': round(r.rawPerSecond),
        ratio: round2(r.ratio),
        rounds: r.roundRatios.map(round2).join(' '),
        'CPU µs worker/recv/pg': cpuText(r.cpu),
        'p50 ms': round(r.p50Ms),
        'p99 ms': round(r.p99Ms),
      })),
    );
  }
  if (wanted.has('bounds')) {
    const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
    const rows = await deliveryBounds(receiver, 10, EVENTS, rounds, console.log);
    console.table(
      rows.map((r) => ({
        variant: r.variant,
        ...medianRuns(r),
        'run-queue wait worker/recv': `${pct(median(r.waits.map((w) => w.self)))} / ${pct(median(r.waits.map((w) => w.other)))}`,
        'raw run: client/recv': `${pct(median(r.rawWaits.map((w) => w.self)))} / ${pct(median(r.rawWaits.map((w) => w.other)))}`,
      })),
    );
  }
  if (wanted.has('ab')) {
    const builds = [thisBuild, await loadBuild(process.env.BENCH_AB_DIST!)] as const;
    const endpoints = Number(process.env.BENCH_AB_ENDPOINTS ?? 10);
    const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
    const rows = [];
    for (const storage of storages)
      rows.push(await abDelivery(receiver, [...builds], storage, endpoints, EVENTS, rounds, console.log));
    console.table(
      rows.flatMap((r) =>
        r.sides.map((side, i) => ({
          storage: r.storage,
          build: `${i ? 'B' : 'A'}: ${side.build}`,
          ...medianRuns(side),
        })),
      ),
    );
    for (const r of rows)
      console.log(
        `ab ${r.storage}: B's ratio over A's, median round ${round2(median(r.quotients))} (rounds ${r.quotients.map(round2).join(' ')})`,
      );
  }
  if (wanted.has('stall')) {
    // This build alone, or alternating with another (BENCH_AB_DIST) within each round.
    const builds = process.env.BENCH_AB_DIST ? [thisBuild, await loadBuild(process.env.BENCH_AB_DIST)] : [thisBuild];
    const stallCases = (process.env.BENCH_STALL_CASES?.split(',') ?? [
      'account',
      'endpoint',
      'host',
      'backlog',
      'hosts',
    ]) as StallCase[];
    const runs = [];
    for (let r = 0; r < Number(process.env.BENCH_ROUNDS ?? 2); r++)
      for (const which of stallCases)
        for (const build of r % 2 ? [...builds].reverse() : builds) {
          const run = await stallRun(build, which);
          console.log(
            `stall round ${r + 1}, ${which}, ${build.name}: first after ${run.firstMs} ms, last after ${run.lastMs} ms`,
          );
          runs.push(run);
        }
    console.table(
      runs.map((run) => ({ build: run.build, case: run.case, 'first ms': run.firstMs, 'last ms': run.lastMs })),
    );
  }
  if (wanted.has('submit-ab')) {
    const sides = await submitAb(
      process.env.BENCH_AB_DIST!,
      Number(process.env.BENCH_ROUNDS ?? 10),
      Number(process.env.BENCH_SUBMIT_GROUP ?? 8),
      Number(process.env.BENCH_SUBMIT_GROUPS ?? 1000),
      console.log,
    );
    console.table(
      sides.map((side, i) => ({
        build: `${i ? 'B' : 'A'}: ${side.dist}`,
        'PostgreSQL µs per submission, median': round(median(side.postgresUs)),
        rounds: side.postgresUs.map(Math.round).join(' '),
        'this process µs, median': round(median(side.nodeUs)),
      })),
    );
  }
  if (wanted.has('paced')) {
    const rows = [];
    for (const storage of storages) {
      const p = await paced(storage, receiver, 1000, Number(process.env.BENCH_PACED ?? 10_000));
      rows.push(p);
      console.log(
        `paced ${storage} 1000/s: p50 ${round(p.p50Ms)} ms, p99 ${round(p.p99Ms)} ms, max ${round(p.maxMs)} ms`,
      );
    }
    results.paced = rows;
    console.table(
      rows.map((r) => ({
        storage: r.storage,
        'rate/s': r.rate,
        'p50 ms': round(r.p50Ms),
        'p99 ms': round(r.p99Ms),
        'max ms': round(r.maxMs),
      })),
    );
  }
  if (wanted.has('workers')) {
    // 1, 2 and 4 worker processes in turn, BENCH_ROUNDS times: each ratio is to the one worker
    // of its own round.
    const counts = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);
    const rounds: WorkersResult[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const round: WorkersResult[] = [];
      for (const n of counts) {
        const w = await severalWorkers(receiver, n, EVENTS);
        round.push(w);
        console.log(
          `workers ${n}: ${Math.round(w.perSecond)}/s, ratio ${round2(w.perSecond / round[0]!.perSecond)}; per worker ${w.perWorker
            .map(
              (p) =>
                `${p.deliveries} (first after ${p.firstMs} ms, done ${p.doneBeforeEndMs} ms before the end, longest gap ${p.longestGapMs} ms at ${p.longestGapAtMs} ms)`,
            )
            .join(
              ', ',
            )}; dup ${w.duplicates}; ${Math.round(w.transactionsPer1000)} write transactions per 1,000; host steal ${w.stealMs} ms`,
        );
      }
      rounds.push(round);
    }
    const rows = counts.map((n, i) => {
      const all = rounds.map((round) => ({ ...round[i]!, ratio: round[i]!.perSecond / round[0]!.perSecond }));
      const median = [...all].sort((a, b) => a.ratio - b.ratio)[Math.floor(all.length / 2)]!;
      return {
        ...median,
        roundRatios: all.map((x) => x.ratio),
        onePerSecond: rounds.map((round) => round[0]!.perSecond),
      };
    });
    results.workers = rows;
    console.table(
      rows.map((r) => ({
        workers: r.workers,
        'deliveries/s': round(r.perSecond),
        'ratio to 1': round2(r.ratio),
        rounds: r.roundRatios.map(round2).join(' '),
        'shares %': r.perWorker.map((p) => Math.round((100 * p.deliveries) / r.deliveries)).join(' / '),
        'CPU µs workers/recv/pg': `${Math.round(r.cpu.workers)} / ${Math.round(r.cpu.receiver)} / ${Math.round(r.cpu.postgres)}`,
        'write transactions per 1k': round(r.transactionsPer1000),
        'workers µs main (kernel)/other threads': `${Math.round(r.threads.mainUs)} (${Math.round(r.threads.mainSystemUs)}) / ${Math.round(r.threads.othersUs)}`,
        'main sleeps/preempted per 1k': `${Math.round(r.threads.sleepsPer1000)} / ${Math.round(r.threads.preemptedPer1000)}`,
        'page faults per delivery': Number(r.threads.faultsPerDelivery.toFixed(2)),
        'first after ms': Math.max(...r.perWorker.map((p) => p.firstMs)),
        'longest gap ms': Math.max(...r.perWorker.map((p) => p.longestGapMs)),
        'done early ms': Math.max(...r.perWorker.map((p) => p.doneBeforeEndMs)),
      })),
    );
  }
  if (wanted.has('claim')) {
    const rows: ClaimResult[] = [];
    for (const pending of [10_000, 100_000, 1_000_000]) {
      const c = await claimCost('postgres', pending);
      rows.push(c);
      console.log(`claim postgres ${pending} pending: median ${round(c.medianMs)} ms, p99 ${round(c.p99Ms)} ms`);
    }
    results.claim = rows;
    console.table(
      rows.map((r) => ({
        pending: r.pending,
        due: r.due,
        'median ms': round(r.medianMs),
        'p99 ms': round(r.p99Ms),
        'vs 10k': round(r.medianMs / rows[0]!.medianMs),
      })),
    );
  }
  if (wanted.has('api')) {
    const rows = [];
    const flushes = [];
    for (const storage of storages) {
      const { api, flush } = await apiLoad(storage);
      rows.push(...api);
      if (flush) flushes.push(flush);
    }
    results.api = rows;
    results.flush = flushes;
    console.table(
      rows.map((r) => ({
        storage: r.storage,
        route: r.route,
        connections: r.connections,
        'req/s': round(r.requestsPerSecond),
        'p99 ms': r.p99Ms,
        'max ms': r.maxMs,
        errors: r.errors,
        non2xx: r.non2xx,
        'CPU µs load/server/pg': cpuText(r.cpu),
      })),
    );
    console.table(
      flushes.map((f) => ({
        storage: f.storage,
        'batches flushed': f.batches,
        'batches/s': round(f.perSecond),
        'CPU µs flush/pg': `${Math.round(f.cpu.selfUs)} / ${Math.round(f.cpu.postgresUs)}`,
      })),
    );
  }
  if (wanted.has('pipeline')) {
    const p = await pipeline(receiver, {
      rate: Number(process.env.BENCH_PIPELINE_RATE ?? 1000),
      seconds: Number(process.env.BENCH_PIPELINE_SECONDS ?? 60),
      ladder: (process.env.BENCH_PIPELINE_LADDER ?? '1500,2000,3000,4000').split(',').filter(Boolean).map(Number),
      stepSeconds: Number(process.env.BENCH_PIPELINE_STEP_SECONDS ?? 15),
    });
    results.pipeline = p;
    console.log(
      `pipeline (serve + worker, PostgreSQL, batch window ${p.windowMs} ms): sustained ${p.sustained} submissions/s`,
    );
    console.table(
      [p.target, ...p.ladder].map((s) => ({
        'rate/s': s.rate,
        seconds: s.seconds,
        'accepted/s': round(s.accepted),
        'backlog growth/s': round(s.backlogGrowthPerSecond),
        'backlog max': s.backlogMax,
        'complete p50/p99 ms': `${round(s.completeP50Ms)} / ${round(s.completeP99Ms)}`,
        'partial − window p50/p99 ms': `${round(s.partialP50Ms)} / ${round(s.partialP99Ms)}`,
        missing: s.missing,
        steady: s.steady,
        'CPU µs load/api/worker/recv/pg': ['load', 'api', 'worker', 'receiver', 'postgres']
          .map((k) => Math.round(s.cpu[k]!))
          .join(' / '),
        'cores busy %': Math.round(s.busy * 100),
      })),
    );
  }
  if (wanted.has('memory')) {
    const m = await workerMemory(receiver);
    results.memory = m;
    console.table([{ pending: m.pending, 'in flight': m.inFlight, 'peak RSS MiB': round(m.peakRssMiB) }]);
  }
} finally {
  await closeClients();
  receiver.stop();
}
// The A/Bs, the bounds and the stall judge no target, and leave the last full run's figures in place.
if ([...wanted].every((section) => ['ab', 'submit-ab', 'bounds', 'stall'].includes(section))) process.exit(0);
results.targets = judge(results);
for (const t of results.targets as ReturnType<typeof judge>)
  console.log(`${t.pass ? 'PASS' : 'FAIL'}  ${t.target}: ${t.value}`);
writeFileSync(path.join(HERE, 'results.json'), JSON.stringify(results, null, 2) + '\n');
console.log(`wrote ${path.join(HERE, 'results.json')}`);
process.exit(0);
