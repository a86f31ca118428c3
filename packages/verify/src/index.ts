import { createHmac, timingSafeEqual } from 'node:crypto';

/** Why a request failed verification. */
export type VerifyFailure = 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'signature_mismatch';

const MARK = Symbol.for('@canvass/verify:WebhookVerificationError');

/** Thrown by verifySignature; `reason` says which check failed. */
export class WebhookVerificationError extends Error {
  readonly reason: VerifyFailure;

  constructor(reason: VerifyFailure) {
    super(`webhook signature verification failed: ${reason}`);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
    Object.defineProperty(this, MARK, { value: true });
  }

  /**
   * The ES module and CommonJS builds each define this class: an app that loads both (ES modules
   * beside a CommonJS plugin) still recognises either build's errors with `instanceof`.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    // A subclass keeps the usual test: not every error of this class is one of the subclass's.
    if (this !== WebhookVerificationError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARK] === true;
  }
}

export type VerifyOptions = {
  /** The account signing secret (whsec_…). */
  secret: string;
  /**
   * The X-Service-Signature header value. An array (a header sent more than once) is read as its
   * values joined with commas, as Node joins repeated headers.
   */
  header: string | readonly string[] | undefined | null;
  /** The request body exactly as received: verify bytes, never re-serialised JSON. */
  rawBody: string | Uint8Array;
  /** Largest allowed |now − t|; 5 minutes by default. It bounds how long a captured request can be replayed. */
  toleranceMs?: number;
  /** Current time in ms (for tests). */
  now?: number;
};

/** Five minutes, in milliseconds. */
export const DEFAULT_TOLERANCE_MS = 300_000;

/**
 * Verifies a Canvass webhook signature (`t=<ms>,v1=<hex>`, possibly with more `v1=` entries).
 * Returns on success; throws WebhookVerificationError otherwise. It passes when any v1 is the
 * lowercase hex HMAC-SHA256, keyed with the secret's UTF-8 bytes, of `<t>.<raw body>`; the digest
 * comparison is constant-time after a length check. Deduplicate on X-Service-Delivery-Id, not on
 * the signature: each retry is signed afresh.
 */
export function verifySignature(opts: VerifyOptions): void {
  const { secret, rawBody } = opts;
  const toleranceMs = opts.toleranceMs ?? DEFAULT_TOLERANCE_MS;
  const now = opts.now ?? Date.now();
  // Misuse, not a bad request: a missing secret or a parsed body would otherwise fail every delivery.
  if (typeof secret !== 'string' || secret === '') throw new TypeError('secret must be the signing secret (whsec_…)');
  // Any byte view (a Buffer, a Uint8Array from another realm): Uint8Array alone misses the latter.
  if (typeof rawBody !== 'string' && !ArrayBuffer.isView(rawBody))
    throw new TypeError('rawBody must be the request body as received (string, Buffer or Uint8Array), not parsed JSON');
  if (typeof toleranceMs !== 'number' || !(toleranceMs >= 0))
    throw new RangeError('toleranceMs must be a number of milliseconds ≥ 0');
  // A time that is no number would pass every timestamp (NaN compares false), so it is refused.
  if (typeof now !== 'number' || !Number.isFinite(now))
    throw new RangeError('now must be a finite number of milliseconds');
  const given = opts.header;
  if (given != null && typeof given !== 'string' && !Array.isArray(given))
    throw new TypeError('header must be the X-Service-Signature header value (a string, or an array of them)');

  const header = typeof given === 'string' || given == null ? given : given.join(',');
  if (!header) throw new WebhookVerificationError('missing_header');
  let t: string | undefined;
  let ts = 0;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      t = value;
      ts++;
    } else if (key === 'v1') v1.push(value);
  }
  // One t: verifiers that kept the first or the last of several would disagree.
  if (t === undefined || ts > 1 || !/^[0-9]{1,16}$/.test(t) || v1.length === 0)
    throw new WebhookVerificationError('malformed_header');
  if (Math.abs(now - Number(t)) > toleranceMs) throw new WebhookVerificationError('timestamp_out_of_tolerance');

  // The signed text is `<t>.<body>` with t exactly as the header carries it: one signature
  // verifies under one header only.
  const hmac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  hmac.update(`${t}.`, 'utf8');
  hmac.update(rawBody);
  const expected = Buffer.from(hmac.digest('hex'), 'utf8');
  for (const candidate of v1) {
    const given = Buffer.from(candidate, 'utf8');
    // Length first: timingSafeEqual throws on unequal lengths, and the length gives nothing away.
    if (given.length === expected.length && timingSafeEqual(given, expected)) return;
  }
  throw new WebhookVerificationError('signature_mismatch');
}
