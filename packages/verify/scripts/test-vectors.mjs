// Writes test-vectors.json: signed requests and the verdict every Canvass verifier must reach
// (`ok` or the failure reason). Signatures are made here with a bare HMAC, not by a verifier.
//   node scripts/test-vectors.mjs
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';

const SECRET = 'whsec_vectors_0123456789abcdefghijklmnopqrstuvwxyzABCD';
const OLD_SECRET = 'whsec_vectors_previous_ZYXWVUTSRQPONMLKJIHGFEDCBA98765';
const T = 1767225600000; // 2026-01-01T00:00:00Z
const TOLERANCE = 300_000;
const BODY =
  '{"type":"submitted-responses","accountId":"acc_1","pollId":"poll_1","participantId":"prt_1","responses":{"sld_1":{"value":"A friend"}},"timestamp":1767225600000}';
const UNICODE_BODY =
  '{"type":"completed-survey","responses":{"sld_1":{"value":"Zoë, 5 ★ — 日本語 🎉"}},"email":"zoë@example.com"}';

const v1 = (secret, t, body) =>
  createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${t}.`, 'utf8'), Buffer.from(body, 'utf8')]))
    .digest('hex');
const good = v1(SECRET, T, BODY);
const other = v1(SECRET, T, 'another body');

const vectors = [];
const add = (name, expected, fields = {}) =>
  vectors.push({
    name,
    secret: SECRET,
    header: `t=${T},v1=${good}`,
    body: BODY,
    now_ms: T,
    tolerance_ms: TOLERANCE,
    ...fields,
    expected,
  });

add('valid', 'ok');
add('valid, a space after the comma', 'ok', { header: `t=${T}, v1=${good}` });
add('valid, v1 before t', 'ok', { header: `v1=${good},t=${T}` });
add('valid, an unknown scheme alongside is ignored', 'ok', { header: `t=${T},v0=${other},v1=${good}` });
add('valid, empty body', 'ok', { body: '', header: `t=${T},v1=${v1(SECRET, T, '')}` });
// The signed text is t exactly as the header carries it (Canvass itself never pads it).
add('valid, t with leading zeros is signed with them', 'ok', { header: `t=00${T},v1=${v1(SECRET, `00${T}`, BODY)}` });
add('t with leading zeros, signed without them', 'signature_mismatch', { header: `t=00${T},v1=${good}` });
add('unicode body', 'ok', { body: UNICODE_BODY, header: `t=${T},v1=${v1(SECRET, T, UNICODE_BODY)}` });
add('unicode body re-serialised with escapes', 'signature_mismatch', {
  body: JSON.stringify(JSON.parse(UNICODE_BODY)).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  ),
  header: `t=${T},v1=${v1(SECRET, T, UNICODE_BODY)}`,
});
add('unicode secret (keyed with its UTF-8 bytes)', 'ok', {
  secret: 'whsec_ünïcødé_🔑',
  header: `t=${T},v1=${v1('whsec_ünïcødé_🔑', T, BODY)}`,
});

add('tampered body: one character changed', 'signature_mismatch', { body: BODY.replace('A friend', 'A friEnd') });
add('tampered body: a trailing newline', 'signature_mismatch', { body: `${BODY}\n` });
add('tampered body: re-serialised with other spacing', 'signature_mismatch', {
  body: JSON.stringify(JSON.parse(BODY), null, 2),
});
add('t changed after signing', 'signature_mismatch', { header: `t=${T + 1},v1=${good}`, now_ms: T + 1 });
add('wrong secret', 'signature_mismatch', { secret: OLD_SECRET });
add('secret one character short', 'signature_mismatch', { secret: SECRET.slice(0, -1) });

add('stale: t exactly the tolerance ago', 'ok', { now_ms: T + TOLERANCE });
add('stale: t 1 ms past the tolerance', 'timestamp_out_of_tolerance', { now_ms: T + TOLERANCE + 1 });
add('stale: an hour old', 'timestamp_out_of_tolerance', { now_ms: T + 3_600_000 });
add('future: t exactly the tolerance ahead', 'ok', { now_ms: T - TOLERANCE });
add('future: t 1 ms past the tolerance', 'timestamp_out_of_tolerance', { now_ms: T - TOLERANCE - 1 });
add('custom tolerance of 1 s: at it', 'ok', { tolerance_ms: 1_000, now_ms: T + 1_000 });
add('custom tolerance of 1 s: 1 ms past it', 'timestamp_out_of_tolerance', { tolerance_ms: 1_000, now_ms: T + 1_001 });
add('tolerance 0: the same millisecond', 'ok', { tolerance_ms: 0 });
add('t in seconds rather than milliseconds', 'timestamp_out_of_tolerance', {
  header: `t=${T / 1000},v1=${v1(SECRET, T / 1000, BODY)}`,
});
add('out of tolerance is reported before a bad signature', 'timestamp_out_of_tolerance', {
  header: `t=${T},v1=${other}`,
  now_ms: T + TOLERANCE + 1,
});

add('missing header (null)', 'missing_header', { header: null });
add('missing header (empty)', 'missing_header', { header: '' });

add('malformed: no t', 'malformed_header', { header: `v1=${good}` });
add('malformed: no v1', 'malformed_header', { header: `t=${T}` });
add('malformed: empty t', 'malformed_header', { header: `t=,v1=${good}` });
add('malformed: non-numeric t', 'malformed_header', { header: `t=abc,v1=${good}` });
add('malformed: t as an ISO date', 'malformed_header', { header: `t=2026-01-01T00:00:00Z,v1=${good}` });
add('malformed: negative t', 'malformed_header', { header: `t=-${T},v1=${good}` });
add('malformed: fractional t', 'malformed_header', { header: `t=${T}.5,v1=${good}` });
add('malformed: t in exponent notation', 'malformed_header', { header: `t=1.7672256e12,v1=${good}` });
add('malformed: t of 17 digits', 'malformed_header', { header: `t=0${'1'.repeat(16)},v1=${good}` });
add('malformed: t in non-ASCII digits', 'malformed_header', { header: `t=١٧٦٧٢٢٥٦٠٠٠٠٠,v1=${good}` });
add('malformed: keys are case-sensitive (T=)', 'malformed_header', { header: `T=${T},v1=${good}` });
add('malformed: keys are case-sensitive (V1=)', 'malformed_header', { header: `t=${T},V1=${good}` });
add('malformed: t twice, even the same', 'malformed_header', { header: `t=${T},v1=${good},t=${T}` });
add('malformed: v0 instead of v1', 'malformed_header', { header: `t=${T},v0=${good}` });
add('malformed: no = at all', 'malformed_header', { header: 'garbage' });
add('malformed: only whitespace', 'malformed_header', { header: '   ' });

// A well-formed header whose v1 is not the lowercase hex digest does not match.
add('uppercase hex digest', 'signature_mismatch', { header: `t=${T},v1=${good.toUpperCase()}` });
add('digest one character short', 'signature_mismatch', { header: `t=${T},v1=${good.slice(0, -1)}` });
add('digest one character long', 'signature_mismatch', { header: `t=${T},v1=${good}0` });
add('digest twice as long', 'signature_mismatch', { header: `t=${T},v1=${good}${good}` });
add('empty digest', 'signature_mismatch', { header: `t=${T},v1=` });
add('digest in base64', 'signature_mismatch', {
  header: `t=${T},v1=${Buffer.from(good, 'hex').toString('base64')}`,
});

// During a signing-secret rotation the header carries v1=<new>,v1=<old>: any match passes.
const rotated = `t=${T},v1=${good},v1=${v1(OLD_SECRET, T, BODY)}`;
add('several v1: the first matches (new secret)', 'ok', { header: rotated });
add('several v1: the second matches (previous secret)', 'ok', { header: rotated, secret: OLD_SECRET });
add('several v1: none matches', 'signature_mismatch', { header: rotated, secret: 'whsec_unrelated' });
add('several v1: the third matches', 'ok', { header: `t=${T},v1=${other},v1=${'0'.repeat(64)},v1=${good}` });
add('several v1: one of another length before the match', 'ok', { header: `t=${T},v1=abc,v1=${good}` });

const names = new Set(vectors.map((v) => v.name));
if (names.size !== vectors.length) throw new Error('vector names must be unique');

const file = {
  about:
    'Canvass webhook signature test vectors. header: the X-Service-Signature value (null: absent). body: the raw body, UTF-8. expected: "ok" or the reason verification fails.',
  vectors,
};
writeFileSync(new URL('../test-vectors.json', import.meta.url), `${JSON.stringify(file, null, 2)}\n`);
console.log(`${vectors.length} vectors`);
