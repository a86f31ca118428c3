import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** v1 = lowercase hex HMAC-SHA256 of "<t>.<raw body>" (t in epoch ms), keyed with the secret's UTF-8 bytes. */
export function signatureDigest(secret: string, t: number, rawBody: string | Uint8Array): string {
  const h = createHmac('sha256', Buffer.from(secret, 'utf8'));
  h.update(`${t}.`);
  h.update(rawBody);
  return h.digest('hex');
}

/** `t=<ms>,v1=<digest>`; with a previous secret (a rotation's overlap), a second v1 after the first. */
export function signatureHeader(
  secret: string,
  t: number,
  rawBody: string | Uint8Array,
  previousSecret?: string | null,
): string {
  const header = `t=${t},v1=${signatureDigest(secret, t, rawBody)}`;
  return previousSecret ? `${header},v1=${signatureDigest(previousSecret, t, rawBody)}` : header;
}

export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export type VerifyFailure = 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'signature_mismatch';

/** Parses and checks a signature header; returns the reason it fails, or null when it holds. */
export function checkSignature(opts: {
  secret: string;
  header: string | undefined | null;
  rawBody: string | Uint8Array;
  toleranceMs: number;
  nowMs: number;
}): VerifyFailure | null {
  if (!opts.header) return 'missing_header';
  let t: string | undefined;
  const v1: string[] = [];
  for (const part of opts.header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't') t = v;
    else if (k === 'v1') v1.push(v);
  }
  if (t === undefined || !/^\d{1,16}$/.test(t) || v1.length === 0) return 'malformed_header';
  if (Math.abs(opts.nowMs - Number(t)) > opts.toleranceMs) return 'timestamp_out_of_tolerance';
  const expected = Buffer.from(signatureDigest(opts.secret, Number(t), opts.rawBody), 'utf8');
  for (const candidate of v1) {
    const given = Buffer.from(candidate, 'utf8');
    // Length first: timingSafeEqual throws on unequal lengths, and length leaks nothing secret.
    if (given.length === expected.length && timingSafeEqual(given, expected)) return null;
  }
  return 'signature_mismatch';
}
