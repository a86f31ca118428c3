import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from '../../app/ports/metrics.js';
import { bearerMatches } from '../../domain/bearer.js';

export type MetricsServer = { url: string; close(): Promise<void> };

const problem = (status: number, title: string, detail: string, code: string) =>
  JSON.stringify({ type: `/problems/${code}`, title, status, detail, code });

/**
 * `GET /metrics` on a port of its own, for processes without the API (`canvass worker`), with
 * the API's rule: behind `Authorization: Bearer <token>` when a token is configured.
 */
export async function startMetricsServer(opts: {
  host: string;
  port: number;
  metrics: Metrics;
  token?: string;
}): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const fail = (status: number, body: string, headers: Record<string, string> = {}) =>
      res.writeHead(status, { 'content-type': 'application/problem+json', ...headers }).end(body);
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD'))
      return fail(404, problem(404, 'Not found', `no route ${req.method} ${path}`, 'not_found'));
    if (opts.token !== undefined && !bearerMatches(req.headers.authorization, opts.token))
      return fail(
        401,
        problem(
          401,
          'Authentication required',
          'send Authorization: Bearer <CANVASS_METRICS_TOKEN>',
          'unauthenticated',
        ),
        { 'www-authenticate': 'Bearer realm="metrics"' },
      );
    opts.metrics.exposition().then(
      (e) => res.writeHead(200, { 'content-type': e.contentType }).end(req.method === 'HEAD' ? undefined : e.body),
      () => fail(500, problem(500, 'Internal error', 'the metrics could not be collected', 'internal_error')),
    );
  });
  // Scrapers keep connections open; closing must not wait for them.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
