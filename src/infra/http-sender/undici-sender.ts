import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import type { HttpSender, SendRequest, SendResult } from '../../app/delivery-ports.js';
import { isIpLiteral, isPublicAddress } from '../../domain/ip-ranges.js';
import type { DeliveryError } from '../../domain/retry-policy.js';
import { guardedLookup } from './guarded-lookup.js';

const EXCERPT_BYTES = 1024;
// Past this the answer body is dropped with its connection rather than read to the end.
const MAX_BODY_READ = 64 * 1024;

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|UNABLE_TO_|SELF_SIGNED|ERR_OSSL|HOSTNAME_MISMATCH)/;

/** Maps what undici and Node throw to the error words of the delivery log (DESIGN §2 Attempt). */
export function classifyError(err: unknown, timedOut: boolean): DeliveryError {
  if (timedOut) return 'timeout';
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    const code = String((e as { code?: unknown }).code ?? '');
    const name = String((e as { name?: unknown }).name ?? '');
    if (code === 'CANVASS_BLOCKED_ADDRESS') return 'blocked_address';
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_NODATA') return 'dns';
    if (code === 'ECONNREFUSED') return 'refused';
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') return 'reset';
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'ETIMEDOUT' || name === 'TimeoutError') return 'timeout';
    if (TLS_CODES.test(code)) return 'tls';
    e = (e as { cause?: unknown }).cause;
  }
  return 'network';
}

export type SenderOptions = {
  allowPrivateTargets: boolean;
  /** Most sockets kept per origin (keep-alive pool size): the per-endpoint concurrency bound. */
  connectionsPerOrigin?: number;
  resolver?: Parameters<typeof guardedLookup>[0]['resolver'];
};

export function createUndiciSender(opts: SenderOptions): HttpSender {
  const agent = new Agent({
    connections: opts.connectionsPerOrigin ?? 32,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { lookup: guardedLookup({ allowPrivate: opts.allowPrivateTargets, resolver: opts.resolver }) },
  });

  // What an attempt needs from its URL, parsed once for a busy endpoint rather than per attempt:
  // where to send, and whether it is a non-public literal address (literals never reach the
  // lookup, so the SSRF guard checks them here).
  type Target = { origin: string; path: string; blockedLiteral: boolean };
  const targets = new Map<string, Target>();
  const target = (url: string): Target => {
    let t = targets.get(url);
    if (!t) {
      const u = new URL(url);
      t = { origin: u.origin, path: u.pathname + u.search, blockedLiteral: isIpLiteral(u.hostname.replace(/^\[|\]$/g, '')) && !isPublicAddress(u.hostname) };
      if (targets.size >= 10_000) targets.clear();
      targets.set(url, t);
    }
    return t;
  };

  return {
    send(req: SendRequest): Promise<SendResult> {
      const started = performance.now();
      let dest: Target;
      try {
        dest = target(req.url);
      } catch (err) {
        return Promise.resolve({ outcome: { kind: 'error', error: classifyError(err, false) }, durationMs: 0, excerpt: null });
      }
      if (!opts.allowPrivateTargets && dest.blockedLiteral) {
        return Promise.resolve({ outcome: { kind: 'error', error: 'blocked_address' }, durationMs: 0, excerpt: null });
      }
      // undici's dispatch API with a handler of our own: no response stream, no async
      // iterator and no AbortSignal per attempt, which were most of the sender's cost per
      // delivery (bench/, README "Performance"). One plain timer is the whole-attempt deadline.
      return new Promise<SendResult>((resolve) => {
        let controller: Dispatcher.DispatchController | undefined;
        let statusCode = 0;
        let durationMs = 0;
        let excerpt = '';
        let read = 0;
        let settled = false;
        let timedOut = false;
        const finish = (r: SendResult) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(r);
        };
        const answered = () => finish({ outcome: { kind: 'response', statusCode }, durationMs, excerpt: excerpt.slice(0, EXCERPT_BYTES) || null });
        const failed = (err: unknown) => finish({ outcome: { kind: 'error', error: classifyError(err, timedOut) }, durationMs: performance.now() - started, excerpt: null });
        const timer = setTimeout(() => {
          timedOut = true;
          const reason = new DOMException('the attempt took longer than its deadline', 'TimeoutError');
          // The status is what counts: a body cut short by the deadline does not change it.
          if (statusCode) answered();
          else failed(reason);
          controller?.abort(reason);
        }, req.timeoutMs);
        // undici never follows redirects unless told to: a 3xx comes back as a plain answer.
        agent.dispatch(
          { origin: dest.origin, path: dest.path, method: 'POST', body: req.body, headers: req.headers },
          {
            onRequestStart(c) {
              controller = c;
              // Timed out while waiting for a connection: never sent.
              if (timedOut) c.abort(new DOMException('the attempt took longer than its deadline', 'TimeoutError'));
            },
            onResponseStart(_c, status) {
              statusCode = status;
              durationMs = performance.now() - started;
            },
            onResponseData(c, chunk) {
              read += chunk.length;
              if (excerpt.length < EXCERPT_BYTES) excerpt += chunk.toString('utf8');
              if (read > MAX_BODY_READ) {
                answered();
                c.abort(new Error('answer body too large: dropped with its connection'));
              }
            },
            onResponseEnd: answered,
            onResponseError(_c, err) {
              if (statusCode) answered();
              else failed(err);
            },
          },
        );
      });
    },
    close: () => agent.close(),
  };
}
