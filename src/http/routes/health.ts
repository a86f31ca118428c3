import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyPluginAsync } from 'fastify';
import { Liveness, Readiness } from '../schemas/health.js';

/** A readiness check that has not answered by then is a 503: a probe gets its answer, not a hang. */
export const READY_DEADLINE_MS = 2_000;

export const healthRoutes =
  (ready: () => Promise<boolean>): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true, response: { 200: Liveness } } }, async () => ({ status: 'ok' }));
    app.get(
      '/readyz',
      { schema: { hide: true, response: { 200: Readiness, 503: Readiness } } },
      async (_req, reply) => {
        const ok = await Promise.race([ready().catch(() => false), delay(READY_DEADLINE_MS, false, { ref: false })]);
        return reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable' });
      },
    );
  };
