import { setTimeout as delay } from 'node:timers/promises';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AlertEmailLabel, AttemptOutcomeLabel, AttemptTally, Metrics } from '../../app/ports/metrics.js';

/** The unfinished deliveries a worker may claim now, and since when the oldest of them has been due. */
export type Backlog = { due: number; oldestDueAt: Date | null };

export type PrometheusMetrics = Metrics & { registry: Registry };

const OUTCOMES: readonly AttemptOutcomeLabel[] = [
  'delivered',
  'retry',
  'rejected',
  'given_up',
  'cancelled',
  'lease_lost',
];
const FINISHED = ['delivered', 'rejected', 'given_up'] as const;
const ALERT_EMAIL_LABELS: readonly AlertEmailLabel[] = ['first', 'reminder', 'deferred'];

/**
 * The process's metrics in a registry of its own (docs/operations.md lists them). Counters are
 * bumped once per recorded batch, not per attempt; the backlog is read from storage at scrape
 * time only, one query for both of its gauges.
 */
export function prometheusMetrics(opts: {
  now: () => Date;
  backlog?: (now: Date) => Promise<Backlog>;
  /** How long a scrape waits for the backlog query before its gauges read NaN (2 s). */
  backlogWaitMs?: number;
}): PrometheusMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const attempts = new Counter({
    name: 'canvass_delivery_attempts_total',
    help: 'Delivery attempts recorded, by what they came to: delivered, retry, rejected, given_up, cancelled (a deletion cancelled the delivery while the attempt was out), or lease_lost (another worker had taken the delivery over)',
    labelNames: ['outcome'],
    registers,
  });
  const attemptSeconds = new Histogram({
    name: 'canvass_delivery_attempt_duration_seconds',
    help: "How long an attempt took, from its write (or its connection's opening) to the answer or the failure",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  const finished = new Counter({
    name: 'canvass_deliveries_finished_total',
    help: 'Deliveries this process finished, by final status: delivered, rejected, given_up',
    labelNames: ['status'],
    registers,
  });
  const givenBack = new Counter({
    name: 'canvass_delivery_attempts_given_back_total',
    help: "Attempts never written, given back unsent: every connection to their endpoint's origin stayed busy, answering others, for a whole deadline",
    registers,
  });
  const unprepared = new Counter({
    name: 'canvass_delivery_attempts_unprepared_total',
    help: "Attempts that could not be prepared, never written, given back uncounted: their account's first signing secret could not be made",
    registers,
  });
  const alertEmails = new Counter({
    name: 'canvass_alert_emails_total',
    help: 'Failure alert emails sent, by kind: first, reminder, or deferred (sent again to recipients the mail server deferred)',
    labelNames: ['kind'],
    registers,
  });
  const submissions = new Counter({
    name: 'canvass_submissions_total',
    help: 'Respondent submissions accepted (answered 201)',
    registers,
  });
  const httpRequests = new Counter({
    name: 'canvass_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'],
    registers,
  });
  const httpSeconds = new Histogram({
    name: 'canvass_http_request_duration_seconds',
    help: 'HTTP request durations, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  // Every series exists from the start, so rate() and increase() see the first event too.
  for (const o of OUTCOMES) attempts.inc({ outcome: o }, 0);
  for (const s of FINISHED) finished.inc({ status: s }, 0);
  for (const k of ALERT_EMAIL_LABELS) alertEmails.inc({ kind: k }, 0);

  // Made at a worker's first count, so a process without a worker (serve --no-worker) has neither.
  let sharing: { workers: Gauge; perOrigin: Gauge } | undefined;

  const backlog = opts.backlog;
  if (backlog) {
    // Both gauges are collected in the same scrape: they share one query in flight. A database
    // that does not answer (packets dropped, the pool's connections stuck) makes them NaN after
    // a short wait, rather than making the scrape time out and lose every other metric; the
    // query still out serves the next scrapes until it settles, so they never pile up.
    let reading: Promise<Backlog | undefined> | undefined;
    const waitMs = opts.backlogWaitMs ?? 2_000;
    const read = () => {
      reading ??= backlog(opts.now())
        .catch(() => undefined)
        .finally(() => (reading = undefined));
      return Promise.race([reading, delay(waitMs, undefined, { ref: false })]);
    };
    new Gauge({
      name: 'canvass_deliveries_due',
      help: 'Unfinished deliveries due now and not leased by a worker (parked ones of paused webhooks excluded)',
      registers,
      async collect() {
        const b = await read();
        // Storage unreachable: NaN rather than a made-up zero.
        this.set(b ? b.due : Number.NaN);
      },
    });
    new Gauge({
      name: 'canvass_delivery_oldest_due_seconds',
      help: 'How long the oldest due delivery has been waiting to be claimed (0 when none is due)',
      registers,
      async collect() {
        const b = await read();
        this.set(
          b ? (b.oldestDueAt ? Math.max(0, (opts.now().getTime() - b.oldestDueAt.getTime()) / 1000) : 0) : Number.NaN,
        );
      },
    });
  }

  return {
    registry,
    attemptsRecorded(tally: Readonly<AttemptTally>, durationsMs: readonly number[]) {
      for (const o of OUTCOMES) if (tally[o] > 0) attempts.inc({ outcome: o }, tally[o]);
      for (const s of FINISHED) if (tally[s] > 0) finished.inc({ status: s }, tally[s]);
      for (const ms of durationsMs) attemptSeconds.observe(ms / 1000);
    },
    attemptGivenBack() {
      givenBack.inc();
    },
    attemptUnprepared() {
      unprepared.inc();
    },
    alertEmailSent(kind) {
      alertEmails.inc({ kind });
    },
    endpointConnectionsShared(workers, perOrigin) {
      sharing ??= {
        workers: new Gauge({
          name: 'canvass_workers',
          help: 'Worker processes delivering from this database as this worker last counted them, itself included',
          registers,
        }),
        perOrigin: new Gauge({
          name: 'canvass_endpoint_connections_per_origin',
          help: "This worker's share of the connections to one endpoint origin (CANVASS_ENDPOINT_CONNECTIONS divided among the workers)",
          registers,
        }),
      };
      sharing.workers.set(workers);
      sharing.perOrigin.set(perOrigin);
    },
    submissionAccepted() {
      submissions.inc();
    },
    httpRequest(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      httpRequests.inc(labels);
      httpSeconds.observe(labels, seconds);
    },
    async exposition() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
