import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import autocannon from 'autocannon';
import { openDatabase } from '../dist/infra/db/database.js';
import { flushDueBatches } from '../dist/app/delivery/flush-batches.js';
import { benchDeps, cpuSplit, freshDatabase, type CpuSplit, type Storage } from './lib.js';
import { benchPoll, cli, serviceEnv, startCanvass, stopCanvass, waitForHealth } from './service.js';

export type ApiResult = {
  storage: Storage;
  route: string;
  connections: number;
  requestsPerSecond: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  non2xx: number;
  cpu: CpuSplit;
};
export type FlushResult = { storage: Storage; batches: number; perSecond: number; cpu: CpuSplit };

/**
 * The submissions of the load above each opened a batch (the poll's webhook is "partial"):
 * how fast does the worker's scheduler turn them into deliveries, once their window is over?
 * Run here, in this process, on the database the server left (it has stopped).
 */
async function flushAll(storage: Storage, url: string | undefined, dataDir: string): Promise<FlushResult> {
  const database = await openDatabase(
    url ? { databaseUrl: url, dataDir: '', schema: 'check' } : { dataDir, schema: 'check' },
  );
  try {
    const afterEveryWindow = new Date(Date.now() + 60_000);
    const deps = { ...benchDeps(database), clock: { now: () => afterEveryWindow } };
    // No other process to watch: this one stands in, and only its own and PostgreSQL's CPU count.
    const cpu = cpuSplit(process.pid);
    const started = performance.now();
    let batches = 0;
    for (let n; (n = await flushDueBatches(deps)) > 0;) batches += n;
    const seconds = (performance.now() - started) / 1000;
    return { storage, batches, perSecond: batches / seconds, cpu: { ...cpu(batches), otherUs: NaN } };
  } finally {
    await database.close();
  }
}

/**
 * Concurrent clients per route. Submissions are written in groups that share a transaction, so
 * their rate depends on how many respondents are waiting at once: at 32 connections too few
 * requests are in flight to fill the groups and the cores are not saturated (docs/performance.md);
 * 128 is the saturating load. Both are reported. BENCH_API_CONNECTIONS=64 picks other levels.
 */
const LEVELS = (process.env.BENCH_API_CONNECTIONS ?? '32,128').split(',').map(Number);

/** `canvass serve --no-worker` as its own process, loaded by autocannon. */
export async function apiLoad(storage: Storage, seconds = 10): Promise<{ api: ApiResult[]; flush?: FlushResult }> {
  const fresh = storage === 'postgres' ? await freshDatabase('postgres') : undefined;
  await fresh?.database.close().catch(() => {});
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'canvass-bench-api-'));
  const { env, base } = await serviceEnv(dataDir, fresh?.url);
  const { accountId, apiKey } = await cli(env, [
    'accounts',
    'create',
    '--name',
    'Bench',
    '--owner-email',
    'bench@example.com',
  ]);
  const server = startCanvass(['serve', '--no-worker'], env);
  const stop = () => stopCanvass(server);
  try {
    await waitForHealth(base, server);
    const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const { pollId, slideId } = await benchPoll(base, apiKey!, accountId!, [
      { url: 'https://hooks.example.com/bench', deliveryRule: 'partial' },
    ]);
    const run = async (route: string, body: unknown, headers: Record<string, string>, connections: number) => {
      const cpu = cpuSplit(server.pid!);
      const r = await autocannon({
        url: base + route,
        method: 'POST',
        connections,
        duration: seconds,
        headers,
        body: JSON.stringify(body),
      });
      return {
        storage,
        route,
        connections,
        requestsPerSecond: r.requests.average,
        p99Ms: r.latency.p99,
        maxMs: r.latency.max,
        errors: r.errors,
        non2xx: r.non2xx,
        cpu: cpu(r.requests.total),
      } satisfies ApiResult;
    };
    const routes: [string, unknown, Record<string, string>][] = [
      [
        '/participant/responses',
        {
          pollId,
          answers: [{ slideId, value: 'Because it is fast' }],
          metadata: { page: '/thank_you' },
        },
        { 'content-type': 'application/json' },
      ],
      ['/poll', { accountId, title: 'Load test poll', displaySettings: { align: 'left' } }, auth],
    ];
    // BENCH_API_ROUTE=/poll: only the routes that match (to profile one at a time).
    const results: ApiResult[] = [];
    for (const [route, body, headers] of routes) {
      if (process.env.BENCH_API_ROUTE && route !== process.env.BENCH_API_ROUTE) continue;
      for (const connections of LEVELS) results.push(await run(route, body, headers, connections));
    }
    await stop();
    return {
      api: results,
      flush: results.some((r) => r.route === '/participant/responses')
        ? await flushAll(storage, fresh?.url, dataDir)
        : undefined,
    };
  } finally {
    await stop();
    rmSync(dataDir, { recursive: true, force: true });
    await fresh?.drop().catch(() => {});
  }
}
