import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newSigningSecret, signatureDigest, signatureHeader } from '../../src/domain/signature.js';
import { verifySignature, WebhookVerificationError, type VerifyOptions } from '../../src/verify.js';

const SECRET = 'whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
const T = Date.parse('2026-01-01T00:00:00Z');
const BODY =
  '{"type":"submitted-responses","accountId":"acc_1","pollId":"poll_1","responses":{"sld_1":{"value":"Zoë, 5 ★"}},"timestamp":1767225600000}';
const MIN5 = 5 * 60_000;

/** An independent HMAC, so a wrong construction in the code under test fails here. */
const independent = (secret: string, t: number, body: string | Buffer) =>
  createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`, 'utf8'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body]))
    .digest('hex');

/** The reason verifySignature throws with, or null when it accepts. */
function reason(opts: Partial<VerifyOptions>): string | null {
  try {
    verifySignature({ secret: SECRET, header: signatureHeader(SECRET, T, BODY), rawBody: BODY, now: T, ...opts });
    return null;
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.reason;
    throw e;
  }
}

describe('signatureHeader', () => {
  it('has the form t=<ms>,v1=<64 lowercase hex> with t the given ms timestamp', () => {
    const header = signatureHeader(SECRET, T, BODY);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(header.startsWith(`t=${T},v1=`)).toBe(true);
  });

  it('v1 is HMAC-SHA256(secret, "<t>.<body>") in lowercase hex', () => {
    const header = signatureHeader(SECRET, T, BODY);
    const v1 = header.split(',v1=')[1];
    expect(v1).toBe(createHmac('sha256', SECRET).update(`${T}.${BODY}`).digest('hex'));
    expect(v1).toBe(independent(SECRET, T, BODY));
    expect(signatureDigest(SECRET, T, BODY)).toBe(v1);
  });

  it('signs bytes: a string body and its UTF-8 Buffer give the same digest', () => {
    expect(signatureDigest(SECRET, T, Buffer.from(BODY, 'utf8'))).toBe(signatureDigest(SECRET, T, BODY));
  });

  it('keys the HMAC with the secret string’s UTF-8 bytes', () => {
    const secret = 'whsec_ünïcødé';
    expect(signatureDigest(secret, T, BODY)).toBe(
      createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${T}.${BODY}`).digest('hex'),
    );
  });

  it('each attempt signs afresh: another t gives another digest for the same body', () => {
    expect(signatureDigest(SECRET, T, BODY)).not.toBe(signatureDigest(SECRET, T + 1, BODY));
  });
});

describe('newSigningSecret', () => {
  it('is whsec_ + 32 random bytes in base64url', () => {
    const s = newSigningSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(s.slice(6), 'base64url')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(s);
  });
});

describe('verifySignature: accepts', () => {
  it('a valid header for the body', () => {
    expect(reason({})).toBeNull();
  });

  it('a raw Buffer body', () => {
    expect(reason({ rawBody: Buffer.from(BODY, 'utf8') })).toBeNull();
  });

  it('a Uint8Array body', () => {
    expect(reason({ rawBody: new Uint8Array(Buffer.from(BODY, 'utf8')) })).toBeNull();
  });

  it('|now − t| of exactly 5 minutes, both directions', () => {
    expect(reason({ now: T + MIN5 })).toBeNull();
    expect(reason({ now: T - MIN5 })).toBeNull();
  });

  it('a header built with an independent HMAC', () => {
    expect(reason({ header: `t=${T},v1=${independent(SECRET, T, BODY)}` })).toBeNull();
  });

  it('spaces after the comma', () => {
    expect(reason({ header: signatureHeader(SECRET, T, BODY).replace(',', ', ') })).toBeNull();
  });

  it('several v1 entries when one of them matches', () => {
    const good = signatureDigest(SECRET, T, BODY);
    expect(reason({ header: `t=${T},v1=${'0'.repeat(64)},v1=${good}` })).toBeNull();
  });

  it('with the default tolerance and the real clock when now is not given', () => {
    const t = Date.now();
    expect(() =>
      verifySignature({ secret: SECRET, header: signatureHeader(SECRET, t, BODY), rawBody: BODY }),
    ).not.toThrow();
    const old = t - MIN5 - 10_000;
    expect(() =>
      verifySignature({ secret: SECRET, header: signatureHeader(SECRET, old, BODY), rawBody: BODY }),
    ).toThrow(WebhookVerificationError);
  });
});

describe('verifySignature: rejects', () => {
  it.each([
    ['undefined', undefined],
    ['null', null],
    ['empty', ''],
  ])('missing header (%s) → missing_header', (_n, header) => {
    expect(reason({ header })).toBe('missing_header');
  });

  it.each([
    ['no t', `v1=${signatureDigest(SECRET, T, BODY)}`],
    ['no v1', `t=${T}`],
    ['empty t', `t=,v1=${signatureDigest(SECRET, T, BODY)}`],
    ['non-numeric t', `t=abc,v1=${signatureDigest(SECRET, T, BODY)}`],
    ['t as an ISO date', `t=2026-01-01T00:00:00Z,v1=${signatureDigest(SECRET, T, BODY)}`],
    ['negative t', `t=-${T},v1=${signatureDigest(SECRET, T, BODY)}`],
    ['fractional t', `t=${T}.5,v1=${signatureDigest(SECRET, T, BODY)}`],
    ['v0 instead of v1', `t=${T},v0=${signatureDigest(SECRET, T, BODY)}`],
    ['no = at all', 'garbage'],
  ])('%s → malformed_header', (_n, header) => {
    expect(reason({ header })).toBe('malformed_header');
  });

  it('t more than 5 minutes in the past → timestamp_out_of_tolerance', () => {
    expect(reason({ now: T + MIN5 + 1 })).toBe('timestamp_out_of_tolerance');
    expect(reason({ now: T + 3_600_000 })).toBe('timestamp_out_of_tolerance');
  });

  it('t more than 5 minutes in the future → timestamp_out_of_tolerance', () => {
    expect(reason({ now: T - MIN5 - 1 })).toBe('timestamp_out_of_tolerance');
  });

  it('t in seconds rather than milliseconds → timestamp_out_of_tolerance', () => {
    const seconds = Math.floor(T / 1000);
    expect(reason({ header: signatureHeader(SECRET, seconds, BODY) })).toBe('timestamp_out_of_tolerance');
  });

  it('honours a custom tolerance', () => {
    expect(reason({ now: T + 1_001, toleranceMs: 1_000 })).toBe('timestamp_out_of_tolerance');
    expect(reason({ now: T + 999, toleranceMs: 1_000 })).toBeNull();
  });

  it('a body tampered by one byte → signature_mismatch', () => {
    const bytes = Buffer.from(BODY, 'utf8');
    for (const i of [0, 10, bytes.length - 1]) {
      const tampered = Buffer.from(bytes);
      tampered[i] = tampered[i]! ^ 0x01;
      expect(reason({ rawBody: tampered })).toBe('signature_mismatch');
    }
    expect(reason({ rawBody: BODY + ' ' })).toBe('signature_mismatch');
    expect(reason({ rawBody: BODY.slice(0, -1) })).toBe('signature_mismatch');
  });

  it('the wrong secret → signature_mismatch', () => {
    expect(reason({ secret: newSigningSecret() })).toBe('signature_mismatch');
    expect(reason({ secret: SECRET.slice(0, -1) })).toBe('signature_mismatch');
  });

  it('a t that was changed after signing → signature_mismatch', () => {
    const v1 = signatureDigest(SECRET, T, BODY);
    expect(reason({ header: `t=${T + 1},v1=${v1}` })).toBe('signature_mismatch');
  });

  it.each([
    ['one char short', (d: string) => d.slice(0, -1)],
    ['one char long', (d: string) => d + '0'],
    ['twice as long', (d: string) => d + d],
    ['empty', () => ''],
    ['base64 instead of hex', (d: string) => Buffer.from(d, 'hex').toString('base64')],
  ])('a digest of a different length (%s) → signature_mismatch, without throwing anything else', (_n, change) => {
    const header = `t=${T},v1=${change(signatureDigest(SECRET, T, BODY))}`;
    expect(reason({ header })).toBe('signature_mismatch');
  });

  it('a digest of the same length but other bytes → signature_mismatch', () => {
    const d = signatureDigest(SECRET, T, BODY);
    const flipped = (d[0] === 'a' ? 'b' : 'a') + d.slice(1);
    expect(reason({ header: `t=${T},v1=${flipped}` })).toBe('signature_mismatch');
  });

  it('uses the raw bytes: the same JSON re-serialised with other spacing fails', () => {
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(JSON.parse(pretty)).toEqual(JSON.parse(BODY));
    expect(reason({ rawBody: pretty })).toBe('signature_mismatch');
    const spaced = BODY.replace(/":/g, '": ');
    expect(reason({ rawBody: spaced })).toBe('signature_mismatch');
  });

  it('uses the raw bytes: a body with escaped unicode re-serialised unescaped fails', () => {
    const raw = '{"name":"Zo\\u00eb"}';
    const header = signatureHeader(SECRET, T, raw);
    expect(reason({ header, rawBody: raw })).toBeNull();
    expect(reason({ header, rawBody: JSON.stringify(JSON.parse(raw)) })).toBe('signature_mismatch');
  });
});

describe('verifySignature: headers given as an array', () => {
  it('reads the values joined with commas, as Node joins a repeated header', () => {
    const good = signatureDigest(SECRET, T, BODY);
    expect(reason({ header: [`t=${T}`, `v1=${good}`] })).toBeNull();
    expect(reason({ header: [`t=${T},v1=${'0'.repeat(64)}`, `v1=${good}`] })).toBeNull();
    expect(reason({ header: [] })).toBe('missing_header');
    expect(reason({ header: [`t=${T}`] })).toBe('malformed_header');
  });
});

describe('verifySignature: misuse is a TypeError or RangeError, not a verification failure', () => {
  it.each([
    ['an empty secret', { secret: '' }, TypeError],
    ['no secret', { secret: undefined as unknown as string }, TypeError],
    ['a parsed JSON body', { rawBody: JSON.parse(BODY) as string }, TypeError],
    ['no body', { rawBody: undefined as unknown as string }, TypeError],
    ['a NaN tolerance', { toleranceMs: NaN }, RangeError],
    ['a negative tolerance', { toleranceMs: -1 }, RangeError],
  ])('%s', (_n, opts, type) => {
    expect(() => reason(opts)).toThrow(type);
  });
});

describe('WebhookVerificationError', () => {
  it('carries its reason and a readable message', () => {
    let caught: unknown;
    try {
      verifySignature({ secret: SECRET, header: undefined, rawBody: BODY, now: T });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(WebhookVerificationError);
    expect(caught).toBeInstanceOf(Error);
    const err = caught as WebhookVerificationError;
    expect(err.reason).toBe('missing_header');
    expect(err.name).toBe('WebhookVerificationError');
    expect(err.message).toContain('missing_header');
  });
});
