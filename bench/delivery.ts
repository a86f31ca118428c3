import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { Pool } from 'undici';
import { newId } from '../src/domain/ids.js';
import { buildPayload } from '../src/domain/payload.js';
import { signatureHeader } from '../src/domain/signature.js';
import type { HttpSender, Deps } from '../src/app/ports/index.js';
import type { NewDelivery } from '../src/domain/delivery.js';
import { thisBuild, type Build } from './build.js';
import {
  benchDeps,
  cpuSplit,
  freshDatabase,
  percentile,
  profileSpan,
  runQueueWaits,
  SECRET,
  sleep,
  type CpuSplit,
  type Receiver,
  type Storage,
  type Waits,
} from './lib.js';

// The service's defaults (CANVASS_WORKER_CONCURRENCY, main.ts): the raw baseline gets as many lanes.
export const CONCURRENCY = 512;
export const CONNECTIONS = 32;

function body(i: number): string {
  const at = new Date();
  return JSON.stringify(
    buildPayload({
      type: 'submitted-responses',
      accountId: 'acc_bench',
      pollId: 'poll_bench',
      participantId: `prt_${i}`,
      anonymous: false,
      participantMetadata: { plan: 'pro', country: 'NL' },
      responseMetadata: [{ page: '/checkout/thank_you', device: 'mobile' }],
      answers: [
        { slideId: 'sld_a', title: 'How likely are you to recommend us?', type: 'range', value: i % 11, createdAt: at },
        {
          slideId: 'sld_b',
          title: 'What could we do better?',
          type: 'long-answer',
          value: 'Faster shipping, and a clearer returns page.',
          createdAt: at,
        },
        {
          slideId: 'sld_c',
          title: 'Your email',
          type: 'email-capture',
          value: `person${i}@example.com`,
          createdAt: at,
        },
      ],
      complete: true,
      at,
    }),
  );
}

/** An account with a known secret, and `endpoints` webhooks on one poll pointing at the receiver. */
export async function seedAccount(deps: Deps, receiverPort: number, endpoints: number): Promise<string[]> {
  const now = new Date();
  await deps.store.accounts.insert({ id: 'acc_bench', name: 'Bench', plan: 'premium', createdAt: now, updatedAt: now });
  await deps.store.accounts.setSigningSecret('acc_bench', SECRET, now, now);
  const urls: string[] = [];
  for (let e = 0; e < endpoints; e++) urls.push(`https://127.0.0.1:${receiverPort}/endpoint/${e}`);
  return urls;
}

export async function insertDeliveries(
  deps: Deps,
  urls: string[],
  count: number,
  dueAt: (i: number) => Date,
): Promise<{ id: string; due: number }[]> {
  const out: { id: string; due: number }[] = [];
  for (let start = 0; start < count; start += 1000) {
    const rows: NewDelivery[] = [];
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const due = dueAt(i);
      const id = newId('dlv');
      rows.push({
        id,
        accountId: 'acc_bench',
        pollId: 'poll_bench',
        webhookId: null,
        endpointId: `end_${i % urls.length}`,
        source: 'webhook',
        url: urls[i % urls.length]!,
        participantId: `prt_${i}`,
        type: 'submitted-responses',
        body: body(i),
        createdAt: new Date(),
        nextAttemptAt: due,
      });
      out.push({ id, due: due.getTime() });
    }
    await deps.store.deliveries.insert(rows);
  }
  return out;
}

export async function waitForCount(receiver: Receiver, target: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const c = await receiver.ask<{ unique: number }>({ cmd: 'count' });
    if (c.unique >= target) return;
    if (Date.now() > until) throw new Error(`only ${c.unique}/${target} deliveries arrived within ${timeoutMs} ms`);
    await sleep(20);
  }
}

// The worker's sender and the raw pool are made once and kept from run to run (closeClients()
// ends them): a service's worker has its keep-alive connections to the endpoints it sends to
// open, as the raw pool has after its first run. Neither pays TLS handshakes inside a
// measurement, except where a run opens more connections than the one before.
// One sender per build, in an A/B.
const senders = new Map<Build, HttpSender>();
const pools = new Map<number, Pool>();

export async function closeClients(): Promise<void> {
  await Promise.all([...senders.values()].map((s) => s.close()));
  senders.clear();
  await Promise.all([...pools.values()].map((p) => p.close()));
  pools.clear();
}

/**
 * Something that stands in for part of the worker's store (bounds.ts): `wrap` gets the store
 * the worker would use, `start` is called as the measured run starts.
 */
export type StoreStandIn = { wrap(deps: Deps): Deps; start(): void };

function runWorker(deps: Deps, build: Build) {
  let sender = senders.get(build);
  if (!sender) {
    sender = build.createH1Sender({ allowPrivateTargets: true, connectionsPerOrigin: CONNECTIONS });
    senders.set(build, sender);
  }
  const controller = new AbortController();
  const runner = build.startDeliveryRunner({ ...deps, sender }, controller.signal, {
    concurrency: CONCURRENCY,
    claimBatch: 512,
    idleMs: 200,
    drainMs: 5_000,
    logger: pino({ level: 'silent' }),
  });
  return {
    wake: runner.wake,
    async stop() {
      controller.abort();
      await runner.done;
    },
  };
}

export type ThroughputResult = {
  storage: Storage;
  endpoints: number;
  deliveries: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  badSignatures: number;
  duplicates: number;
  cpu: CpuSplit;
  /** Share of the run the worker's and the receiver's main threads waited for a core. */
  waits: Waits;
};

/** `count` deliveries, all due at once, spread over `endpoints` URLs: how fast does the worker drain them? */
export async function throughput(
  storage: Storage,
  receiver: Receiver,
  endpoints: number,
  count: number,
  build: Build = thisBuild,
  standIn?: StoreStandIn,
): Promise<ThroughputResult> {
  const fresh = await freshDatabase(storage, build);
  try {
    const deps = benchDeps(fresh.database, build);
    const urls = await seedAccount(deps, receiver.port, endpoints);
    const t0 = new Date(Date.now() + 60_000);
    const rows = await insertDeliveries(deps, urls, count, () => t0);
    // The worker is running, idle, when they fall due (as a service's worker is): it has
    // looked for work and found none, so its database connections are open. Then they are made
    // due all at once and the worker is woken, as an API request in the same process wakes it
    // (main.ts).
    const worker = runWorker(standIn ? standIn.wrap(deps) : deps, build);
    await sleep(300);
    await receiver.ask({ cmd: 'reset' });
    const stopProfile = await profileSpan(`worker-${storage}-${endpoints}`);
    await fresh.database.db.updateTable('delivery_queue').set({ next_attempt_at: new Date() }).execute();
    const cpu = cpuSplit(receiver.child.pid!);
    const waits = runQueueWaits(receiver.child.pid!);
    const started = Date.now();
    standIn?.start();
    worker.wake();
    await waitForCount(receiver, count, 300_000);
    const noticed = Date.now();
    const used = cpu(count);
    const waited = waits();
    await stopProfile();
    await worker.stop();
    const stats = await receiver.ask<{
      requests: number;
      unique: number;
      badSignatures: number;
      arrivals: [string, number][];
    }>({ cmd: 'stats' });
    const arrival = new Map(stats.arrivals);
    const latencies = rows
      .map((r) => (arrival.get(r.id) ?? NaN) - started)
      .filter((x) => !Number.isNaN(x))
      .sort((a, b) => a - b);
    // The run ends when its last delivery arrived, as the receiver recorded it, not when the poll
    // above saw the count (up to 20 ms later, 2% of a run of a second); the raw baseline ends at
    // its last answer.
    const seconds = (latencies.length === count ? latencies.at(-1)! : noticed - started) / 1000;
    return {
      storage,
      endpoints,
      deliveries: count,
      seconds,
      perSecond: count / seconds,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      badSignatures: stats.badSignatures,
      duplicates: stats.requests - stats.unique,
      cpu: used,
      waits: waited,
    };
  } finally {
    await fresh.drop();
  }
}

export type PacedResult = {
  storage: Storage;
  rate: number;
  deliveries: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
};

/** Deliveries falling due at a steady `rate` per second: latency from due time to the receiver's 2xx. */
export async function paced(storage: Storage, receiver: Receiver, rate: number, count: number): Promise<PacedResult> {
  const fresh = await freshDatabase(storage);
  try {
    const deps = benchDeps(fresh.database);
    const urls = await seedAccount(deps, receiver.port, 10);
    // The first second's deliveries are a warm-up, left out of the figures: a worker that has
    // just started opens its TLS connections and compiles its code then, which puts the first
    // deliveries far behind (a cold start, not the steady latency at this rate; see
    // docs/performance.md).
    const warm = rate;
    const t0 = Date.now() + 3_000 + count + warm; // room to insert before the first falls due
    const rows = await insertDeliveries(deps, urls, warm + count, (i) => new Date(t0 + Math.floor((i * 1000) / rate)));
    await receiver.ask({ cmd: 'reset' });
    const stopProfile = await profileSpan(`paced-${storage}`);
    const worker = runWorker(deps, thisBuild);
    await waitForCount(receiver, warm + count, 120_000 + count);
    await stopProfile();
    await worker.stop();
    const stats = await receiver.ask<{ arrivals: [string, number][] }>({ cmd: 'stats' });
    const arrival = new Map(stats.arrivals);
    const latencies = rows
      .slice(warm)
      .map((r) => (arrival.get(r.id) ?? NaN) - r.due)
      .filter((x) => !Number.isNaN(x))
      .sort((a, b) => a - b);
    return {
      storage,
      rate,
      deliveries: count,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies[latencies.length - 1] ?? NaN,
    };
  } finally {
    await fresh.drop();
  }
}

/** The same signed bodies POSTed by a bare undici pool: what the network and receiver allow. */
export async function rawBaseline(
  receiver: Receiver,
  endpoints: number,
  count: number,
): Promise<{ endpoints: number; perSecond: number; cpu: CpuSplit; waits: Waits }> {
  let pool = pools.get(receiver.port);
  if (!pool)
    pools.set(
      receiver.port,
      (pool = new Pool(`https://127.0.0.1:${receiver.port}`, {
        connections: CONNECTIONS,
        pipelining: 1,
        keepAliveTimeout: 30_000,
      })),
    );
  const bodies = Array.from({ length: count }, (_, i) => body(i));
  await receiver.ask({ cmd: 'reset' });
  let next = 0;
  const stopProfile = await profileSpan(`raw-${endpoints}`);
  const started = performance.now();
  const cpu = cpuSplit(receiver.child.pid!);
  const waits = runQueueWaits(receiver.child.pid!);
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const t = Date.now();
      const res = await pool.request({
        method: 'POST',
        path: `/endpoint/${i % endpoints}`,
        body: bodies[i],
        // The headers of a delivery attempt (attemptHeaders in src/app/delivery/send-attempt.ts), so the
        // receiver parses the same requests.
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Canvass-Webhooks/bench',
          'x-service-signature': signatureHeader(SECRET, t, bodies[i]!),
          'x-service-delivery-id': `raw_${i}`,
          'x-service-attempt': '1',
          'x-service-triggered-at': new Date(t).toISOString(),
        },
      });
      await res.body.dump();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const seconds = (performance.now() - started) / 1000;
  const used = cpu(count);
  const waited = waits();
  await stopProfile();
  return { endpoints, perSecond: count / seconds, cpu: used, waits: waited };
}
