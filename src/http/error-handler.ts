import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type FieldError } from '../domain/errors.js';
import { CommitOutcomeUnknownError } from '../app/ports/commit-outcome-unknown.js';
import { internalProblem, problem, type Problem } from './problem.js';

type AjvError = { instancePath: string; keyword: string; message?: string; params: Record<string, unknown> };

function ajvPaths(errors: AjvError[], context: string | undefined): FieldError[] {
  const base = context === 'querystring' ? 'query:' : context === 'headers' ? 'header:' : '';
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of errors) {
    let path = e.instancePath || '';
    let message = e.message ?? 'is not valid';
    if (e.keyword === 'required') path += `/${String(e.params.missingProperty)}`;
    if (e.keyword === 'additionalProperties') path += `/${String(e.params.additionalProperty)}`;
    // additionalProperties: {not: {}} reports on the extra key itself.
    if (e.keyword === 'not') message = 'is not a known field';
    if (e.keyword === 'required') message = 'is required';
    const key = `${path}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path: base + (path || '/'), message });
  }
  return out.slice(0, 50);
}

/** Maps fastify's own client errors to problems; anything unknown becomes a logged 500. */
function fromFastify(err: FastifyError): Problem | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem('payload_too_large', 'the request body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problem('unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problem('validation_failed', 'the body is empty; send a JSON object', [
        { path: '/', message: 'body is empty' },
      ]);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problem('validation_failed', 'the Content-Length header does not match the body', [
        { path: 'header:content-length', message: 'does not match the body' },
      ]);
  }
  if (
    err instanceof SyntaxError ||
    err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
    (/JSON|prototype/i.test(err.message) && err.statusCode === 400)
  ) {
    return problem('validation_failed', 'the body is not valid JSON', [{ path: '/', message: 'not valid JSON' }]);
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    if (err.statusCode === 413) return problem('payload_too_large', err.message);
    if (err.statusCode === 415) return problem('unsupported_media_type', err.message);
    if (err.statusCode === 404) return problem('not_found', err.message);
    return problem('validation_failed', err.message, [{ path: '/', message: err.message }]);
  }
  return undefined;
}

/**
 * Fastify's errors before a route is found (its `frameworkErrors` option), as problems like the
 * rest: FST_ERR_BAD_URL is a path that is not valid percent-encoding. The path is not echoed.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  let body: Problem;
  if (err.code === 'FST_ERR_BAD_URL') {
    body = problem('validation_failed', 'the request path is not valid percent-encoding', [
      { path: 'url', message: 'is not valid percent-encoding' },
    ]);
  } else {
    req.log.error({ err }, 'unhandled error');
    body = internalProblem();
  }
  // Sent before any hook runs: the headers every answer carries are set here.
  void reply
    .status(body.status)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .type('application/problem+json')
    .send(body);
}

/** Tells outages of a dependency (storage) apart from bugs: those answer 503, not 500. */
export type UnavailableCheck = (err: unknown) => boolean;

/**
 * Refusals under overload or an outage come by the thousand a second: one warning a second of
 * each kind says so, with how many were refused since the last. (The 503 answers themselves are
 * not logged one by one: app.ts.)
 */
const refusals = new Map<string, { lastLogged: number; since: number }>();
function logRefusal(req: FastifyRequest, msg: 'unavailable' | 'storage unavailable', detail: string): void {
  const r = refusals.get(msg) ?? { lastLogged: 0, since: 0 };
  r.since++;
  const now = Date.now();
  if (now - r.lastLogged >= 1000) {
    req.log.warn({ detail, refused: r.since }, msg);
    r.lastLogged = now;
    r.since = 0;
  }
  refusals.set(msg, r);
}

/**
 * A request that reaches a closing server (pipelined behind another, or on a kept-alive
 * connection) is refused as any outage is: a 503 problem with Retry-After, and Fastify closes
 * the connection behind it, so the client sends it again elsewhere.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  // The probes answer for themselves: liveness while the process runs, readiness its own 503.
  const probes = new Set(['/healthz', '/readyz']);
  app.addHook('onRequest', (req, reply, done) => {
    if (!closing || probes.has(req.routeOptions.url ?? '')) return done();
    logRefusal(req, 'unavailable', 'the server is shutting down');
    void reply
      .status(503)
      .header('retry-after', '1')
      .type('application/problem+json')
      .send(problem('unavailable', 'the server is shutting down; send the request again'));
  });
}

export function registerErrorHandling(app: FastifyInstance, isUnavailable: UnavailableCheck = () => false): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    let body: Problem | undefined;
    if (err instanceof DomainError) body = problem(err.code, err.message, err.errors);
    else if (err.validation) {
      const errors = ajvPaths(err.validation as AjvError[], err.validationContext);
      body = problem(
        'validation_failed',
        errors
          .map((e) => `${e.path} ${e.message}`)
          .join('; ')
          .slice(0, 1000),
        errors,
      );
    } else if (err instanceof RangeError && /call stack/i.test(err.message)) {
      body = problem('validation_failed', 'the body is nested too deeply', [
        { path: '/', message: 'nested too deeply' },
      ]);
    } else if (err instanceof CommitOutcomeUnknownError) {
      // No Retry-After: sent again, a write that did commit would be stored twice.
      req.log.error({ err: err.message }, 'storage lost while committing: outcome unknown');
      body = problem(
        'unavailable',
        'storage was lost while this was being saved, and it may have been stored: check before sending it again',
      );
    } else if (isUnavailable(err)) {
      logRefusal(req, 'storage unavailable', err.message);
      body = problem('unavailable', 'storage cannot serve this right now; try again shortly');
      reply.header('retry-after', '5');
    } else body = fromFastify(err);
    if (!body) {
      req.log.error({ err }, 'unhandled error');
      body = internalProblem();
    }
    // Only a refusal that names its own wait (the rate limiter's, the submission queue's).
    const retryAfter = err instanceof DomainError ? (err as { retryAfter?: unknown }).retryAfter : undefined;
    if (body.code === 'rate_limited') reply.header('retry-after', String(retryAfter ?? 60));
    else if (typeof retryAfter === 'number' && Number.isFinite(retryAfter))
      reply.header('retry-after', String(retryAfter));
    if (err instanceof DomainError && err.code === 'unavailable') logRefusal(req, 'unavailable', err.message);
    // RFC 6750: a 401 names the scheme it asks for.
    // A route that names its own realm (the metrics token's) keeps it.
    if (body.status === 401 && !reply.hasHeader('www-authenticate'))
      reply.header('www-authenticate', 'Bearer realm="canvass"');
    void reply.status(body.status).type('application/problem+json').send(body);
  });
  app.setNotFoundHandler((req, reply) => {
    void reply
      .status(404)
      .type('application/problem+json')
      .send(problem('not_found', `no route ${req.method} ${req.url.split('?')[0]}`));
  });
}
