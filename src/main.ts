import { setTimeout as delay } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { seedDefaultAccount } from './app/accounts/seed-default-account.js';
import { startAdminSocket } from './http/admin-socket.js';
import { adminHandlers } from './admin-handlers.js';
import { listening, starting } from './start-up.js';
import { stopServing } from './stopping.js';
import { runOperatorCommand } from './admin-command.js';
import type { Clock, DeliverySettings, Deps } from './app/ports/index.js';
import { adminSocketPath, checkServePorts, metricsOpenBeyondLoopback, type Config } from './config/index.js';
import { buildApp, type App } from './http/app.js';
import { openDatabase, type Database } from './infra/db/database.js';
import { migrate } from './infra/db/migrate.js';
import { createSubmissionQueue } from './app/responses/submission-queue.js';
import { isStorageUnavailable } from './infra/db/unavailable.js';
import { createStore } from './infra/db/store.js';
import { sql } from 'kysely';
import { boundedResolver } from './infra/http-sender/bounded-resolver.js';
import { createH1Sender } from './infra/http-sender/h1-sender.js';
import { countWorkers, workerApplicationName } from './infra/db/worker-census.js';
import { startConnectionSharing } from './worker/connection-share.js';
import { startDeliveryRunner } from './worker/delivery-runner.js';
import {
  alertCheck,
  batchFlushTask,
  recoverTask,
  retentionTask,
  startScheduler,
  type SchedulerTask,
} from './worker/scheduler.js';
import { listenForDue } from './infra/db/due-listener.js';
import { outboxMailer, smtpMailer } from './infra/mail/mailer.js';
import { queueBacklog } from './infra/db/backlog.js';
import { clockSkew } from './infra/db/clock-skew.js';
import { clockCheckTask } from './worker/clock-check.js';
import { prometheusMetrics, type PrometheusMetrics } from './infra/metrics/prometheus.js';
import { startMetricsServer, type MetricsServer } from './infra/metrics/server.js';
import { useBatchScheduling, type Scheduling } from './infra/process/batch-scheduling.js';
import path from 'node:path';

/** The composition root: it builds the object graph for each process kind (operator commands: admin-command.ts). */

export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export const systemClock: Clock = { now: () => new Date() };

export type Runtime = {
  config: Config;
  database: Database;
  deps: Deps;
  logger: Logger;
  /** How endpoints' names resolve where private targets are refused (bounded-resolver.ts); the system's otherwise. */
  resolver?: ReturnType<typeof boundedResolver>;
  /** Settles when storage can no longer serve without a restart (the embedded database stopped). */
  stopped: Promise<Error>;
  close(): Promise<void>;
};

export function deliverySettings(config: Config): DeliverySettings {
  return {
    retryLadderMs: config.retryLadderMs,
    dnsRetryLadderMs: config.dnsRetryLadderMs,
    deliveryTimeoutMs: config.deliveryTimeoutMs,
    batchWindowMs: config.batchWindowMs,
    userAgent: `Canvass-Webhooks/${VERSION}`,
    secretOverlapMs: config.secretOverlapMs,
  };
}

export function createLogger(config: Config, destination: 1 | 2 = 1): Logger {
  const options = { level: config.logLevel, base: { service: 'canvass' } };
  // Someone at a terminal reads lines; files and log collectors get one JSON object per line.
  if ((destination === 1 ? process.stdout : process.stderr).isTTY)
    return pino(options, pretty({ destination, sync: true, ignore: 'pid,hostname,service' }));
  return pino(options, pino.destination({ fd: destination, sync: destination === 2 }));
}

/** The process's one metrics registry: what it did, and the queue's backlog read at each scrape. */
export function createMetrics(rt: Runtime): PrometheusMetrics {
  return prometheusMetrics({
    now: () => rt.deps.clock.now(),
    backlog: (now) => queueBacklog(rt.database.db, now),
  });
}

/** GET /metrics on CANVASS_METRICS_PORT, when it is set. */
async function metricsServer(rt: Runtime, metrics: PrometheusMetrics): Promise<MetricsServer | undefined> {
  if (rt.config.metricsPort === undefined) return undefined;
  return startMetricsServer({
    host: rt.config.host,
    port: rt.config.metricsPort,
    metrics,
    token: rt.config.metricsToken,
  });
}

export async function openRuntime(
  config: Config,
  opts: { schema?: 'apply' | 'check' | 'none'; logger?: Logger; clock?: Clock } = {},
): Promise<Runtime> {
  const logger = opts.logger ?? createLogger(config);
  let told!: (e: Error) => void;
  const stopped = new Promise<Error>((resolve) => (told = resolve));
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    dataDir: config.dataDir,
    schema: opts.schema,
    onStopped: (err) => {
      logger.fatal(
        { err },
        'the embedded database stopped: canvass stops; until it is restarted storage is unavailable (503) and a server’s /healthz answers 503',
      );
      told(err);
    },
  });
  // Given up after about 6 s per name server (2 s, then 4 s); a connection's own deadline ends a
  // delivery's attempt sooner if it comes first.
  const resolver = config.allowPrivateTargets ? undefined : boundedResolver({ timeoutMs: 2_000, tries: 2 });
  const deps: Deps = {
    store: createStore(database.db),
    clock: opts.clock ?? systemClock,
    urlPolicy: { allowPrivateTargets: config.allowPrivateTargets },
    delivery: deliverySettings(config),
    quotas: config.quotas,
    // Only asked where private targets are refused (check-target.ts).
    ...(resolver ? { resolveHost: async (host: string) => (await resolver(host)).map((a) => a.address) } : {}),
  };
  const close = async () => {
    resolver?.cancel();
    await database.close();
  };
  return { config, database, deps, logger, ...(resolver ? { resolver } : {}), stopped, close };
}

/** Brings the schema up to date; returns the migrations applied. */
export const applyMigrations = (rt: Runtime): Promise<string[]> => migrate(rt.database.db);

export async function buildHttp(rt: Runtime, metrics?: PrometheusMetrics): Promise<App> {
  let draining = false;
  const app = await buildApp({
    deps: rt.deps,
    // Respondents' submissions are grouped into shared transactions by this queue.
    submissions: createSubmissionQueue(rt.deps),
    logger: rt.logger,
    version: VERSION,
    rateLimitPerMinute: rt.config.rateLimitPerMinute,
    isUnavailable: isStorageUnavailable,
    metrics: metrics && { metrics, token: rt.config.metricsToken },
    alive: () => !rt.database.failure?.(),
    ready: async () => {
      if (draining) return false;
      // A database that answers but takes no writes (a standby after a failover) is not ready.
      const { rows } = await sql<{ ro: string }>`SELECT current_setting('transaction_read_only') AS ro`.execute(
        rt.database.db,
      );
      return rows[0]?.ro === 'off';
    },
  });
  app.addHook('preClose', async () => {
    draining = true;
  });
  return app;
}

export type Worker = { stop(): Promise<void>; wake(): void };

/**
 * The delivery runner and the scheduler over one runtime. stop() ends claiming, lets attempts
 * already sent finish and be recorded, then closes the sender's pools.
 */
export function startWorker(rt: Runtime, metrics?: PrometheusMetrics): Worker {
  const sender = createH1Sender({
    allowPrivateTargets: rt.config.allowPrivateTargets,
    connectionsPerOrigin: rt.config.endpointConnections,
    ...(rt.resolver ? { resolver: rt.resolver } : {}),
  });
  const mailer = rt.config.smtpUrl
    ? smtpMailer(rt.config.smtpUrl, rt.config.mailFrom)
    : outboxMailer(path.join(rt.config.dataDir, 'outbox'), rt.config.mailFrom);
  const deps: Deps = {
    ...rt.deps,
    sender,
    mailer,
    alerts: { quietMs: rt.config.alertQuietMs, reminderMs: rt.config.alertReminderMs },
  };
  const controller = new AbortController();
  const logger = rt.logger.child({ component: 'worker' });
  // Deliveries queued by other processes (API servers) wake the runner at once (migration 011).
  // On PostgreSQL the listening session is also this worker's presence: the workers sharing the
  // database divide the connections one endpoint origin may have (CANVASS_ENDPOINT_CONNECTIONS)
  // between them, and a new worker counts them before it sends; an embedded database has one
  // process, which keeps them all.
  const presenceName = workerApplicationName();
  const listener = rt.config.databaseUrl
    ? listenForDue(rt.config.databaseUrl, () => runner.wake(), {
        onError: (err) => logger.warn({ err }, 'listening for new deliveries failed; polling until it reconnects'),
        presence: { applicationName: presenceName, onWorkersChanged: () => sharing?.recount() },
        connectTimeoutMs: rt.config.dbConnectTimeoutMs,
      })
    : undefined;
  const sharing = listener
    ? startConnectionSharing({
        total: rt.config.endpointConnections,
        countWorkers: () => countWorkers(rt.database.db, presenceName),
        apply: (n) => sender.setConnectionsPerOrigin(n),
        observe: (workers, perOrigin) => metrics?.endpointConnectionsShared(workers, perOrigin),
        intervalMs: 10_000,
        signal: controller.signal,
        logger,
      })
    : undefined;
  if (!sharing) metrics?.endpointConnectionsShared(1, rt.config.endpointConnections);
  const runner = startDeliveryRunner(deps, controller.signal, {
    concurrency: rt.config.workerConcurrency,
    // Claims (and result writes) of up to 512: fewer statements per delivery than smaller ones;
    // larger ones gain nothing (docs/performance.md).
    claimBatch: Math.min(512, rt.config.workerConcurrency),
    idleMs: Math.min(200, rt.config.schedulerTickMs),
    drainMs: rt.config.deliveryTimeoutMs + 2_000,
    logger,
    metrics,
    // A count that hangs does not hold deliveries back for long.
    startAfter: sharing && Promise.race([sharing.firstCount, delay(2_000, undefined, { ref: false })]),
  });
  const scheduled = (tasks: SchedulerTask[]) =>
    startScheduler(deps, controller.signal, {
      tickMs: rt.config.schedulerTickMs,
      tasks,
      logger,
      metrics,
      onWork: () => runner.wake(),
    });
  // Batches on a loop of their own: it wakes as each window ends, and the other tasks keep to the
  // tick. Alert emails too: a slow or unreachable mail server holds up no recover.
  const schedulers = [
    scheduled([batchFlushTask(500, runner)]),
    scheduled([
      recoverTask(rt.config.recoverBatch),
      retentionTask(rt.config.retentionMs),
      clockCheckTask(() => clockSkew(rt.database.db)),
    ]),
  ];
  const alerting = scheduled([alertCheck()]);
  let stopping: Promise<void> | undefined;
  return {
    wake: () => runner.wake(),
    stop: () =>
      (stopping ??= (async () => {
        controller.abort();
        await Promise.all([runner.done, ...schedulers, sharing?.done]);
        // An email still on its way is waited for 2 s at most: unrecorded, it is sent again later.
        await Promise.race([alerting, delay(2_000, undefined, { ref: false })]);
        // The presence goes last: until its attempts are done, this worker keeps its share.
        await listener?.close();
        await sender.close();
        await mailer.close();
      })()),
  };
}

const metricsAddress = (config: Config) => `${config.host}:${config.metricsPort ?? ''}`;

/** `canvass worker`: deliveries and scheduled work only, any number of them beside the API. */
export async function runWorker(
  config: Config,
  opts: { open?: typeof openRuntime } = {},
): Promise<{ stop(): Promise<void>; stopped: Promise<Error> }> {
  const rt = await (opts.open ?? openRuntime)(config);
  const scheduling: Scheduling = config.workerBatchScheduling
    ? useBatchScheduling()
    : { policy: 'normal', reason: 'CANVASS_WORKER_BATCH_SCHEDULING is off' };
  const metrics = createMetrics(rt);
  // The metrics port is bound before the first claim: a worker that cannot start holds no delivery.
  const { scrape, worker } = await starting(rt, async (opened) => {
    const scrape = await listening('HOST, CANVASS_METRICS_PORT', metricsAddress(config), () =>
      metricsServer(rt, metrics),
    );
    if (scrape) opened(() => scrape.close());
    return { scrape, worker: startWorker(rt, metrics) };
  });
  rt.logger.info(
    {
      storage: rt.database.kind,
      concurrency: config.workerConcurrency,
      scheduling: scheduling.policy,
      ...(scheduling.policy !== 'batch' ? { schedulingNote: scheduling.reason } : {}),
      metrics: scrape?.url ?? null,
    },
    'canvass worker running',
  );
  warnIfMetricsOpen(rt, scrape?.url);
  return {
    stopped: rt.stopped,
    stop: async () => {
      await worker.stop();
      await scrape?.close();
      await rt.close();
      rt.logger.info('canvass worker stopped');
    },
  };
}

function warnIfMetricsOpen(rt: Runtime, url: string | undefined): void {
  if (url && metricsOpenBeyondLoopback(rt.config))
    rt.logger.warn(
      { metrics: url },
      'GET /metrics answers without a token on a non-loopback address: set CANVASS_METRICS_TOKEN, or keep the port off the public network',
    );
}

/** `canvass serve`: HTTP API (and, unless told otherwise, the worker) until a signal arrives. */
export async function serve(
  config: Config,
  opts: { worker: boolean; out?: (line: string) => void; open?: typeof openRuntime },
): Promise<{ stop(): Promise<void>; stopped: Promise<Error>; url: string }> {
  checkServePorts(config);
  const rt = await (opts.open ?? openRuntime)(config);
  const out = opts.out ?? ((line: string) => process.stdout.write(line + '\n'));
  const metrics = createMetrics(rt);
  let worker: Worker | undefined;
  const { app, url, admin, scrape } = await starting(rt, async (opened) => {
    const app = await buildHttp(rt, metrics);
    opened(() => app.close());
    if (opts.worker)
      app.addHook('onResponse', async (req) => {
        // Respondent submissions may have queued deliveries: look now rather than at the next poll.
        if (req.method === 'POST') worker?.wake();
      });
    const url = await listening('HOST, PORT', `${config.host}:${config.port}`, () =>
      app.listen({ port: config.port, host: config.host }),
    );
    const scrape = await listening('HOST, CANVASS_METRICS_PORT', metricsAddress(config), () =>
      metricsServer(rt, metrics),
    );
    if (scrape) opened(() => scrape.close());
    // The Default account is made once the ports are held, so a start refused for a port shows
    // no one-time key it then loses; and before operator commands arrive, which would make
    // another account first.
    if (rt.database.kind === 'pglite') {
      const seeded = await seedDefaultAccount(rt.deps);
      if (seeded) {
        out(`Canvass: created the Default account ${seeded.accountId} (plan premium), owner owner@localhost.`);
        out(`Owner API key, shown only this once: ${seeded.apiKey}`);
        rt.logger.info({ accountId: seeded.accountId }, 'seeded the Default account');
      }
    }
    // Embedded storage is this process's alone: operator commands reach it through a socket.
    const admin =
      rt.database.kind === 'pglite'
        ? await startAdminSocket(adminSocketPath(config), adminHandlers(rt.deps))
        : undefined;
    if (admin) opened(() => admin.close());
    if (opts.worker) worker = startWorker(rt, metrics);
    return { app, url, admin, scrape };
  });
  rt.logger.info(
    {
      url,
      storage: rt.database.kind,
      worker: opts.worker,
      concurrency: opts.worker ? config.workerConcurrency : null,
      metrics: scrape?.url ?? `${url}/metrics`,
    },
    'canvass serving',
  );
  if (!opts.worker && rt.database.kind === 'pglite')
    rt.logger.warn(
      'serving without a worker on embedded storage: no other process can open its data directory, so webhooks and alert emails wait until canvass serve runs with its worker',
    );
  warnIfMetricsOpen(rt, scrape?.url ?? `${url}/metrics`);
  let stopping: Promise<void> | undefined;
  return {
    url,
    stopped: rt.stopped,
    stop: () => (stopping ??= stopServing(rt, { app, admin, worker, scrape }, config.deliveryTimeoutMs)),
  };
}

export { adminHandlers } from './admin-handlers.js';
export { adminSocketPath } from './config/index.js';

/**
 * Runs an operator command on the storage the configuration names. When a running server holds
 * the embedded data directory, the command goes to that server through its admin socket.
 */
export const runAdminCommand = (config: Config, command: string, args: Record<string, unknown>, logger: Logger) =>
  runOperatorCommand((cfg) => openRuntime(cfg, { logger }), config, command, args);
