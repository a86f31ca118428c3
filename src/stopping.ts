import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

type Closable = { close(): Promise<unknown> };

/**
 * Stops `canvass serve`. The worker drains while requests under way finish, not after them;
 * those get `graceMs` (the delivery deadline), then their connections close, since a CSV export
 * streams as long as its client reads. Storage closes once both are done, whichever failed.
 */
export async function stopServing(
  rt: Closable & { logger: Logger },
  parts: {
    app: FastifyInstance;
    admin?: Closable | undefined;
    worker?: { stop(): Promise<void> } | undefined;
    scrape?: Closable | undefined;
  },
  graceMs: number,
): Promise<void> {
  const [closed, drained] = await Promise.allSettled([
    closeWithin(parts.app, parts.admin, graceMs, rt.logger),
    parts.worker?.stop(),
  ]);
  await parts.scrape?.close();
  await rt.close();
  for (const r of [closed, drained]) if (r.status === 'rejected') throw r.reason;
  rt.logger.info('canvass stopped');
}

/** Closes the admin socket and the API, closing after `graceMs` the connections still in use. */
async function closeWithin(app: FastifyInstance, admin: Closable | undefined, graceMs: number, logger: Logger) {
  const cut = setTimeout(() => {
    logger.warn({ graceMs }, 'closing the connections of requests still under way at the stop');
    app.server.closeAllConnections();
  }, graceMs);
  try {
    await admin?.close();
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}
