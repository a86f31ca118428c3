import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { serverTls } from './tls.js';

export type Received = { path: string; headers: Record<string, string>; rawBody: string; at: number };

/** What the receiver does for one request: answer with a status (after a delay, or once `until` settles), or hang up. */
export type Reply =
  | { status: number; delayMs?: number; until?: Promise<void>; body?: string; headers?: Record<string, string> }
  | { destroy: true };

/**
 * A real HTTPS endpoint on loopback serving the test CA's certificate. Each path has a script
 * of replies, used in order (the last one repeats); every request is recorded with its raw body.
 */
export async function startReceiver(): Promise<{
  url(path: string): string;
  port: number;
  received: Received[];
  /** TLS connections open now, and the most open at once since the receiver started. */
  connections(): { open: number; most: number };
  script(path: string, replies: Reply[]): void;
  waitFor(pred: (r: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}> {
  const scripts = new Map<string, Reply[]>();
  const counts = new Map<string, number>();
  const received: Received[] = [];
  const server = https.createServer({ ...serverTls(), keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const p = (req.url ?? '/').split('?')[0]!;
      received.push({
        path: p,
        headers: req.headers as Record<string, string>,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      });
      const script = scripts.get(p) ?? [{ status: 200 }];
      const n = counts.get(p) ?? 0;
      counts.set(p, n + 1);
      const reply = script[Math.min(n, script.length - 1)]!;
      if ('destroy' in reply) {
        req.socket.destroy();
        return;
      }
      const send = () => {
        if (!res.destroyed)
          res
            .writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers })
            .end(reply.body ?? `status ${reply.status}`);
      };
      if (reply.until) void reply.until.then(send);
      else if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
      else send();
    });
  });
  let open = 0;
  let most = 0;
  server.on('secureConnection', (socket) => {
    most = Math.max(most, ++open);
    socket.once('close', () => open--);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (p) => `https://127.0.0.1:${port}${p}`,
    received,
    connections: () => ({ open, most }),
    script: (p, replies) => scripts.set(p, replies),
    async waitFor(pred, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (!pred(received)) {
        if (Date.now() > until)
          throw new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} requests so far)`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return received;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
