import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

type Closable = { close(): Promise<unknown> };
/** A server that can also close the connections still in use (a request under way holds one). */
type Cuttable = Closable & { closeAllConnections(): void };

/**
 * Stops `canvass serve`. The worker drains while requests under way finish, not after them;
 * those get `graceMs` (the delivery deadline), then their connections close, since a CSV export
 * streams as long as its client reads. A handler cut off that way may still be waiting on
 * storage when it closes: it fails then, its client already gone. Storage closes once the rest
 * is done, whichever part failed; the first failure is thrown after.
 */
export async function stopServing(
  rt: Closable & { logger: Logger },
  parts: {
    app: FastifyInstance;
    admin?: Cuttable | undefined;
    worker?: { stop(): Promise<void> } | undefined;
    scrape?: Closable | undefined;
  },
  graceMs: number,
): Promise<void> {
  const settled: PromiseSettledResult<unknown>[] = await Promise.allSettled([
    closeWithin(parts.app, parts.admin, graceMs, rt.logger),
    parts.worker?.stop(),
  ]);
  try {
    settled.push(...(await Promise.allSettled([parts.scrape?.close()])));
  } finally {
    await rt.close();
  }
  for (const r of settled) if (r.status === 'rejected') throw r.reason;
  rt.logger.info('canvass stopped');
}

/** Closes the admin socket and the API together, cutting after `graceMs` the connections still in use. */
async function closeWithin(app: FastifyInstance, admin: Cuttable | undefined, graceMs: number, logger: Logger) {
  const cut = setTimeout(() => {
    logger.warn({ graceMs }, 'closing the connections of requests still under way at the stop');
    app.server.closeAllConnections();
    admin?.closeAllConnections();
  }, graceMs);
  try {
    await Promise.all([admin?.close(), app.close()]);
  } finally {
    clearTimeout(cut);
  }
}
