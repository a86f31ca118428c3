import { createHmac, randomBytes } from 'node:crypto';

// The signing side; receivers (and the tests) verify with @canvass/verify.

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
