import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { benchPoll, cli, serviceEnv, startCanvass, stopCanvass, waitForHealth } from './service.js';
import { cpuOf, freshDatabase, machineBusy, percentile, sleep, type Receiver } from './lib.js';
import { LoadClient } from './load-client.js';

/** The batch window of the pipeline runs: the partial webhook's latency is reported net of it. */
const WINDOW_MS = 1_000;

export type PipelineStep = {
  rate: number;
  seconds: number;
  /** Submissions answered 201 per second (what the API kept up with). */
  accepted: number;
  /** Least-squares slope of the backlog (due deliveries and overdue batches) over the step, per second. */
  backlogGrowthPerSecond: number;
  backlogEnd: number;
  backlogMax: number;
  /** From the 201 to the endpoint's 2xx: the completed-survey delivery, and the batch less its window. */
  completeP50Ms: number;
  completeP99Ms: number;
  partialP50Ms: number;
  partialP99Ms: number;
  /** Submissions whose two deliveries had not both arrived 30 s after the step. */
  missing: number;
  /** CPU µs per submission of each process: the load, the API server, the worker, the receiver, PostgreSQL. */
  cpu: Record<string, number>;
  /** The share of the machine's cores busy during the step, whatever ran on them (lib.ts, machineBusy). */
  busy: number;
  /** The backlog stops growing: it grew by less than 1% of the rate a second. */
  steady: boolean;
};

export type PipelineResult = { windowMs: number; target: PipelineStep; ladder: PipelineStep[]; sustained: number };

const slope = (points: [number, number][]): number => {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  const num = points.reduce((a, p) => a + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((a, p) => a + (p[0] - mx) ** 2, 0);
  return den ? num / den : 0;
};

/**
 * The whole pipeline as a customer sees it, on PostgreSQL: `canvass serve --no-worker` and a
 * separate `canvass worker`, respondents submitting at a steady rate to a poll with a `partial`
 * and a `complete` webhook (each submission completes the survey, so it makes one delivery at
 * once and one when its batch window ends). First `seconds` at `rate`, the target; then steps of
 * `stepSeconds` at rising rates until the backlog grows or the API falls behind: the last
 * steady rate is the sustained rate.
 */
export async function pipeline(
  receiver: Receiver,
  opts: { rate: number; seconds: number; ladder: number[]; stepSeconds: number },
): Promise<PipelineResult> {
  const fresh = await freshDatabase('postgres');
  await fresh.database.close();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'canvass-bench-pipeline-'));
  const { env, base } = await serviceEnv(dataDir, fresh.url, {
    CANVASS_BATCH_WINDOW_MS: String(WINDOW_MS),
    CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
  });
  const { accountId, apiKey } = await cli(env, [
    'accounts',
    'create',
    '--name',
    'Bench',
    '--owner-email',
    'b@example.com',
  ]);
  const server = startCanvass(['serve', '--no-worker'], env);
  const worker = startCanvass(['worker'], env);
  const watch = new pg.Client({ connectionString: fresh.url });
  const load = new LoadClient(new URL(base), 128);
  try {
    await waitForHealth(base, server);
    await watch.connect();
    const url = (n: number) => `https://127.0.0.1:${receiver.port}/endpoint/${n}`;
    const poll = await benchPoll(base, apiKey!, accountId!, [
      { url: url(0), deliveryRule: 'partial' },
      { url: url(1), deliveryRule: 'complete' },
    ]);
    const secret = poll.signingSecret;
    if (!secret) throw new Error('the owner was not shown the signing secret');

    let respondent = 0;
    const step = async (rate: number, seconds: number): Promise<PipelineStep> => {
      await receiver.ask({ cmd: 'reset', secret, track: true });
      const accepted = new Map<string, number>();
      const backlog: [number, number][] = [];
      const count = rate * seconds;
      const t0 = performance.now() + 200;
      const sampler = setInterval(() => {
        void watch
          .query<{ n: number }>(
            `SELECT (SELECT count(*) FROM delivery_queue WHERE next_attempt_at <= now() AND lease_token IS NULL)
                  + (SELECT count(*) FROM batches WHERE flush_at <= now()) AS n`,
          )
          .then((r) => backlog.push([(performance.now() - t0) / 1000, Number(r.rows[0]!.n)]))
          .catch(() => {});
      }, 500);
      const cpu = cpuOf({ load: process.pid, api: server.pid!, worker: worker.pid!, receiver: receiver.child.pid! });
      const busy = machineBusy();
      const sends: Promise<void>[] = [];
      for (let i = 0; i < count; i++) {
        const at = t0 + (i * 1000) / rate;
        const wait = at - performance.now();
        if (wait > 1) await sleep(wait);
        const participantId = `prt_${++respondent}`;
        sends.push(
          load
            .post(
              '/participant/responses',
              JSON.stringify({
                pollId: poll.pollId,
                participantId,
                answers: [{ slideId: poll.slideId, value: 'Because it is fast' }],
              }),
            )
            .then((status) => {
              if (status === 201) accepted.set(participantId, Date.now());
            }),
        );
      }
      await Promise.all(sends);
      const elapsed = (performance.now() - t0) / 1000;
      const used = cpu(count);
      const busyShare = busy();
      clearInterval(sampler);
      // Wait for the last window to end and the deliveries to arrive (30 s at most).
      for (let i = 0; i < 300; i++) {
        const c = await receiver.ask<{ unique: number }>({ cmd: 'count' });
        if (c.unique >= accepted.size * 2) break;
        await sleep(100);
      }
      const { events } = await receiver.ask<{ events: [string, number][] }>({ cmd: 'events' });
      const arrived = new Map(events);
      const complete: number[] = [];
      const part: number[] = [];
      let missing = 0;
      for (const [id, at] of accepted) {
        const c = arrived.get(`completed-survey:${id}`);
        const p = arrived.get(`submitted-responses:${id}`);
        if (c === undefined || p === undefined) missing++;
        if (c !== undefined) complete.push(c - at);
        if (p !== undefined) part.push(p - at - WINDOW_MS);
      }
      complete.sort((a, b) => a - b);
      part.sort((a, b) => a - b);
      // The first seconds fill the batch windows and warm the processes: growth is read after them.
      const settled = backlog.filter(([t]) => t >= Math.min(5, seconds / 3));
      const growth = slope(settled);
      return {
        rate,
        seconds,
        accepted: accepted.size / elapsed,
        backlogGrowthPerSecond: growth,
        backlogEnd: settled.at(-1)?.[1] ?? NaN,
        backlogMax: Math.max(0, ...settled.map((p) => p[1])),
        completeP50Ms: percentile(complete, 50),
        completeP99Ms: percentile(complete, 99),
        partialP50Ms: percentile(part, 50),
        partialP99Ms: percentile(part, 99),
        missing,
        cpu: used,
        busy: busyShare,
        steady: growth < rate * 0.01 && accepted.size / elapsed >= rate * 0.97 && missing === 0,
      };
    };

    // Unreported warm-up: the processes compile their code and open their connections.
    await step(Math.ceil(opts.rate / 2), 5);
    const target = await step(opts.rate, opts.seconds);
    const ladder: PipelineStep[] = [];
    let sustained = target.steady ? opts.rate : 0;
    for (const rate of opts.ladder) {
      const s = await step(rate, opts.stepSeconds);
      ladder.push(s);
      if (!s.steady) break;
      sustained = Math.max(sustained, rate);
    }
    return { windowMs: WINDOW_MS, target, ladder, sustained };
  } finally {
    load.close();
    await watch.end().catch(() => {});
    await stopCanvass(server);
    await stopCanvass(worker);
    rmSync(dataDir, { recursive: true, force: true });
    await fresh.drop().catch(() => {});
  }
}
