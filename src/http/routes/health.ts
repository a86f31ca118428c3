import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyPluginAsync } from 'fastify';
import { Liveness, Readiness } from '../schemas/health.js';

/** A readiness check that has not answered by then is a 503: a probe gets its answer, not a hang. */
export const READY_DEADLINE_MS = 2_000;

export const healthRoutes =
  (ready: () => Promise<boolean>, alive: () => boolean = () => true): FastifyPluginAsync =>
  async (app) => {
    // A process that cannot serve again (its embedded database stopped) fails its liveness
    // probe, so a supervisor restarts it.
    app.get('/healthz', { schema: { hide: true, response: { 200: Liveness, 503: Liveness } } }, async (_req, reply) =>
      alive() ? { status: 'ok' } : reply.status(503).send({ status: 'failed' }),
    );
    app.get(
      '/readyz',
      { schema: { hide: true, response: { 200: Readiness, 503: Readiness } } },
      async (_req, reply) => {
        const ok = await Promise.race([ready().catch(() => false), delay(READY_DEADLINE_MS, false, { ref: false })]);
        return reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable' });
      },
    );
  };
