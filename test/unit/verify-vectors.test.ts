import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { verifySignature, WebhookVerificationError } from '@canvass/verify';

// One file of vectors holds every verifier to the same verdicts: the package here, the Python
// verifier through its own runner.
type Vector = {
  name: string;
  secret: string;
  header: string | null;
  body: string;
  now_ms: number;
  tolerance_ms: number;
  expected: string;
};

const ROOT = new URL('../../', import.meta.url);
const { vectors } = JSON.parse(readFileSync(new URL('packages/verify/test-vectors.json', ROOT), 'utf8')) as {
  vectors: Vector[];
};

function verdict(v: Vector, rawBody: string | Uint8Array): string {
  try {
    verifySignature({ secret: v.secret, header: v.header, rawBody, now: v.now_ms, toleranceMs: v.tolerance_ms });
    return 'ok';
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.reason;
    throw e;
  }
}

describe('test vectors', () => {
  it('cover a pass and every failure reason', () => {
    expect(new Set(vectors.map((v) => v.expected))).toEqual(
      new Set(['ok', 'missing_header', 'malformed_header', 'timestamp_out_of_tolerance', 'signature_mismatch']),
    );
  });

  it.each(vectors.map((v) => [v.name, v] as const))('@canvass/verify: %s', (_name, v) => {
    expect(verdict(v, v.body)).toBe(v.expected);
    expect(verdict(v, Buffer.from(v.body, 'utf8'))).toBe(v.expected);
    expect(verdict(v, new Uint8Array(Buffer.from(v.body, 'utf8')))).toBe(v.expected);
  });

  it('canvass_verify.py agrees on every vector', () => {
    const run = spawnSync('python3', ['packages/verify-python/test_vectors.py'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.error).toBeUndefined();
    expect(run.stdout + run.stderr).toContain(`${vectors.length} vectors, 0 failures`);
    expect(run.status, run.stdout + run.stderr).toBe(0);
  });
});

describe('misuse', () => {
  const secret = 'whsec_misuse';
  const T = 1767225600000;
  const sign = (body: Uint8Array | string) =>
    `t=${T},v1=${createHmac('sha256', secret).update(`${T}.`).update(body).digest('hex')}`;

  it('@canvass/verify refuses a time or a tolerance that is no number, and a header of another type', () => {
    const header = sign('{}');
    // NaN would pass every timestamp: a 1970 t included.
    for (const now of [Number.NaN, Number.POSITIVE_INFINITY, '1767225600000' as unknown as number])
      expect(() => verifySignature({ secret, header, rawBody: '{}', now })).toThrow(RangeError);
    expect(() =>
      verifySignature({ secret, header, rawBody: '{}', now: T, toleranceMs: '60000' as unknown as number }),
    ).toThrow(RangeError);
    expect(() => verifySignature({ secret, header: 42 as unknown as string, rawBody: '{}', now: T })).toThrow(
      TypeError,
    );
    expect(() => verifySignature({ secret, header, rawBody: '{}', now: T })).not.toThrow();
  });

  it('@canvass/verify takes bytes from another realm', () => {
    const foreign = vm.runInNewContext('new Uint8Array([123, 125])') as Uint8Array;
    expect(foreign instanceof Uint8Array).toBe(false);
    expect(() => verifySignature({ secret, header: sign('{}'), rawBody: foreign, now: T })).not.toThrow();
  });

  it('canvass_verify.py refuses a time that is no number, a header of another type, and a str that is no text', () => {
    const script = `
import math, sys
sys.path.insert(0, "packages/verify-python")
from canvass_verify import verify_signature
def raises(kind, **kw):
    args = dict(secret="${secret}", header="${sign('{}')}", raw_body="{}", now_ms=${T})
    args.update(kw)
    try:
        verify_signature(args.pop("secret"), args.pop("header"), args.pop("raw_body"), **args)
    except kind:
        return
    raise SystemExit("no %s for %r" % (kind.__name__, kw))
raises(ValueError, now_ms=float("nan"))
raises(ValueError, now_ms=math.inf)
raises(TypeError, header=42)
raises(TypeError, raw_body="\\udc80")
verify_signature("${secret}", [b"${sign('{}')}"], b"{}", now_ms=${T})
print("ok")
`;
    const run = spawnSync('python3', ['-c', script], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
    expect(run.stdout.trim(), run.stderr).toBe('ok');
  });
});

describe('the bash recipe in docs/receiving-webhooks.md', () => {
  const doc = readFileSync(new URL('docs/receiving-webhooks.md', ROOT), 'utf8');
  const recipe = /```bash\n([\s\S]*?)```/.exec(doc)![1]!;
  const secret = 'whsec_recipe';
  const body = '{"type":"submitted-responses","value":"Zoë ★"}';
  const v1 = (t: number | string) => createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');

  it('passes a good signature, and refuses a stale one, a second t, another digest and a t that is an expression', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'canvass-recipe-'));
    try {
      writeFileSync(path.join(dir, 'body.json'), body);
      const run = (sig: string) =>
        spawnSync('bash', ['-c', recipe], { cwd: dir, env: { ...process.env, sig, secret }, encoding: 'utf8' });
      const now = Date.now();
      expect(run(`t=${now},v1=${v1(now)}`).stdout.trim()).toBe('valid');
      expect(run(`t=${now},v1=${'0'.repeat(64)},v1=${v1(now)}`).stdout.trim()).toBe('valid');
      const stale = now - 400_000;
      expect(run(`t=${stale},v1=${v1(stale)}`).stdout.trim()).toBe('timestamp out of tolerance');
      expect(run(`t=${now},v1=${v1(now)},t=${now}`).stdout.trim()).toBe('malformed header');
      expect(run(`t=${now},v1=${v1(now + 1)}`).stdout.trim()).toBe('invalid');
      // Spaces and tabs around the parts and their =, as the libraries read them.
      for (const sig of [`t=${now}, v1=${v1(now)}`, `\tt =${now} ,v1= ${v1(now)} `, `v1=${v1(now)},t=${now}`])
        expect(run(sig).stdout.trim(), sig).toBe('valid');
      // A second t, even empty, as the libraries refuse it.
      expect(run(`t=${now},v1=${v1(now)},t=`).stdout.trim()).toBe('malformed header');
      const marker = path.join(dir, 'ran');
      const injected = run(`t=a[$(touch ${marker})],v1=00`);
      expect(injected.stdout.trim()).toBe('malformed header');
      expect(injected.status).toBe(1);
      expect(existsSync(marker)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
