import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushDueBatches } from '../../src/app/delivery/flush-batches.js';
import type { Deps } from '../../src/app/ports/index.js';
import type { App } from '../../src/http/app.js';
import { queueBacklog } from '../../src/infra/db/backlog.js';
import { outboxMailer } from '../../src/infra/mail/mailer.js';
import { prometheusMetrics, type PrometheusMetrics } from '../../src/infra/metrics/prometheus.js';
import { alertCheck, startScheduler } from '../../src/worker/scheduler.js';
import { bearer, harness, testApp, type Harness, type TestAccount } from '../support/app.js';
import { until } from '../support/e2e.js';
import { holdTransaction } from '../support/hold.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import { freePort, processStorage, spawnCanvass, type Env } from '../support/processes.js';
import { startReceiver } from '../support/receiver.js';
import { startTestWorker } from '../support/worker.js';

/**
 * Metrics and the operator's log lines, with real parts: deliveries to a real HTTPS receiver by
 * the real runner, scraped from GET /metrics and compared with what the delivery log shows;
 * warn lines captured from the logger the worker writes to; `canvass worker`'s own metrics port.
 */

const TOKEN = 'scrape-token-7f3a-c2d9';

type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of a Prometheus text exposition. */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample with this name and (at least) these labels; 0 when there is none. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value ?? 0;
}

async function scrape(app: App, token: string | null = TOKEN): Promise<Sample[]> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers: token ? bearer(token) : {} });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(res.body);
}

type LogLine = { level: number; msg: string } & Record<string, unknown>;

/** A logger whose JSON lines land in `lines`, as the worker's would on stdout. */
function capturedLogger() {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as LogLine);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

type DeliveryRow = { id: string; status: string; attemptCount: number };
type Detail = DeliveryRow & { attempts: { number: number; statusCode: number | null }[] };

describe('metrics and warn lines after a delivery run', () => {
  let h: Harness;
  let hm: Harness;
  let acct: TestAccount;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let worker: ReturnType<typeof startTestWorker>;
  let metrics: PrometheusMetrics;
  let api: App;
  const log = capturedLogger();
  const hooks: Record<'ok' | 'gone' | 'down', string> = { ok: '', gone: '', down: '' };
  const outbox = mkdtempSync(path.join(os.tmpdir(), 'canvass-metrics-outbox-'));

  beforeAll(async () => {
    h = await harness({
      allowPrivateTargets: true,
      delivery: { batchWindowMs: 0, retryLadderMs: [20, 20, 20, 20, 20] },
    });
    h.clock.ms = Date.now();
    // A real clock: leases, retry times and the receiver all run in wall time.
    h.deps.clock = { now: () => new Date() };
    metrics = prometheusMetrics({ now: () => h.deps.clock.now(), backlog: (now) => queueBacklog(h.database.db, now) });
    api = await testApp({ deps: h.deps, logger: false, metrics: { metrics, token: TOKEN } });
    await api.ready();
    // The fixtures talk to the app that counts.
    hm = { ...h, app: api };
    acct = await h.account();
    receiver = await startReceiver();
    receiver.script('/gone', [{ status: 410 }]);
    receiver.script('/down', [{ status: 503 }]);
    worker = startTestWorker(h.deps, { logger: log.logger, metrics });
  });
  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    await api?.close();
    await h?.close();
    rmSync(outbox, { recursive: true, force: true });
  });

  const get = async <T>(url: string): Promise<T> => {
    const res = await api.inject({ method: 'GET', url, headers: bearer(acct.key) });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: T }).data;
  };
  const deliveriesOf = (webhookId: string) => get<DeliveryRow[]>(`/webhooks/deliveries?webhookId=${webhookId}`);

  it('counts what the delivery log shows: 3 delivered, 1 rejected, 1 given up, and every attempt by outcome', async () => {
    const answers: Record<keyof typeof hooks, number> = { ok: 3, gone: 1, down: 1 };
    for (const [name, n] of Object.entries(answers) as [keyof typeof hooks, number][]) {
      const poll = await visiblePoll(hm, acct);
      // A token in the query string: the log lines must show the origin only.
      const url = receiver.url(`/${name}`) + (name === 'down' ? '?token=hush-secret' : '');
      hooks[name] = (await createWebhook(hm, acct, poll.pollId, url)).data.id;
      for (let i = 0; i < n; i++)
        await answer(hm, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: `${i}` }] });
    }
    const finished = (rows: DeliveryRow[], n: number, status: string) =>
      rows.length === n && rows.every((d) => d.status === status);
    await until(
      'every delivery finished',
      async () =>
        finished(await deliveriesOf(hooks.ok), 3, 'delivered') &&
        finished(await deliveriesOf(hooks.gone), 1, 'rejected') &&
        finished(await deliveriesOf(hooks.down), 1, 'given_up'),
      15_000,
      50,
    );
    // The delivery log: each delivery's attempts; all but a finished delivery's last one were retries.
    const details: (Detail & { hook: string })[] = [];
    for (const [hook, id] of Object.entries(hooks))
      for (const d of await deliveriesOf(id))
        details.push({ ...(await get<Detail>(`/webhooks/delivery?deliveryId=${d.id}`)), hook });
    const logged = {
      delivered: details.filter((d) => d.status === 'delivered').length,
      rejected: details.filter((d) => d.status === 'rejected').length,
      given_up: details.filter((d) => d.status === 'given_up').length,
      retry: details.reduce((n, d) => n + d.attempts.length - 1, 0),
      attempts: details.reduce((n, d) => n + d.attempts.length, 0),
    };
    expect(logged).toEqual({ delivered: 3, rejected: 1, given_up: 1, retry: 5, attempts: 10 });

    const s = await scrape(api);
    for (const outcome of ['delivered', 'retry', 'rejected', 'given_up'] as const)
      expect(value(s, 'canvass_delivery_attempts_total', { outcome }), outcome).toBe(logged[outcome]);
    expect(value(s, 'canvass_delivery_attempts_total', { outcome: 'lease_lost' })).toBe(0);
    for (const status of ['delivered', 'rejected', 'given_up'] as const)
      expect(value(s, 'canvass_deliveries_finished_total', { status }), status).toBe(logged[status]);
    expect(value(s, 'canvass_delivery_attempt_duration_seconds_count')).toBe(logged.attempts);
    expect(value(s, 'canvass_delivery_attempt_duration_seconds_bucket', { le: '+Inf' })).toBe(logged.attempts);
    expect(value(s, 'canvass_submissions_total')).toBe(5);
    expect(value(s, 'canvass_deliveries_due')).toBe(0);
    expect(value(s, 'canvass_delivery_oldest_due_seconds')).toBe(0);
    // Requests by route pattern and status: the query string never makes a label.
    expect(
      value(s, 'canvass_http_requests_total', { method: 'POST', route: '/participant/responses', status: '201' }),
    ).toBe(5);
    expect(
      value(s, 'canvass_http_requests_total', { method: 'GET', route: '/webhooks/deliveries', status: '200' }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      value(s, 'canvass_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/participant/responses',
        status: '201',
      }),
    ).toBe(5);
    expect(s.filter((x) => Object.values(x.labels).some((v) => v.includes('?')))).toEqual([]);
    expect(value(s, 'process_cpu_seconds_total')).toBeGreaterThan(0);

    // One warn line per delivery that ended badly, naming it, its webhook, the origin and the last error.
    await until(
      'two warn lines',
      () => log.lines.filter((l) => l.level === 40 && /^delivery (rejected|given up)$/.test(l.msg)).length >= 2,
      5_000,
      20,
    );
    const warns = log.lines.filter((l) => l.level === 40 && /^delivery (rejected|given up)$/.test(l.msg));
    const givenUp = details.find((d) => d.status === 'given_up')!;
    const rejected = details.find((d) => d.status === 'rejected')!;
    const origin = `https://127.0.0.1:${receiver.port}`;
    expect(warns).toHaveLength(2);
    expect(warns.find((l) => l.msg === 'delivery given up')).toMatchObject({
      deliveryId: givenUp.id,
      webhookId: hooks.down,
      endpoint: origin,
      attempt: 6,
      lastError: 'HTTP 503',
    });
    expect(warns.find((l) => l.msg === 'delivery rejected')).toMatchObject({
      deliveryId: rejected.id,
      webhookId: hooks.gone,
      endpoint: origin,
      attempt: 1,
      lastError: 'HTTP 410',
    });
    expect(JSON.stringify(log.lines)).not.toContain('hush-secret');
    expect(JSON.stringify(warns)).not.toContain('/down');
  });

  it('logs a warn line for each alert email, counts it, and the email states the configured times', async () => {
    const deps: Deps = {
      ...worker.deps,
      mailer: outboxMailer(outbox, 'Canvass <alerts@localhost>'),
      alerts: { quietMs: 1_000, reminderMs: 3_600_000 },
    };
    const controller = new AbortController();
    const scheduler = startScheduler(deps, controller.signal, {
      tickMs: 20,
      tasks: [alertCheck()],
      logger: log.logger,
      metrics,
    });
    try {
      // The rejected and the given-up endpoints both failed; the healthy one is not emailed.
      await until(
        'two alert warn lines',
        () => log.lines.filter((l) => l.msg === 'alert email sent').length >= 2,
        10_000,
        20,
      );
    } finally {
      controller.abort();
      await scheduler;
    }
    const alerts = log.lines.filter((l) => l.msg === 'alert email sent');
    expect(alerts).toHaveLength(2);
    expect(alerts.every((l) => l.level === 40)).toBe(true);
    expect(alerts.find((l) => l.webhookId === hooks.down)).toMatchObject({
      endpoint: `https://127.0.0.1:${receiver.port}`,
      recipients: 1,
      kind: 'first',
      sequence: 1,
    });
    expect(alerts.find((l) => l.webhookId === hooks.gone)).toMatchObject({ recipients: 1, kind: 'first' });
    expect(JSON.stringify(alerts)).not.toContain('hush-secret');

    const s = await scrape(api);
    expect(value(s, 'canvass_alert_emails_total', { kind: 'first' })).toBe(2);
    expect(value(s, 'canvass_alert_emails_total', { kind: 'reminder' })).toBe(0);

    const stored = await get<{ webhookId: string; text: string }[]>(`/alerts?accountId=${acct.accountId}`);
    const text = stored.find((a) => a.webhookId === hooks.down)!.text;
    expect(text).toContain('no successful delivery for 1 second or more');
    expect(text).toContain('a reminder every 1 hour');
    expect(text).toContain('within 10 seconds');
  });

  it('asks for the bearer token when one is set: 401 problem without it or with another, 200 with it', async () => {
    for (const headers of [{}, bearer('not-the-token'), { authorization: TOKEN }]) {
      const res = await api.inject({ method: 'GET', url: '/metrics', headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.json()).toMatchObject({ status: 401, code: 'unauthenticated' });
      expect(res.body).not.toContain('canvass_');
    }
    expect(value(await scrape(api), 'canvass_submissions_total')).toBe(5);
    // Not part of the API's documentation.
    const doc = (await api.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: object };
    expect(Object.keys(doc.paths)).not.toContain('/metrics');
  });

  it('counts a request whose path is not valid percent-encoding, answered before any route, as unmatched', async () => {
    const own = prometheusMetrics({ now: () => new Date() });
    const app = await testApp({ deps: h.deps, logger: false, metrics: { metrics: own } });
    try {
      expect((await app.inject({ method: 'GET', url: '/po%zzll' })).statusCode).toBe(400);
      const s = await scrape(app, null);
      expect(value(s, 'canvass_http_requests_total', { method: 'GET', route: 'unmatched', status: '400' })).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('counts a dashboard page opened by its own path as /app/*, and a missing dashboard file as unmatched', async () => {
    const own = prometheusMetrics({ now: () => new Date() });
    const app = await testApp({ deps: h.deps, logger: false, metrics: { metrics: own } });
    try {
      // The page (200), or "not built" (503) where the dashboard was not built.
      const page = (await app.inject({ method: 'GET', url: '/app/polls/poll_123' })).statusCode;
      expect([200, 503]).toContain(page);
      expect((await app.inject({ method: 'GET', url: '/app/assets/gone.js' })).statusCode).toBe(404);
      const s = await scrape(app, null);
      expect(value(s, 'canvass_http_requests_total', { method: 'GET', route: '/app/*', status: String(page) })).toBe(1);
      expect(value(s, 'canvass_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('is open without a token and not rate-limited, each app with a registry of its own', async () => {
    const own = prometheusMetrics({ now: () => new Date() });
    const limited = await testApp({ deps: h.deps, logger: false, rateLimitPerMinute: 1, metrics: { metrics: own } });
    try {
      // The API on this app is limited to one request a minute per address...
      const refused = [];
      for (let i = 0; i < 2; i++) refused.push((await limited.inject({ method: 'GET', url: '/webhooks' })).statusCode);
      expect(refused).toEqual([401, 429]);
      // ...while scrapes are not.
      for (let i = 0; i < 5; i++) await scrape(limited, null);
      const s = await scrape(limited, null);
      // A request is counted once answered: the five scrapes before this one.
      expect(value(s, 'canvass_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(5);
      expect(value(s, 'canvass_delivery_attempts_total', { outcome: 'delivered' })).toBe(0);
      expect(s.some((x) => x.name === 'canvass_deliveries_due')).toBe(false);
    } finally {
      await limited.close();
    }
  });

  it('counts an attempt whose delivery a deletion cancelled while it was out as cancelled, not lease_lost', async () => {
    let reply!: () => void;
    receiver.script('/slow', [{ status: 200, until: new Promise<void>((r) => (reply = r)) }]);
    const poll = await visiblePoll(hm, acct);
    const hook = (await createWebhook(hm, acct, poll.pollId, receiver.url('/slow'))).data.id;
    const before = await scrape(api);
    await answer(hm, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'slow' }] });
    await receiver.waitFor((r) => r.some((x) => x.path === '/slow'));
    const del = await api.inject({ method: 'DELETE', url: `/webhooks?id=${hook}`, headers: bearer(acct.key) });
    expect(del.statusCode, del.body).toBe(200);
    reply();
    const counted = (s: Sample[], outcome: string) =>
      value(s, 'canvass_delivery_attempts_total', { outcome }) -
      value(before, 'canvass_delivery_attempts_total', { outcome });
    await until('the attempt recorded', async () => counted(await scrape(api), 'cancelled') >= 1, 10_000, 50);
    const s = await scrape(api);
    expect(counted(s, 'cancelled')).toBe(1);
    expect(counted(s, 'lease_lost')).toBe(0);
    expect(counted(s, 'delivered')).toBe(0);
  });
});

describe('the backlog gauges', () => {
  let h: Harness;
  let api: App;

  beforeAll(async () => {
    h = await harness({ allowPrivateTargets: true, delivery: { batchWindowMs: 0 } });
    const metrics = prometheusMetrics({
      now: () => h.clock.now(),
      backlog: (now) => queueBacklog(h.database.db, now),
    });
    api = await testApp({ deps: h.deps, logger: false, metrics: { metrics } });
    await api.ready();
  });
  afterAll(async () => {
    await api?.close();
    await h?.close();
  });

  it('show the deliveries due and how long the oldest has waited; a paused webhook’s parked ones are not due', async () => {
    const hm = { ...h, app: api };
    const acct = await h.account();
    const poll = await visiblePoll(hm, acct);
    await createWebhook(hm, acct, poll.pollId, 'https://127.0.0.1:9/a');
    const b = await createWebhook(hm, acct, poll.pollId, 'https://127.0.0.1:9/b');
    for (const v of ['one', 'two'])
      await answer(hm, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: v }] });
    // No worker runs: any batches become deliveries, due now, and wait.
    await flushDueBatches(h.deps);
    let s = await scrape(api, null);
    expect(value(s, 'canvass_deliveries_due')).toBe(4);
    expect(value(s, 'canvass_delivery_oldest_due_seconds')).toBe(0);

    h.clock.advance(90_000);
    s = await scrape(api, null);
    expect(value(s, 'canvass_deliveries_due')).toBe(4);
    expect(value(s, 'canvass_delivery_oldest_due_seconds')).toBe(90);
    // Counted up to a cap, so that a scrape's work stays bounded; the oldest is still found.
    const capped = await queueBacklog(h.database.db, h.clock.now(), 3);
    expect(capped.due).toBe(3);
    expect(h.clock.now().getTime() - capped.oldestDueAt!.getTime()).toBe(90_000);

    const paused = await api.inject({
      method: 'POST',
      url: '/webhooks/update',
      headers: bearer(acct.key),
      payload: { webhookId: b.data.id, paused: true },
    });
    expect(paused.statusCode, paused.body).toBe(200);
    s = await scrape(api, null);
    expect(value(s, 'canvass_deliveries_due')).toBe(2);
    expect(value(s, 'canvass_delivery_oldest_due_seconds')).toBe(90);
  });

  it('read NaN when the database does not answer in time, and the scrape still carries every other metric', async () => {
    // A transaction holding the queue (embedded: its one connection; PostgreSQL: the table's lock).
    const hold = await holdTransaction(h.database.db, (trx) =>
      sql`LOCK TABLE delivery_queue IN ACCESS EXCLUSIVE MODE`.execute(trx),
    );
    try {
      const s = await scrape(api, null);
      expect(value(s, 'canvass_deliveries_due')).toBeNaN();
      expect(value(s, 'canvass_delivery_oldest_due_seconds')).toBeNaN();
      expect(value(s, 'process_cpu_seconds_total')).toBeGreaterThan(0);
      expect(s.some((x) => x.name === 'canvass_delivery_attempts_total')).toBe(true);
    } finally {
      await hold.release();
    }
    expect(value(await scrape(api, null), 'canvass_deliveries_due')).toBe(2);
  });
});

describe('canvass worker: its metrics port', () => {
  let storage: Awaited<ReturnType<typeof processStorage>> | undefined;
  afterAll(async () => {
    await storage?.drop();
  });

  it('serves GET /metrics on CANVASS_METRICS_PORT behind the token, logs its start and its drain', async () => {
    const env: Env = {
      HOST: '127.0.0.1',
      CANVASS_METRICS_PORT: String(await freePort()),
      CANVASS_METRICS_TOKEN: TOKEN,
      CANVASS_WORKER_CONCURRENCY: '64',
      LOG_LEVEL: 'info',
    };
    // A fresh PostgreSQL database on the PostgreSQL pass, else an embedded directory of its own.
    storage = await processStorage(env, 'metrics');
    const proc = spawnCanvass('canvass worker', ['worker'], env);
    try {
      await proc.waitForOutput(/canvass worker running/, 60_000);
      const started = proc
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine)
        .find((l) => l.msg === 'canvass worker running')!;
      const url = `http://127.0.0.1:${env.CANVASS_METRICS_PORT}/metrics`;
      expect(started).toMatchObject({ level: 30, concurrency: 64, metrics: url });
      expect(['pglite', 'postgres']).toContain(started.storage);
      // Behind a token on loopback: no warning that the metrics are open.
      expect(proc.output()).not.toMatch(/GET \/metrics answers without a token/);

      const open = await fetch(url);
      expect(open.status).toBe(401);
      expect(open.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await open.json()).toMatchObject({ status: 401, code: 'unauthenticated' });
      expect((await fetch(url.replace('/metrics', '/other'), { headers: bearer(TOKEN) })).status).toBe(404);

      const res = await fetch(url, { headers: bearer(TOKEN) });
      expect(res.status).toBe(200);
      const s = parse(await res.text());
      expect(value(s, 'canvass_deliveries_due')).toBe(0);
      expect(value(s, 'canvass_delivery_oldest_due_seconds')).toBe(0);
      expect(s.some((x) => x.name === 'canvass_delivery_attempts_total' && x.labels.outcome === 'given_up')).toBe(true);
      expect(value(s, 'process_cpu_seconds_total')).toBeGreaterThan(0);
      expect(s.some((x) => x.name === 'canvass_http_requests_total')).toBe(false);
    } finally {
      expect(await proc.stop(), proc.output()).toEqual({ code: 0, signal: null });
    }
    expect(proc.output()).toMatch(/"msg":"delivery runner drained"/);
    expect(proc.output()).toMatch(/"msg":"canvass worker stopped"/);
    // A fresh embedded directory is migrated at start, which takes a while on a busy machine.
  }, 120_000);

  it('warns at start when it serves GET /metrics beyond loopback without a token', async () => {
    const env: Env = {
      HOST: '0.0.0.0',
      CANVASS_METRICS_PORT: String(await freePort()),
      CANVASS_WORKER_CONCURRENCY: '8',
      LOG_LEVEL: 'info',
    };
    const open = await processStorage(env, 'metrics-open');
    const proc = spawnCanvass('canvass worker', ['worker'], env);
    try {
      // Logged just after the start line, which may reach the pipe in a chunk of its own.
      await proc.waitForOutput(/GET \/metrics answers without a token/, 60_000);
      const warned = proc
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as LogLine)
        .find((l) => /GET \/metrics answers without a token/.test(String(l.msg)));
      expect(warned, proc.output()).toMatchObject({ level: 40 });
    } finally {
      expect(await proc.stop(), proc.output()).toEqual({ code: 0, signal: null });
      await open.drop();
    }
  }, 120_000);
});
