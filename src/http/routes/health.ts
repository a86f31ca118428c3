import type { FastifyPluginAsync } from 'fastify';
import { Liveness, Readiness } from '../schemas/health.js';

export const healthRoutes =
  (ready: () => Promise<boolean>): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true, response: { 200: Liveness } } }, async () => ({ status: 'ok' }));
    app.get(
      '/readyz',
      { schema: { hide: true, response: { 200: Readiness, 503: Readiness } } },
      async (_req, reply) => {
        const ok = await ready().catch(() => false);
        return reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable' });
      },
    );
  };
