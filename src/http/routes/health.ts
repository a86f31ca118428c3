import type { FastifyPluginAsync } from 'fastify';

export const healthRoutes =
  (ready: () => Promise<boolean>): FastifyPluginAsync =>
  async (app) => {
    app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { schema: { hide: true } }, async (_req, reply) => {
      const ok = await ready().catch(() => false);
      return reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'unavailable' });
    });
  };
