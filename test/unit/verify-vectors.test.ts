import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
