import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Deps } from '../app/ports/index.js';
import type { SubmissionQueue } from '../app/responses/submission-queue.js';
import { DomainError } from '../domain/errors.js';
import { authHook, keyLookups } from './auth.js';
import { countingSubmissions, registerMetrics, type MetricsOptions } from './metrics.js';
import { rateLimiter } from './rate-limit.js';
import { frameworkErrors, refuseWhileClosing, registerErrorHandling } from './error-handler.js';
import { accountRoutes } from './routes/accounts.js';
import { alertRoutes } from './routes/alerts.js';
import { keyRoutes } from './routes/keys.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { healthRoutes } from './routes/health.js';
import { pollRoutes } from './routes/polls.js';
import { responseRoutes } from './routes/responses.js';
import { ExportSlots } from '../app/responses/export-slots.js';
import { webhookRoutes } from './routes/webhooks.js';
import { slideRoutes } from './routes/slides.js';
import { validatorCompiler } from './validation.js';

export type AppOptions = {
  deps: Deps;
  submissions: SubmissionQueue;
  logger?: FastifyBaseLogger | boolean;
  version?: string;
  /** Requests a minute per API key (or per address for public routes); 0 turns limiting off. */
  rateLimitPerMinute?: number;
  /** Most time a request may take to arrive in full (and an idle connection may last); 30 s by default. */
  requestTimeoutMs?: number;
  /** Which errors mean a dependency is down (answered 503, not 500). */
  isUnavailable?: (err: unknown) => boolean;
  /** Readiness: false while draining or when storage is gone. */
  ready?: () => Promise<boolean>;
  /** Liveness: false once the process cannot serve again without a restart. */
  alive?: () => boolean;
  /** Request counts and GET /metrics; without it there is no /metrics. */
  metrics?: MetricsOptions;
  /** CSV exports under way per account (EXPORTS_PER_ACCOUNT); one set of them per app by default. */
  exports?: ExportSlots;
};

export type App = FastifyInstance;

/** Throws on any byte sequence that is not UTF-8; a leading byte-order mark is skipped. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The charset parameter of a Content-Type, lower-cased and unquoted, or undefined when absent. */
function charsetOf(contentType: string | undefined): string | undefined {
  for (const param of (contentType ?? '').split(';').slice(1)) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    return param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return undefined;
}

const isDefaulted = (p: unknown): p is { required: boolean } => {
  const q = p as { in?: unknown; required?: unknown; schema?: { default?: unknown } } | null;
  return q?.in === 'query' && q.required === true && q.schema?.default !== undefined;
};

export async function buildApp(opts: AppOptions): Promise<App> {
  const app = Fastify({
    loggerInstance: typeof opts.logger === 'object' ? opts.logger : undefined,
    logger: typeof opts.logger === 'boolean' ? opts.logger : undefined,
    bodyLimit: 1024 * 1024,
    // A client that trickles its request (or never finishes it) is cut off, not waited on.
    connectionTimeout: opts.requestTimeoutMs ?? 30_000,
    requestTimeout: opts.requestTimeoutMs ?? 30_000,
    // refuseWhileClosing answers those instead, as a problem like every other error.
    return503OnClosing: false,
    // Two info lines per request cost more than they tell at thousands of requests a second;
    // errors and slow requests are logged by the hooks below instead.
    logController: new LogController({ disableRequestLogging: true }),
    ajv: { customOptions: {} },
    // Answered before any hook runs, so counted here: a malformed path is a request like another.
    frameworkErrors: (err, req, reply) => {
      frameworkErrors(err, req, reply);
      opts.metrics?.metrics.httpRequest(req.method, 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler());
  // Every answer is read as the type it declares, never sniffed into something else.
  app.addHook('onRequest', (_req, reply, done) => {
    reply.header('x-content-type-options', 'nosniff');
    done();
  });
  refuseWhileClosing(app);
  // A route that takes no body has no media type to refuse in a request that sends none: some
  // clients send a Content-Type on every request, a DELETE included.
  app.addHook('onRequest', (req, _reply, done) => {
    const h = req.headers;
    if (
      h['content-type'] !== undefined &&
      !req.routeOptions.schema?.body &&
      h['transfer-encoding'] === undefined &&
      (h['content-length'] ?? '0') === '0'
    )
      delete h['content-type'];
    done();
  });
  // API answers are an account's data, some with a key or a secret in them: no cache keeps them.
  app.addHook('onSend', async (_req, reply, payload) => {
    if (!reply.hasHeader('cache-control') && /json/.test(String(reply.getHeader('content-type') ?? '')))
      reply.header('cache-control', 'no-store');
    return payload;
  });
  // Slow requests come by the thousand when storage is slow: one line a second says so, with
  // how many requests it stands for.
  const slow = { lastLogged: 0, since: 0 };
  app.addHook('onResponse', async (req, reply) => {
    const ms = reply.elapsedTime;
    // A 503 is an outage or an overload, logged where it is decided at most once a second
    // (error-handler.ts): at thousands a second, a line each would bury everything else.
    if (reply.statusCode >= 500 && reply.statusCode !== 503)
      req.log.error({ method: req.method, url: req.url, status: reply.statusCode, ms }, 'request failed');
    else if (ms > 1000 && reply.statusCode !== 503) {
      slow.since++;
      const now = Date.now();
      if (now - slow.lastLogged >= 1000) {
        const fields = { method: req.method, url: req.url, status: reply.statusCode, ms, slowRequests: slow.since };
        req.log.warn(fields, 'slow request');
        slow.lastLogged = now;
        slow.since = 0;
      }
    } else if (req.log.level === 'debug' || req.log.level === 'trace')
      req.log.debug({ method: req.method, url: req.url, status: reply.statusCode, ms }, 'request');
  });
  if (opts.metrics) registerMetrics(app, opts.metrics);
  registerErrorHandling(app, opts.isUnavailable);
  // Only JSON bodies: anything else is a 415, not a string that fails validation later.
  app.removeContentTypeParser(['text/plain']);
  // JSON is read as strict UTF-8: bytes that are not UTF-8 are a 400, not U+FFFD, and a body
  // declared in another charset is a 415. Parsing (syntax, __proto__ and constructor keys, and
  // an empty body where the route takes one) stays Fastify's own.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body: Buffer, done) => {
    // A route that takes no body (GET, DELETE) ignores an empty one: some clients send
    // `Content-Type: application/json` on every request.
    if (body.length === 0 && !req.routeOptions.schema?.body) {
      done(null, undefined);
      return;
    }
    const charset = charsetOf(req.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(
        new DomainError(
          'unsupported_media_type',
          `charset ${JSON.stringify(charset.slice(0, 40))} is not supported; send the body as UTF-8 application/json`,
        ),
        undefined,
      );
      return;
    }
    let text: string;
    try {
      text = UTF8.decode(body);
    } catch {
      done(
        new DomainError('validation_failed', 'the body is not valid UTF-8', [
          { path: '/', message: 'not valid UTF-8' },
        ]),
        undefined,
      );
      return;
    }
    req.bodyBytes = body.length;
    parseJson(req, text, done);
  });
  app.decorateRequest('caller', null);
  app.decorateRequest('bodyBytes', 0);

  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Canvass API',
        version: opts.version ?? '0.0.0',
        description: 'Polls and signed, retried response webhooks.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'cvk_… API key' } } },
      security: [{ bearer: [] }],
    },
    // A query parameter with a default (a list's `limit`) may be left out: the default fills it.
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const { openapiObject } = document;
      for (const item of Object.values(openapiObject.paths ?? {}))
        for (const op of Object.values(item as Record<string, { parameters?: unknown[] }>))
          for (const p of op.parameters ?? []) if (isDefaulted(p)) p.required = false;
      return openapiObject;
    },
  });
  // Same origin as the dashboard, whose key a tab keeps: the page's scripts are only its own
  // (hashed inline ones included), and it is framed by no one. Its styles may be inline, as the
  // dashboard's may (Swagger UI sets some from script). Served over http on loopback too, so
  // nothing is upgraded to https.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    transformStaticCSP: (csp) =>
      csp
        .replace(' upgrade-insecure-requests;', '')
        .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
        .replace(/style-src [^;]*;/, "style-src 'self' 'unsafe-inline';"),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(healthRoutes(opts.ready ?? (async () => true), opts.alive ?? (() => true)));
  await app.register(dashboardRoutes());
  // The API lives in its own context so that the auth hook runs on its routes only
  // (docs, health and unknown paths answer without a key).
  await app.register(async (api) => {
    const perMinute = opts.rateLimitPerMinute ?? 0;
    // Keys are looked up a few at a time per address only where failures have a budget to pass.
    const lookups = perMinute > 0 ? keyLookups() : undefined;
    api.addHook('onRequest', authHook(opts.deps, rateLimiter(perMinute), rateLimiter(perMinute * 16), lookups));
    await api.register(pollRoutes(opts.deps));
    await api.register(slideRoutes(opts.deps));
    await api.register(accountRoutes(opts.deps));
    await api.register(webhookRoutes(opts.deps));
    const submissions = opts.metrics ? countingSubmissions(opts.submissions, opts.metrics.metrics) : opts.submissions;
    await api.register(responseRoutes(opts.deps, submissions, opts.exports ?? new ExportSlots()));
    await api.register(alertRoutes(opts.deps));
    await api.register(keyRoutes(opts.deps));
  });
  return app;
}
