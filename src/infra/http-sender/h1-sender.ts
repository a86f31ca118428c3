import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import type { HttpSender, SendRequest, SendResult } from '../../app/ports/index.js';
import { isIpLiteral } from '../../domain/ip-ranges.js';
import { answered, answerSink, failed, framed, newAttempt, unsent } from './attempt.js';
import { classifyError, ClosedError, DeadlineError } from './classify-error.js';
import { guardedLookup } from './guarded-lookup.js';
import { ResponseParser } from './response-parser.js';
import { OriginQueue, type EndpointLoad } from './origin-queue.js';
import type { Attempt, Conn, Origin } from './pool.js';
import { parseTarget, type Target } from './target.js';

// A connection idle this long is closed, and one the server keeps less long this much before the
// server would, so a request seldom meets a closing socket (one that does is sent again: onClose).
const IDLE_MS = 30_000;
const KEEP_ALIVE_MARGIN_MS = 2_000;
/** Idle connections kept across every origin by default (about 50 KB each, TLS included). */
export const MAX_IDLE_CONNECTIONS = 2_048;

export type SenderOptions = {
  allowPrivateTargets: boolean;
  /**
   * Most sockets kept per origin (keep-alive pool size): this process's share of the
   * per-endpoint concurrency bound, changed later with setConnectionsPerOrigin.
   */
  connectionsPerOrigin?: number;
  /**
   * Most idle connections kept across all origins (MAX_IDLE_CONNECTIONS): endpoints on many
   * origins (ports, host names) would otherwise keep up to a pool each for IDLE_MS.
   */
  maxIdleConnections?: number;
  resolver?: Parameters<typeof guardedLookup>[0]['resolver'];
};

/**
 * The webhook sender: HTTP/1.1 over TLS, with keep-alive connections pooled per origin (at most
 * `connectionsPerOrigin` each), one request at a time per connection.
 *
 * Written for this one job rather than borrowed from a general client: an attempt is one POST of
 * a body already in memory whose answer matters for its status and first KiB only, and a general
 * client's per-request machinery (request objects, header validation tables, handler adapters,
 * a parser calling back per header) would be most of the worker's CPU per delivery
 * (docs/performance.md). What a general client also does and this one must too:
 * - every connection goes through the SSRF guard's lookup, and literal addresses are checked here;
 * - an attempt's deadline runs from its write (see send); a connection opening past it is closed;
 * - answers are framed strictly (response-parser.ts); redirects are never followed;
 * - a request written to a reused connection that the server closed before answering anything
 *   (its idle timeout raced ours) is sent once more on a new connection, as the same attempt: it
 *   may have arrived, but delivery is at-least-once and deduplicated on the delivery id; any
 *   other failure is the attempt's, and the retry ladder takes it from there.
 */
export type H1Sender = HttpSender & {
  /**
   * A new bound on connections per origin (at least 1). Idle connections above it are closed at
   * once, busy ones as their answers come in; no new connection opens until an origin is under it.
   */
  setConnectionsPerOrigin(n: number): void;
};

export function createH1Sender(opts: SenderOptions): H1Sender {
  let maxConns = Math.max(1, opts.connectionsPerOrigin ?? 32);
  const lookup = guardedLookup({ allowPrivate: opts.allowPrivateTargets, resolver: opts.resolver });
  const origins = new Map<string, Origin>();
  const targets = new Map<string, Target>();
  // One load per endpoint (origin and path), however its URL is spelled.
  const loads = new Map<string, EndpointLoad>();
  let closed = false;
  let allClosed: (() => void) | undefined;
  // Every idle connection, least recently used first: past the bound, the first is closed.
  const idleAll = new Set<Conn>();
  const maxIdle = Math.max(1, opts.maxIdleConnections ?? MAX_IDLE_CONNECTIONS);

  const target = (url: string): Target => {
    let t = targets.get(url);
    if (!t) {
      t = parseTarget(url);
      if (targets.size >= 10_000) for (const m of [targets, loads]) m.clear();
      const key = t.origin + t.path;
      t.load = loads.get(key) ?? t.load;
      loads.set(key, t.load);
      targets.set(url, t);
    }
    return t;
  };

  const originFor = (t: Target): Origin => {
    let o = origins.get(t.origin);
    if (!o) {
      o = {
        key: t.origin,
        host: t.host,
        port: t.port,
        servername: isIpLiteral(t.host) ? undefined : t.host.replace(/\.$/, ''),
        timeoutMs: 0,
        conns: new Set(),
        idle: [],
        queue: new OriginQueue(),
        connecting: 0,
        dropped: 0,
      };
      origins.set(t.origin, o);
    }
    return o;
  };

  const drop = (conn: Conn) => {
    conn.reusable = false;
    if (!conn.dropped) {
      conn.dropped = true;
      conn.origin.dropped++;
    }
    conn.socket.destroy();
  };
  // Connections that count against the bound: open or opening, not being closed.
  const kept = (o: Origin) => o.conns.size - o.dropped;

  const pump = (o: Origin) => {
    while (o.queue.any()) {
      const conn = o.idle.pop();
      if (conn) {
        if (conn.socket.destroyed || !conn.socket.writable) {
          idleAll.delete(conn);
          continue;
        }
        const a = o.queue.take(maxConns)!;
        if (framed(a)) {
          idleAll.delete(conn);
          assign(conn, a);
        } else o.idle.push(conn);
        continue;
      }
      // More connections only for attempts that no connection being opened will take.
      if (o.conns.size < maxConns && o.connecting < o.queue.length && !closed) connect(o);
      else break;
    }
  };

  const assign = (conn: Conn, a: Attempt) => {
    // Its own time (deadline, duration) runs from its write, or from the opening of a connection
    // whose first request it is: time queued behind the origin's busy connections is not the endpoint's.
    if (!a.assigned) {
      a.assigned = true;
      a.started = conn.served === 0 ? Math.max(a.started, conn.openedAt) : performance.now();
    }
    conn.current = a;
    a.load.held++;
    conn.parser = new ResponseParser(answerSink(conn));
    conn.ended = false;
    conn.tooLarge = false;
    a.conn = conn;
    conn.socket.write(a.bytes);
  };

  const release = (conn: Conn) => {
    if (closed) return drop(conn);
    const o = conn.origin;
    // The bound was lowered (setConnectionsPerOrigin): a connection above it is not reused, if
    // another open one stays to serve the waiting attempts (those still opening may fail).
    if (kept(o) > maxConns && [...o.conns].some((c) => c !== conn && c.ready && !c.dropped)) return drop(conn);
    const serverIdle = conn.keepAliveMs === null ? IDLE_MS : conn.keepAliveMs - KEEP_ALIVE_MARGIN_MS;
    if (serverIdle <= 0) return drop(conn);
    conn.idleUntil = Date.now() + Math.min(IDLE_MS, serverIdle);
    o.idle.push(conn);
    idleAll.add(conn);
    // After the pump, which may hand this connection straight to a waiting attempt.
    pump(o);
    while (idleAll.size > maxIdle) {
      const oldest = idleAll.values().next().value!;
      idleAll.delete(oldest);
      drop(oldest);
    }
  };

  // The connection's request is done with: its endpoint holds one connection fewer.
  const letGo = (conn: Conn) => {
    if (conn.current) conn.current.load.held--;
    conn.current = null;
  };
  const onData = (conn: Conn, chunk: Buffer) => {
    const a = conn.current;
    // Bytes on a connection with no request out: it is not speaking HTTP as we are.
    if (!a || !conn.parser) return drop(conn);
    try {
      conn.parser.feed(chunk);
    } catch (err) {
      conn.error = err;
      return drop(conn);
    }
    if (a.status) a.load.answeredAt = performance.now();
    if (conn.tooLarge) {
      letGo(conn);
      answered(a);
      return drop(conn);
    }
    if (!conn.ended) return;
    letGo(conn);
    conn.parser = null;
    conn.served++;
    answered(a);
    if (!conn.reusable || a.timedOut) drop(conn);
    else release(conn);
  };

  const onClose = (conn: Conn) => {
    const o = conn.origin;
    o.conns.delete(conn);
    if (conn.dropped) o.dropped--;
    const i = o.idle.indexOf(conn);
    if (i >= 0) o.idle.splice(i, 1);
    idleAll.delete(conn);
    if (!conn.ready) {
      o.connecting--;
      // The last hope of this origin failed to open (refused, DNS, TLS, the SSRF guard): the
      // attempts waiting fail with its error, as the ones after them would. While another
      // connection is open or opening they wait for it instead (one handshake lost among
      // several is not an outage), and a failed connection is not replaced at once, so an
      // origin that refuses everything is not dialled in a loop.
      if (o.connecting === 0 && ![...o.conns].some((c) => c.ready)) {
        const err = conn.error ?? new ClosedError();
        for (const a of o.queue.takeAll()) failed(a, err);
      }
    }
    const a = conn.current;
    letGo(conn);
    if (a && !a.settled) {
      if (conn.parser?.eof()) answered(a);
      else if (a.status)
        answered(a); // the status is what counts, whatever came of the body
      else if (conn.served > 0 && !conn.parser?.started && !a.retried && !a.timedOut && !closed) {
        a.retried = true;
        a.conn = null;
        if (a.frame) a.bytes = ''; // signed afresh at its new write
        o.queue.unshift(a);
      } else failed(a, conn.error ?? new ClosedError());
    }
    // Attempts settled while queued (given back, past their deadline) do not keep the origin:
    // with no connection left, nothing would ever remove it, and close() would wait for it.
    if (!o.conns.size && !o.queue.any()) origins.delete(o.key);
    else if (conn.ready) pump(o);
    if (closed && !origins.size) allClosed?.();
  };

  const connect = (o: Origin) => {
    o.connecting++;
    // onread: each read is handed over as it is, without the readable stream's buffering and
    // events (the buffer is reused for the next read: the parser copies what it keeps). 16 KiB,
    // a TLS record's most, per connection.
    const options: tls.ConnectionOptions & { onread: { buffer: Buffer; callback(n: number, buf: Buffer): void } } = {
      host: o.host,
      port: o.port,
      servername: o.servername,
      lookup,
      ALPNProtocols: ['http/1.1'],
      onread: { buffer: Buffer.allocUnsafe(16 * 1024), callback: (n, buf) => onData(conn, buf.subarray(0, n)) },
    };
    const socket = tls.connect(options);
    const conn: Conn = {
      socket,
      origin: o,
      ready: false,
      current: null,
      parser: null,
      served: 0,
      idleUntil: 0,
      keepAliveMs: null,
      ended: false,
      reusable: true,
      tooLarge: false,
      error: undefined,
      dropped: false,
      openedAt: performance.now(),
    };
    o.conns.add(conn);
    socket.setNoDelay(true);
    // A connection not open within an attempt's deadline serves no attempt: one whose TCP
    // connect or TLS handshake the server never finishes would otherwise count against the
    // origin's bound, and hold its socket, until the server closed it.
    const opening = setTimeout(() => {
      conn.error ??= new DeadlineError();
      drop(conn);
    }, o.timeoutMs);
    socket.once('secureConnect', () => {
      clearTimeout(opening);
      o.connecting--;
      conn.ready = true;
      release(conn);
    });
    socket.on('error', (err) => {
      conn.error ??= err;
    });
    socket.on('close', () => {
      clearTimeout(opening);
      onClose(conn);
    });
  };

  // Idle connections past their time are closed once a second, rather than a timer per request.
  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const o of origins.values()) for (const c of [...o.idle]) if (c.idleUntil <= now) drop(c);
  }, 1_000);
  sweeper.unref();

  return {
    setConnectionsPerOrigin(n: number) {
      maxConns = Math.max(1, Math.floor(n));
      for (const o of origins.values()) {
        // Least recently used first, skipping those already closing; each drop's close event
        // takes it out of conns and idle.
        for (const c of [...o.idle]) {
          if (kept(o) <= maxConns) break;
          if (!c.dropped && !c.socket.destroyed) drop(c);
        }
        pump(o);
      }
    },
    send(req: SendRequest): Promise<SendResult> {
      const started = performance.now();
      let t: Target;
      try {
        t = target(req.url);
      } catch (err) {
        return Promise.resolve({
          outcome: { kind: 'error', error: classifyError(err, false) },
          durationMs: 0,
          excerpt: null,
        });
      }
      if (!opts.allowPrivateTargets && t.blockedLiteral) {
        return Promise.resolve({ outcome: { kind: 'error', error: 'blocked_address' }, durationMs: 0, excerpt: null });
      }
      if (closed)
        return Promise.resolve({ outcome: { kind: 'error', error: 'network' }, durationMs: 0, excerpt: null });
      return new Promise<SendResult>((resolve) => {
        const a = newAttempt<Conn>(t, req, started, resolve);
        const o = originFor(t);
        // One timer per attempt, set at its queuing; written later, it gets the rest of its own.
        const onDeadline = () => {
          if (a.settled) return;
          if (a.assigned) {
            const left = a.started + req.timeoutMs - performance.now();
            if (left >= 1) {
              a.timer = setTimeout(onDeadline, left);
              return;
            }
            a.timedOut = true;
            // The status counts, whatever came of the body; a connection mid-answer is dropped.
            if (a.status) answered(a);
            else failed(a, new DeadlineError());
            if (a.conn?.current === a) drop(a.conn);
            return;
          }
          // Never written, behind busy open connections: given back unsent (charged to no one)
          // unless none is open, or its endpoint holds some and answered none since it was
          // queued (it hangs: a timeout). One endpoint hung on a shared host is not another's.
          const ownHung = a.load.answeredAt <= a.started && a.load.held > 0;
          if (!ownHung && [...o.conns].some((c) => c.ready && !c.dropped)) return unsent(a);
          a.timedOut = true;
          failed(a, new DeadlineError());
        };
        a.timer = setTimeout(onDeadline, req.timeoutMs);
        o.timeoutMs = req.timeoutMs;
        o.queue.push(a);
        pump(o);
      });
    },
    giveBackQueued() {
      for (const o of origins.values()) for (const a of o.queue) if (!a.assigned) unsent(a);
    },
    close() {
      closed = true;
      clearInterval(sweeper);
      return new Promise<void>((resolve) => {
        allClosed = resolve;
        for (const o of origins.values()) {
          for (const a of o.queue.takeAll()) failed(a, new ClosedError());
          for (const c of [...o.conns]) if (!c.current) drop(c);
          if (!o.conns.size) origins.delete(o.key);
        }
        if (!origins.size) resolve();
      });
    },
  };
}
