import https from 'node:https';
import net from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpSender, SendResult } from '../../src/app/ports/index.js';
import { createH1Sender, type SenderOptions } from '../../src/infra/http-sender/h1-sender.js';
import { serverTls } from '../support/tls.js';

/**
 * The webhook sender against real TLS servers on loopback (the test CA): an https server where
 * the answers are ordinary, and a raw TLS server that writes exactly the bytes a case needs
 * (framings, interim answers, malformed answers, connections closed at the worst moment).
 */

type Raw = {
  port: number;
  server: tls.Server;
  connections: number;
  requests: string[];
  closed: number;
  close(): Promise<void>;
};

/** A TLS server whose `answer` gets each request's text and the socket; it writes what it likes. */
async function rawServer(answer: (request: string, socket: tls.TLSSocket, nth: number) => void): Promise<Raw> {
  const raw = { port: 0, connections: 0, requests: [] as string[], closed: 0, close: async () => {} } as Raw;
  const sockets = new Set<tls.TLSSocket>();
  const server = tls.createServer(serverTls(), (socket) => {
    raw.connections++;
    sockets.add(socket);
    let nth = 0;
    let pending = '';
    socket.on('data', (d: Buffer) => {
      pending += d.toString('utf8');
      // One request is whole when its head and its Content-Length of body are in.
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(pending.slice(0, end))?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        const request = pending.slice(0, end + 4 + length);
        pending = pending.slice(end + 4 + length);
        raw.requests.push(request);
        answer(request, socket, nth++);
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      raw.closed++;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  raw.server = server;
  raw.port = (server.address() as AddressInfo).port;
  raw.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return raw;
}

const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});
function sender(opts: Partial<SenderOptions> = {}): HttpSender {
  const s = createH1Sender({ allowPrivateTargets: true, ...opts });
  cleanups.push(() => s.close());
  return s;
}
async function raw(answer: Parameters<typeof rawServer>[0]): Promise<Raw> {
  const r = await rawServer(answer);
  cleanups.push(() => r.close());
  return r;
}
const req = (
  port: number,
  extra: Partial<{ path: string; body: string; timeoutMs: number; headers: Record<string, string> }> = {},
) => ({
  url: `https://127.0.0.1:${port}${extra.path ?? '/hook'}`,
  body: extra.body ?? '{"a":1}',
  headers: extra.headers ?? { 'content-type': 'application/json' },
  timeoutMs: extra.timeoutMs ?? 5_000,
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function waitUntil(pred: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe('h1 sender: connections', () => {
  it('one keep-alive connection carries attempts one after another, each request as given', async () => {
    const seen: { headers: Record<string, unknown>; body: string; url: string }[] = [];
    let connections = 0;
    const server = https.createServer({ ...serverTls(), keepAliveTimeout: 60_000 }, (rq, res) => {
      const chunks: Buffer[] = [];
      rq.on('data', (c: Buffer) => chunks.push(c));
      rq.on('end', () => {
        seen.push({ headers: rq.headers, body: Buffer.concat(chunks).toString('utf8'), url: rq.url! });
        res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
      });
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(() => r())));
    server.keepAliveTimeout = 60_000;
    const port = (server.address() as AddressInfo).port;
    const s = sender();
    const body = JSON.stringify({ text: 'héllo wörld ✓ 😀' });
    for (let i = 0; i < 5; i++) {
      const sent = await s.send(
        req(port, {
          path: `/hook/${i}?q=1`,
          body,
          headers: { 'content-type': 'application/json', 'x-service-attempt': String(i + 1) },
        }),
      );
      expect(sent.outcome).toEqual({ kind: 'response', statusCode: 200 });
      expect(sent.excerpt).toBe('thanks');
      expect(sent.durationMs).toBeGreaterThan(0);
    }
    expect(connections).toBe(1);
    expect(seen.map((r) => r.url)).toEqual([0, 1, 2, 3, 4].map((i) => `/hook/${i}?q=1`));
    expect(seen[3]!.body).toBe(body);
    expect(seen[3]!.headers).toMatchObject({
      host: `127.0.0.1:${port}`,
      'content-length': String(Buffer.byteLength(body)),
      'content-type': 'application/json',
      'x-service-attempt': '4',
    });
    server.closeAllConnections();
  });

  it('at most connectionsPerOrigin connections to an origin; the attempts beyond them wait their turn', async () => {
    let open = 0;
    let most = 0;
    const r = await raw((_q, socket) => setTimeout(() => socket.write(OK), 80));
    const s = sender({ connectionsPerOrigin: 2 });
    const counting = setInterval(() => {
      open = r.connections - r.closed;
      most = Math.max(most, open);
    }, 5);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => s.send(req(r.port, { path: `/${i}` }))));
    clearInterval(counting);
    expect(results.every((x) => x.outcome.kind === 'response' && x.outcome.statusCode === 200)).toBe(true);
    expect(r.connections).toBe(2);
    expect(most).toBeLessThanOrEqual(2);
    expect(r.requests).toHaveLength(8);
  });

  it('a lowered bound opens no connection while above it and closes busy ones above it as they answer, idle ones at once; a raised one opens more', async () => {
    // Answers wait while `holding`, until release(): what is busy stays busy until the test says so.
    const held: tls.TLSSocket[] = [];
    let holding = false;
    const r = await raw((_q, socket) => (holding ? held.push(socket) : socket.write(OK)));
    let open = 0;
    r.server.on('secureConnection', (socket: tls.TLSSocket) => {
      open++;
      socket.once('close', () => open--);
    });
    const release = () => {
      holding = false;
      for (const socket of held.splice(0)) socket.write(OK);
    };
    const s = createH1Sender({ allowPrivateTargets: true, connectionsPerOrigin: 6 });
    cleanups.push(() => s.close());
    const send = (n: number, tag: string) =>
      Promise.all(Array.from({ length: n }, (_, i) => s.send(req(r.port, { path: `/${tag}${i}` }))));
    const allOk = (results: SendResult[]) =>
      expect(results.map((x) => x.outcome)).toEqual(results.map(() => ({ kind: 'response', statusCode: 200 })));

    // Six connections busy, then the bound lowered to two with six more attempts waiting.
    holding = true;
    const busy = send(6, 'a');
    await waitUntil(() => held.length === 6, 'six requests held');
    s.setConnectionsPerOrigin(2);
    const waiting = send(6, 'b');
    release();
    allOk(await busy);
    allOk(await waiting);
    await waitUntil(() => open === 2, 'the four above the bound to close once answered');
    expect(r.connections).toBe(6);

    // Raised to five: three more open.
    holding = true;
    const more = send(8, 'c');
    s.setConnectionsPerOrigin(5);
    await waitUntil(() => held.length === 5, 'five requests held');
    expect(open).toBe(5);
    release();
    allOk(await more);
    expect(r.connections).toBe(9);

    // Idle: lowered twice at once, to three and then one; the idle ones above it close at once,
    // the second lowering counting those the first is already closing.
    s.setConnectionsPerOrigin(3);
    s.setConnectionsPerOrigin(1);
    await waitUntil(() => open === 1, 'the idle connections above the bound to close');
    allOk(await send(4, 'd'));
    expect(open).toBe(1);
    expect(r.connections).toBe(9);
  });

  it('a bound lowered while connections open: the one that opens serves the waiting attempts when the other fails to open', async () => {
    const r = await raw((_q, socket) => socket.write(OK));
    // A front that passes its first connection through to the server and holds the second
    // unanswered (its handshake pending) until the test cuts it.
    let held: net.Socket | undefined;
    let passed = false;
    let firstClosed = false;
    const front = net.createServer((client) => {
      client.on('error', () => {});
      if (passed) {
        held = client;
        return;
      }
      passed = true;
      const upstream = net.connect(r.port, '127.0.0.1');
      upstream.on('error', () => {});
      client.pipe(upstream).pipe(client);
      client.on('close', () => {
        firstClosed = true;
        upstream.destroy();
      });
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((ok) => front.listen(0, '127.0.0.1', ok));
    cleanups.push(() => new Promise((ok) => front.close(() => ok())));
    const port = (front.address() as AddressInfo).port;
    const s = createH1Sender({ allowPrivateTargets: true, connectionsPerOrigin: 2 });
    cleanups.push(() => s.close());
    const results = Promise.all([s.send(req(port, { path: '/a' })), s.send(req(port, { path: '/b' }))]);
    s.setConnectionsPerOrigin(1);
    await waitUntil(
      () => held !== undefined && (r.requests.length > 0 || firstClosed),
      'the first to open and be used or closed',
    );
    held!.destroy();
    expect((await results).map((x) => x.outcome)).toEqual([
      { kind: 'response', statusCode: 200 },
      { kind: 'response', statusCode: 200 },
    ]);
    expect(r.connections).toBe(1);
  });

  it('the deadline runs from the write: an attempt written late gets its own, and one never written behind a busy, answering connection is given back unsent', async () => {
    const r = await raw((q, socket) => setTimeout(() => socket.write(OK), q.includes('/long') ? 1_000 : 500));
    const s = sender({ connectionsPerOrigin: 1 });
    // Queued 500 ms behind /first, then answered 500 ms after its write: 1 s after it was
    // queued, within its own 900 ms.
    const [first, late] = await Promise.all([
      s.send(req(r.port, { path: '/first', timeoutMs: 5_000 })),
      s.send(req(r.port, { path: '/late', timeoutMs: 900 })),
    ]);
    expect(first.outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(late.outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(late.unsent).toBeUndefined();
    expect(late.durationMs).toBeLessThan(900);
    // /short answers at 500 ms, then /long holds the connection to 1.5 s: /never, queued behind
    // both with a deadline of 1 s, is never written.
    const [short, long, never] = await Promise.all([
      s.send(req(r.port, { path: '/short', timeoutMs: 5_000 })),
      s.send(req(r.port, { path: '/long', timeoutMs: 5_000 })),
      s.send(req(r.port, { path: '/never', timeoutMs: 1_000 })),
    ]);
    expect([short.outcome, long.outcome]).toEqual([
      { kind: 'response', statusCode: 200 },
      { kind: 'response', statusCode: 200 },
    ]);
    expect(never).toMatchObject({ outcome: { kind: 'error', error: 'timeout' }, unsent: true });
    await sleep(200);
    expect(r.requests.map((q) => q.split(' ')[1])).toEqual(['/first', '/late', '/short', '/long']);
  });

  it('headers given as a function are made at the write: an attempt queued behind another is stamped after its answer', async () => {
    let answeredFirstAt = 0;
    const r = await raw((q, socket) =>
      setTimeout(() => {
        if (q.includes('/first')) answeredFirstAt = Date.now();
        socket.write(OK);
      }, 300),
    );
    const s = sender({ connectionsPerOrigin: 1 });
    const made: string[] = [];
    const stamped = (path: string) => () => {
      made.push(path);
      return { 'x-written-at': String(Date.now()) };
    };
    const results = await Promise.all(
      ['/first', '/second'].map((path) => s.send({ ...req(r.port, { path }), headers: stamped(path) })),
    );
    expect(results.map((x) => x.outcome.kind)).toEqual(['response', 'response']);
    // Each made once, and /second's only once /first had been answered: one connection carries both.
    expect(made).toEqual(['/first', '/second']);
    const writtenAt = r.requests.map((q) => Number(/x-written-at: (\d+)/.exec(q)?.[1]));
    expect(writtenAt[1]).toBeGreaterThanOrEqual(answeredFirstAt);
  });

  it('an endpoint that hangs holds half of its host’s connections: another endpoint of the host is answered meanwhile', async () => {
    let hungBeforeOther: number | undefined;
    const r = await raw((q, socket) => {
      if (q.includes('/hung')) return;
      hungBeforeOther ??= r.requests.filter((x) => x.includes('/hung')).length;
      socket.write(OK);
    });
    const s = sender({ connectionsPerOrigin: 4 });
    // Six requests to the hung endpoint queued first, then two to another endpoint of the host.
    const hung = Array.from({ length: 6 }, () => s.send(req(r.port, { path: '/hung', timeoutMs: 2_000 })));
    const other = await Promise.all([0, 1].map(() => s.send(req(r.port, { path: '/other', timeoutMs: 2_000 }))));
    expect(other.map((x) => x.outcome)).toEqual([0, 1].map(() => ({ kind: 'response', statusCode: 200 })));
    // At most two of the hung endpoint's requests were on the wire before the other's went out.
    expect(hungBeforeOther).toBeLessThanOrEqual(2);
    // Its own: those written and those still queued time out, none given back (it hangs).
    for (const x of await Promise.all(hung)) {
      expect(x.outcome).toEqual({ kind: 'error', error: 'timeout' });
      expect(x.unsent).toBeUndefined();
    }
  });

  it('a 204 whose head declares a body does not hand its connection to the next attempt, which would read those bytes as its answer', async () => {
    const r = await raw((q, socket, nth) => {
      if (q.includes('/no-content')) socket.write('HTTP/1.1 204 No Content\r\nContent-Length: 38\r\n\r\n');
      // The declared bytes, sent late on the same connection: an answer of their own.
      else if (nth > 0) socket.write('HTTP/1.1 500 Stray\r\nContent-Length: 0\r\n\r\n');
      else socket.write('HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n');
    });
    const s = sender({ connectionsPerOrigin: 1 });
    const [first, next] = await Promise.all([
      s.send(req(r.port, { path: '/no-content' })),
      s.send(req(r.port, { path: '/next' })),
    ]);
    expect(first.outcome).toEqual({ kind: 'response', statusCode: 204 });
    expect(next.outcome).toEqual({ kind: 'response', statusCode: 202 });
    expect(r.connections).toBe(2);
  });

  it('headers made at the write that cannot be sent fail that attempt, and the connection serves the next', async () => {
    const r = await raw((_q, socket) => socket.write(OK));
    const s = sender({ connectionsPerOrigin: 1 });
    const [bad, good] = await Promise.all([
      s.send({ ...req(r.port, { path: '/bad' }), headers: () => ({ 'x-bad': 'a\r\nb' }) }),
      s.send({ ...req(r.port, { path: '/good' }), headers: () => ({ 'x-ok': '1' }) }),
    ]);
    expect(bad.outcome.kind).toBe('error');
    expect(good.outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(r.requests.map((q) => q.split(' ')[1])).toEqual(['/good']);
  });

  it('an attempt queued behind its own endpoint’s request that answers nothing is a timeout, not given back', async () => {
    const r = await raw(() => {}); // never answers
    const s = sender({ connectionsPerOrigin: 1 });
    // The second's deadline passes while the first, to the same endpoint, holds the one connection.
    const results = await Promise.all([
      s.send(req(r.port, { path: '/hung', timeoutMs: 1_000 })),
      s.send(req(r.port, { path: '/hung', timeoutMs: 300 })),
    ]);
    for (const result of results) {
      expect(result.outcome).toEqual({ kind: 'error', error: 'timeout' });
      expect(result.unsent).toBeUndefined();
    }
  });

  it('an attempt queued behind another endpoint’s hung request on the same host is given back unsent, not its timeout', async () => {
    const r = await raw((q, socket) => {
      if (!q.includes('/other-tenant')) socket.write(OK);
    });
    const s = sender({ connectionsPerOrigin: 1 });
    // /mine is queued once another endpoint of the origin holds the one connection, hung.
    const hung = s.send(req(r.port, { path: '/other-tenant', timeoutMs: 1_500 }));
    await waitUntil(() => r.requests.length === 1, 'the hung request to arrive');
    const mine = await s.send(req(r.port, { path: '/mine', timeoutMs: 300 }));
    expect(mine).toMatchObject({ outcome: { kind: 'error', error: 'timeout' }, unsent: true });
    expect((await hung).outcome).toEqual({ kind: 'error', error: 'timeout' });
    // Never written: the endpoint saw only the hung request.
    expect(r.requests.map((q) => q.split(' ')[1])).toEqual(['/other-tenant']);
  });

  it('an attempt past its deadline mid-answer: timeout if no status yet, and that connection is not used again', async () => {
    const r = await raw((q, socket) => {
      if (q.includes('/slow')) return; // never answers
      socket.write(OK);
    });
    const s = sender({ connectionsPerOrigin: 1 });
    expect((await s.send(req(r.port, { path: '/slow', timeoutMs: 150 }))).outcome).toEqual({
      kind: 'error',
      error: 'timeout',
    });
    expect((await s.send(req(r.port, { path: '/fast' }))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(r.connections).toBe(2);
  });

  it('a reused connection the server closed without a byte of answer: the request goes once more, on a new connection', async () => {
    // The server's side of a keep-alive race: it answers a connection's first request and
    // closes the connection when the second arrives.
    const r = await raw((_q, socket, nth) => (nth === 0 ? socket.write(OK) : socket.destroy()));
    const s = sender();
    expect((await s.send(req(r.port, { path: '/a' }))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect((await s.send(req(r.port, { path: '/b' }))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(r.requests.map((q) => q.split(' ')[1])).toEqual(['/a', '/b', '/b']);
    expect(r.connections).toBe(2);
    // Headers made at the write are made again for the second write.
    let made = 0;
    const again = await s.send({ ...req(r.port, { path: '/c' }), headers: () => ({ 'x-made': String(++made) }) });
    expect(again.outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(r.requests.slice(3).map((q) => [q.split(' ')[1], /x-made: (\d+)/.exec(q)?.[1]])).toEqual([
      ['/c', '1'],
      ['/c', '2'],
    ]);
  });

  it('a reused connection closed after an interim answer: error reset, not sent again (the server heard it)', async () => {
    const r = await raw((_q, socket, nth) => {
      if (nth === 0) return socket.write(OK);
      socket.write('HTTP/1.1 100 Continue\r\n\r\n');
      setTimeout(() => socket.destroy(), 20);
    });
    const s = sender();
    expect((await s.send(req(r.port, { path: '/a' }))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect((await s.send(req(r.port, { path: '/b' }))).outcome).toEqual({ kind: 'error', error: 'reset' });
    expect(r.requests.map((q) => q.split(' ')[1])).toEqual(['/a', '/b']);
  });

  it('a new connection closed without an answer: error reset, not sent again', async () => {
    const r = await raw((_q, socket) => socket.destroy());
    const s = sender();
    expect((await s.send(req(r.port))).outcome).toEqual({ kind: 'error', error: 'reset' });
    expect(r.requests).toHaveLength(1);
  });

  it("the server's Keep-Alive timeout is kept: a connection it keeps 2 s is not reused; one it keeps 3 s is closed idle within about a second", async () => {
    const short = await raw((_q, socket) =>
      socket.write('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=2\r\nContent-Length: 0\r\n\r\n'),
    );
    const s = sender();
    for (let i = 0; i < 3; i++)
      expect((await s.send(req(short.port))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(short.connections).toBe(3);

    const longer = await raw((_q, socket) =>
      socket.write('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=3\r\nContent-Length: 0\r\n\r\n'),
    );
    expect((await s.send(req(longer.port))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect((await s.send(req(longer.port))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(longer.connections).toBe(1);
    const until = Date.now() + 2_900;
    while (longer.closed === 0 && Date.now() < until) await sleep(20);
    expect(longer.closed).toBe(1);
  });
});

describe('h1 sender: idle connections across origins', () => {
  it('are kept up to maxIdleConnections, the least recently used closed first', async () => {
    const servers = await Promise.all([0, 1, 2].map(() => raw((_q, socket) => socket.write(OK))));
    const s = sender({ maxIdleConnections: 2 });
    for (const r of servers) expect((await s.send(req(r.port))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    // The third origin's connection going idle closes the first's, the least recently used.
    await waitUntil(() => servers[0]!.closed === 1, "the first origin's idle connection to close");
    expect(servers.map((r) => r.closed)).toEqual([1, 0, 0]);
    // The second is reused, and so becomes the most recently used: the first, dialled again, closes the third's.
    expect((await s.send(req(servers[1]!.port))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect((await s.send(req(servers[0]!.port))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    await waitUntil(() => servers[2]!.closed === 1, "the third origin's idle connection to close");
    expect(servers.map((r) => [r.connections, r.closed])).toEqual([
      [2, 1],
      [1, 0],
      [1, 1],
    ]);
  });
});

describe('h1 sender: answers', () => {
  it('chunked and close-delimited bodies: the status and the excerpt', async () => {
    const chunked = await raw((_q, socket) =>
      socket.write('HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nqueued\r\n3\r\n ok\r\n0\r\n\r\n'),
    );
    const closing = await raw((_q, socket) => socket.end('HTTP/1.1 503 Service Unavailable\r\n\r\ncome back later'));
    const s = sender();
    expect(await s.send(req(chunked.port))).toMatchObject({
      outcome: { kind: 'response', statusCode: 202 },
      excerpt: 'queued ok',
    });
    expect(await s.send(req(closing.port))).toMatchObject({
      outcome: { kind: 'response', statusCode: 503 },
      excerpt: 'come back later',
    });
  });

  it('an interim 103 before the answer: the status is the final one', async () => {
    const r = await raw((_q, socket) =>
      socket.write('HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n'),
    );
    expect((await sender().send(req(r.port))).outcome).toEqual({ kind: 'response', statusCode: 204 });
  });

  /**
   * A server that answers with `head`, then `piece` again and again (up to 64 MiB, as fast as the
   * client reads): the bytes it wrote, and how the attempt ended.
   */
  async function flood(head: string, piece: string) {
    const sent = { bytes: 0 };
    const r = await raw((_q, socket) => {
      socket.write(head);
      const more = () => {
        while (!socket.destroyed && sent.bytes < 64 * 1024 * 1024) {
          sent.bytes += piece.length;
          if (!socket.write(piece)) return void socket.once('drain', more);
        }
      };
      more();
    });
    const res = await sender().send(req(r.port, { timeoutMs: 30_000 }));
    await waitUntil(() => r.closed === 1, 'the connection to close');
    return { outcome: res.outcome, written: sent.bytes };
  }

  it('interim answers without end: refused once their heads pass the framing budget, and the connection is closed', async () => {
    const hint = 'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n';
    const { outcome, written } = await flood('', hint);
    expect(outcome).toEqual({ kind: 'error', error: 'network' });
    // Stopped at the budget (512 KiB), not at the deadline or the end of the flood.
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('chunks of one byte under long extensions: the status stands, and the connection is closed at the framing budget', async () => {
    const { outcome, written } = await flood(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n',
      `1;${'x'.repeat(8_000)}\r\nx\r\n`,
    );
    expect(outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('redirects are answers, never followed', async () => {
    const r = await raw((_q, socket) =>
      socket.write(
        'HTTP/1.1 307 Temporary Redirect\r\nLocation: https://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n',
      ),
    );
    expect((await sender().send(req(r.port))).outcome).toEqual({ kind: 'response', statusCode: 307 });
    expect(r.requests).toHaveLength(1);
  });

  it('a body past 64 KiB: the status stands, the excerpt is its first KiB, and the connection is dropped', async () => {
    const big = 'é'.repeat(100_000); // two bytes each
    const r = await raw((_q, socket) =>
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(big)}\r\n\r\n${big}`),
    );
    const s = sender();
    const sent = await s.send(req(r.port));
    expect(sent.outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(sent.excerpt).toBe('é'.repeat(512));
    // A character cut at the KiB reads as U+FFFD.
    const odd = await raw((_q, socket) => socket.end(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\na${big}`));
    expect((await sender().send(req(odd.port))).excerpt).toBe(`a${'é'.repeat(511)}\uFFFD`);
    expect((await s.send(req(r.port))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(r.connections).toBe(2);
  });

  it('a malformed answer: error network, and its connection is not used again', async () => {
    const r = await raw((_q, socket, nth) =>
      socket.write(nth === 0 && r.connections === 1 ? 'HTTP/1.1 2xx Fine\r\n\r\n' : OK),
    );
    const s = sender();
    expect((await s.send(req(r.port))).outcome).toEqual({ kind: 'error', error: 'network' });
    expect((await s.send(req(r.port))).outcome).toEqual({ kind: 'response', statusCode: 200 });
    expect(r.connections).toBe(2);
  });

  it('a status, then the connection lost mid-body: the status counts', async () => {
    const r = await raw((_q, socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart');
      setTimeout(() => socket.destroy(), 20);
    });
    expect(await sender().send(req(r.port))).toMatchObject({
      outcome: { kind: 'response', statusCode: 200 },
      excerpt: 'part',
    });
  });
});

describe('h1 sender: failures to connect, and closing', () => {
  it('a refused connection fails every attempt waiting for that origin with refused', async () => {
    const r = await raw(() => {});
    const port = r.port;
    await r.close();
    const s = sender({ connectionsPerOrigin: 1 });
    const results = await Promise.all([0, 1, 2].map(() => s.send(req(port))));
    expect(results.map((x) => x.outcome)).toEqual([0, 1, 2].map(() => ({ kind: 'error', error: 'refused' })));
  });

  it('one handshake lost among several at a cold start: the attempts wait for the other connections, none fails', async () => {
    const r = await raw((_q, socket) => socket.write(OK));
    let accepted = 0;
    r.server.prependListener('connection', (socket: Socket) => {
      if (accepted++ === 0) socket.destroy();
    });
    const s = sender({ connectionsPerOrigin: 4 });
    const results = await Promise.all([0, 1, 2, 3].map((i) => s.send(req(r.port, { path: `/${i}` }))));
    expect(results.map((x) => x.outcome)).toEqual([0, 1, 2, 3].map(() => ({ kind: 'response', statusCode: 200 })));
    expect(accepted).toBeGreaterThanOrEqual(2);
  });

  it('a server that accepts the connection and never finishes the handshake: timeout, and the sender closes its sockets', async () => {
    // TCP only: the client's hello is read and never answered.
    const held = new Set<Socket>();
    let closedByClient = 0;
    const server = net.createServer((socket) => {
      held.add(socket);
      socket.on('data', () => {});
      socket.on('error', () => {});
      socket.on('close', () => {
        held.delete(socket);
        closedByClient++;
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          for (const s of held) s.destroy();
          server.close(() => r());
        }),
    );
    const port = (server.address() as AddressInfo).port;
    const s = sender({ connectionsPerOrigin: 4 });
    const results = await Promise.all([0, 1, 2, 3, 4, 5].map(() => s.send(req(port, { timeoutMs: 300 }))));
    expect(results.map((x) => x.outcome)).toEqual(results.map(() => ({ kind: 'error', error: 'timeout' })));
    // The endpoint's own failure, counted: none is given back as unsent.
    expect(results.filter((x) => x.unsent)).toEqual([]);
    // The connections it opened (at most its bound) are closed from its side, not left open.
    await waitUntil(() => closedByClient >= 1 && held.size === 0, 'the stalled connections to close');
    expect(closedByClient).toBeLessThanOrEqual(4);
    // And the origin can be dialled again: the next attempt opens a new connection.
    const before = closedByClient;
    expect((await s.send(req(port, { timeoutMs: 300 }))).outcome).toEqual({ kind: 'error', error: 'timeout' });
    await waitUntil(() => closedByClient > before && held.size === 0, 'the next connection to open and close');
  });

  it('a certificate that does not name the host: error tls, nothing sent', async () => {
    const r = await raw((_q, socket) => socket.write(OK));
    const s = sender({ resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
    const sent = await s.send({ ...req(r.port), url: `https://wrong-name.example:${r.port}/hook` });
    expect(sent.outcome).toEqual({ kind: 'error', error: 'tls' });
    expect(r.requests).toHaveLength(0);
  });

  it('a header value with a line break is refused before anything is sent', async () => {
    const r = await raw((_q, socket) => socket.write(OK));
    await expect(sender().send(req(r.port, { headers: { 'x-evil': 'a\r\nx-injected: 1' } }))).rejects.toThrow(
      /cannot be sent/,
    );
    expect(r.requests).toHaveLength(0);
  });

  it('close() ends once the last connection has closed behind attempts given back while queued', async () => {
    // One connection: /second waits behind /first, is given back unsent at a stop, and /first's
    // answer then closes the connection. Nothing is left to close, so close() resolves.
    let held: tls.TLSSocket | undefined;
    const r = await raw((q, socket) => {
      if (q.includes('/first')) held = socket; // answered once /second is given back
    });
    const s = createH1Sender({ allowPrivateTargets: true, connectionsPerOrigin: 1 });
    const first = s.send(req(r.port, { path: '/first' }));
    await waitUntil(() => r.requests.length === 1, 'the first request to arrive');
    const second = s.send(req(r.port, { path: '/second' }));
    s.giveBackQueued!();
    expect(await second).toMatchObject({ outcome: { kind: 'error', error: 'timeout' }, unsent: true });
    held!.end('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok');
    expect((await first).outcome).toEqual({ kind: 'response', statusCode: 200 });
    // The server ended the connection and the client then closed its side: the client's close
    // event ran in that turn of the event loop, before the server (in this process too) could
    // read the end of the connection.
    await waitUntil(() => r.closed === 1, 'the connection to close');
    await s.close(); // hangs (the test's timeout) if the origin is kept
    expect(r.requests.map((q) => q.split(' ')[1])).toEqual(['/first']);
  });

  it('close() lets attempts in flight finish, then refuses new ones', async () => {
    const r = await raw((_q, socket) => setTimeout(() => socket.write(OK), 150));
    const s = createH1Sender({ allowPrivateTargets: true });
    const inFlight = s.send(req(r.port));
    await sleep(50);
    const closing = s.close();
    expect((await inFlight).outcome).toEqual({ kind: 'response', statusCode: 200 });
    await closing;
    expect((await s.send(req(r.port))).outcome).toEqual({ kind: 'error', error: 'network' });
    expect(r.requests).toHaveLength(1);
  });
});
