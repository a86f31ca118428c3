import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Metrics } from '../app/ports/metrics.js';
import type { SubmissionQueue } from '../app/responses/submission-queue.js';
import { bearerMatches } from '../domain/bearer.js';
import { DomainError } from '../domain/errors.js';

export type MetricsOptions = {
  metrics: Metrics;
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token?: string;
};

/**
 * Counts every answered request by its route's pattern (`unmatched` for a request no route
 * matched, so probes of random paths make no new series), and serves `GET /metrics`: outside the
 * API's context, so neither API keys nor rate limits apply, and hidden from the OpenAPI document.
 */
export function registerMetrics(app: FastifyInstance, opts: MetricsOptions): void {
  const { metrics, token } = opts;
  app.addHook('onResponse', (req, reply, done) => {
    metrics.httpRequest(req.method, routeLabel(req, reply.statusCode), reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { schema: { hide: true } }, async (req, reply) => {
    if (token !== undefined && !bearerMatches(req.headers.authorization, token)) {
      void reply.header('www-authenticate', 'Bearer realm="metrics"');
      throw new DomainError('unauthenticated', 'send Authorization: Bearer <CANVASS_METRICS_TOKEN>');
    }
    const { contentType, body } = await metrics.exposition();
    return reply.type(contentType).send(body);
  });
}

/**
 * A request's route pattern; a dashboard page opened by its own path (`/app/polls/…`), which no
 * route matches but the dashboard answers with its page, is `/app/*`.
 */
function routeLabel(req: FastifyRequest, status: number): string {
  if (req.routeOptions.url) return req.routeOptions.url;
  return status !== 404 && req.url.startsWith('/app/') ? '/app/*' : 'unmatched';
}

/** The submission queue, counting each submission it accepts. */
export const countingSubmissions = (queue: SubmissionQueue, metrics: Metrics): SubmissionQueue => ({
  async submit(caller, input, bytes) {
    const r = await queue.submit(caller, input, bytes);
    metrics.submissionAccepted();
    return r;
  },
});
