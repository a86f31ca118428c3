import { performance } from 'node:perf_hooks';
import type { SendRequest, SendResult } from '../../app/ports/index.js';
import { classifyError } from './classify-error.js';
import type { ResponseHead, ResponseSink } from './response-parser.js';
import type { EndpointLoad } from './origin-queue.js';
import type { Target } from './target.js';

// The answer's first KiB is kept, read as UTF-8: a character cut at the limit reads as U+FFFD.
const EXCERPT_BYTES = 1024;
// Past this the answer body is dropped with its connection rather than read to the end.
const MAX_BODY_READ = 64 * 1024;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const UNSAFE_VALUE = /[\r\n\0]/;

/**
 * One attempt's life in the sender (h1-sender.ts): its request bytes, queued for its origin, then
 * written on one connection; its answer's status and first KiB; settled once, by the answer, a
 * failure, its deadline, or (never written) the deadline spent queued, whichever comes first.
 */
export type Attempt<C = unknown> = {
  /** The request as written: made at once for static headers, else at each write (frame). */
  bytes: string;
  frame: (() => string) | null;
  /** When it was queued, then when its own time began: its write, or its connection's opening. */
  started: number;
  /** Written to a connection (at least once). */
  assigned: boolean;
  resolve(r: SendResult): void;
  timer: NodeJS.Timeout | undefined;
  conn: C | null;
  status: number;
  durationMs: number;
  read: number;
  excerpt: Buffer[] | null;
  excerptBytes: number;
  settled: boolean;
  timedOut: boolean;
  retried: boolean;
  /** Its endpoint's attempts queued and on the wire, and its last answer (origin-queue.ts). */
  load: EndpointLoad;
};

export function newAttempt<C>(
  t: Target,
  req: SendRequest,
  started: number,
  resolve: (r: SendResult) => void,
): Attempt<C> {
  const headers = req.headers;
  return {
    // Static headers are framed at once, so that one that cannot be sent refuses the send.
    bytes: typeof headers === 'function' ? '' : frameRequest(t, req.body, headers),
    frame: typeof headers === 'function' ? () => frameRequest(t, req.body, headers()) : null,
    started,
    assigned: false,
    resolve,
    timer: undefined,
    conn: null,
    status: 0,
    durationMs: 0,
    read: 0,
    excerpt: null,
    excerptBytes: 0,
    settled: false,
    timedOut: false,
    retried: false,
    load: t.load,
  };
}

/**
 * The request as written on the connection: head and body in one string. Throws for a header
 * that cannot be sent as given (a name that is not a token, a value with CR, LF or NUL).
 */
export function frameRequest(t: Target, body: string, headers: Record<string, string>): string {
  let head = `POST ${t.path} HTTP/1.1\r\nhost: ${t.hostHeader}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  for (const name in headers) {
    const value = headers[name]!;
    if (!TOKEN.test(name) || UNSAFE_VALUE.test(value))
      throw new Error(`header ${JSON.stringify(name)} cannot be sent as given`);
    head += `${name}: ${value}\r\n`;
  }
  return head + '\r\n' + body;
}

/**
 * Makes its bytes as it is written, if they are not made yet; false, and the attempt settled
 * failed, when its headers cannot be sent as given.
 */
export function framed(a: Attempt): boolean {
  if (a.bytes) return true;
  try {
    a.bytes = a.frame!();
    return true;
  } catch (err) {
    failed(a, err);
    return false;
  }
}

export function settle(a: Attempt, r: SendResult): void {
  if (a.settled) return;
  a.settled = true;
  clearTimeout(a.timer);
  a.resolve(r);
}

/** Settles with the answer's status, its time to the head, and its excerpt. */
export function answered(a: Attempt): void {
  let excerpt: string | null = null;
  if (a.excerpt) excerpt = (a.excerpt.length === 1 ? a.excerpt[0]! : Buffer.concat(a.excerpt)).toString('utf8') || null;
  settle(a, { outcome: { kind: 'response', statusCode: a.status }, durationMs: a.durationMs, excerpt });
}

/** Settles an attempt never written to the endpoint (SendResult.unsent). */
export function unsent(a: Attempt): void {
  settle(a, {
    outcome: { kind: 'error', error: 'timeout' },
    durationMs: performance.now() - a.started,
    excerpt: null,
    unsent: true,
  });
}

export function failed(a: Attempt, err: unknown): void {
  settle(a, {
    outcome: { kind: 'error', error: classifyError(err, a.timedOut) },
    durationMs: performance.now() - a.started,
    excerpt: null,
  });
}

/** What a connection knows of the answer it is reading. */
export type Answering = {
  current: Attempt | null;
  keepAliveMs: number | null;
  ended: boolean;
  reusable: boolean;
  tooLarge: boolean;
};

/**
 * Where the response parser puts a connection's answer: the status and time to the head, the
 * first bytes of the body, whether the body grew past what is read, and whether the connection
 * may carry another request.
 */
export function answerSink(conn: Answering): ResponseSink {
  return {
    head(h: ResponseHead) {
      const a = conn.current!;
      a.status = h.status;
      a.durationMs = performance.now() - a.started;
      conn.keepAliveMs = h.keepAliveMs;
    },
    body(chunk: Buffer) {
      const a = conn.current!;
      a.read += chunk.length;
      if (a.excerptBytes < EXCERPT_BYTES && chunk.length) {
        const part = Buffer.from(chunk.subarray(0, EXCERPT_BYTES - a.excerptBytes));
        (a.excerpt ??= []).push(part);
        a.excerptBytes += part.length;
      }
      if (a.read > MAX_BODY_READ) conn.tooLarge = true;
    },
    end(reusable: boolean) {
      conn.ended = true;
      conn.reusable = reusable;
    },
  };
}
