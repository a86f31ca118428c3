import { checkSignature, type VerifyFailure } from './domain/signature.js';

/** Thrown by verifySignature; `reason` says which check failed. */
export class WebhookVerificationError extends Error {
  constructor(readonly reason: VerifyFailure) {
    super(`webhook signature verification failed: ${reason}`);
    this.name = 'WebhookVerificationError';
  }
}

export type VerifyOptions = {
  /** The account signing secret (whsec_…). */
  secret: string;
  /** The X-Service-Signature header value. */
  header: string | undefined | null;
  /** The request body exactly as received: verify bytes, never re-serialised JSON. */
  rawBody: string | Uint8Array;
  /** Largest allowed |now − t|; 5 minutes by default. It bounds how long a captured request can be replayed. */
  toleranceMs?: number;
  /** Current time in ms (for tests). */
  now?: number;
};

/**
 * Verifies a Canvass webhook signature (`t=<ms>,v1=<hex>`). Returns on success; throws
 * WebhookVerificationError otherwise. The digest comparison is constant-time after a length check.
 * Deduplicate on X-Service-Delivery-Id, not on the signature: each retry is signed afresh.
 */
export function verifySignature(opts: VerifyOptions): void {
  const failure = checkSignature({
    secret: opts.secret,
    header: opts.header,
    rawBody: opts.rawBody,
    toleranceMs: opts.toleranceMs ?? 300_000,
    nowMs: opts.now ?? Date.now(),
  });
  if (failure) throw new WebhookVerificationError(failure);
}
