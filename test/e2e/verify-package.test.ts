import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningSecret } from '../../src/app/accounts/rotate-signing-secret.js';
import { harness, type Harness } from '../support/app.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import { startReceiver, type Received } from '../support/receiver.js';
import { startTestWorker } from '../support/worker.js';

// @canvass/verify as a customer gets it: packed, installed from the tarball into an empty project,
// and run there, by import and by require, on deliveries a real worker signed and sent.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PKG = path.join(ROOT, 'packages/verify');
// `npm test` passes its settings down as npm_* variables (the checkout as the local prefix among
// them); without them, the npm commands here act on their own directories only.
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));

type Packed = { filename: string; size: number; files: { path: string }[] };
type Case = { name: string; secret: string; header: string | null; body: string; now?: number; expected: string };

let tmp: string;
let project: string;
let packed: Packed;
let cases: Case[];
let h: Harness | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
let worker: ReturnType<typeof startTestWorker> | undefined;

async function packAndInstall(): Promise<void> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: PKG, env });
  packed = (JSON.parse(stdout) as Packed[])[0]!;
  project = path.join(tmp, 'project');
  mkdirSync(project);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'receiver', private: true }));
  const tarball = path.join(tmp, packed.filename);
  await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--offline'], { cwd: project, env });
}

/** One delivery before a secret rotation (one v1), one during its overlap (v1=<new>,v1=<old>). */
async function captureDeliveries(): Promise<Case[]> {
  h = await harness({ allowPrivateTargets: true, delivery: { batchWindowMs: 0, secretOverlapMs: 3_600_000 } });
  h.deps.clock = { now: () => new Date() };
  const acct = await h.account();
  receiver = await startReceiver();
  worker = startTestWorker(h.deps);
  const poll = await visiblePoll(h, acct);
  const oldSecret = (await createWebhook(h, acct, poll.pollId, receiver.url('/hook'))).signingSecret!;
  const send = async (value: string): Promise<Received> => {
    const before = receiver!.received.length;
    await answer(h!, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value }] });
    return (await receiver!.waitFor((r) => r.length > before))[before]!;
  };
  const first = await send('Zoë, before the rotation ★');
  const { signingSecret: newSecret } = await rotateSigningSecret(h.deps, acct.accountId);
  const second = await send('during the overlap');
  const sig = (r: Received) => r.headers['x-service-signature']!;
  expect(sig(first)).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  expect(sig(second)).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
  const of = (r: Received, secret: string) => ({ secret, header: sig(r), body: r.rawBody });
  return [
    { name: 'delivery', ...of(first, oldSecret), expected: 'ok' },
    {
      name: 'delivery, body with a space added',
      ...of(first, oldSecret),
      body: `${first.rawBody} `,
      expected: 'signature_mismatch',
    },
    { name: 'delivery, another secret', ...of(first, newSecret), expected: 'signature_mismatch' },
    { name: 'delivery, no header', ...of(first, oldSecret), header: null, expected: 'missing_header' },
    {
      name: 'delivery, verified 10 min later',
      ...of(first, oldSecret),
      now: Date.now() + 600_000,
      expected: 'timestamp_out_of_tolerance',
    },
    { name: 'rotation overlap, new secret', ...of(second, newSecret), expected: 'ok' },
    { name: 'rotation overlap, previous secret', ...of(second, oldSecret), expected: 'ok' },
    { name: 'rotation overlap, unrelated secret', ...of(second, 'whsec_unrelated'), expected: 'signature_mismatch' },
  ];
}

/** A check script's body: the verdict on each case (`ok` or the reason), with where the package resolved. */
const verdicts = (resolved: string) => `
const cases = JSON.parse(readFileSync('cases.json', 'utf8'));
const verdicts = cases.map((c) => {
  try {
    verifySignature({ secret: c.secret, header: c.header, rawBody: Buffer.from(c.body, 'utf8'), now: c.now });
    return 'ok';
  } catch (e) {
    return e instanceof WebhookVerificationError && e instanceof Error ? e.reason : 'threw ' + e;
  }
});
console.log(JSON.stringify({ resolved: ${resolved}, verdicts }));
`;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'canvass-verify-package-'));
  const [, captured] = await Promise.all([packAndInstall(), captureDeliveries()]);
  cases = captured;
  writeFileSync(path.join(project, 'cases.json'), JSON.stringify(cases));
  writeFileSync(
    path.join(project, 'check.mjs'),
    `import { readFileSync } from 'node:fs';\nimport { verifySignature, WebhookVerificationError } from '@canvass/verify';\n${verdicts("import.meta.resolve('@canvass/verify')")}`,
  );
  writeFileSync(
    path.join(project, 'check.cjs'),
    `const { readFileSync } = require('node:fs');\nconst { verifySignature, WebhookVerificationError } = require('@canvass/verify');\n${verdicts("require.resolve('@canvass/verify')")}`,
  );
}, 120_000);
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await h?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('@canvass/verify from its tarball', () => {
  it('packs the two builds, their types and the README, in a few kB, with no dependencies', () => {
    expect(packed.files.map((f) => f.path).sort()).toEqual([
      'README.md',
      'dist/cjs/index.d.ts',
      'dist/cjs/index.js',
      'dist/cjs/package.json',
      'dist/esm/index.d.ts',
      'dist/esm/index.js',
      'package.json',
    ]);
    expect(packed.size).toBeLessThan(8_000);
    const installed = path.join(project, 'node_modules/@canvass/verify');
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    for (const key of ['dependencies', 'peerDependencies', 'optionalDependencies'])
      expect(manifest[key]).toBeUndefined();
    // Node's crypto is all the code needs.
    for (const file of ['dist/esm/index.js', 'dist/cjs/index.js']) {
      const code = readFileSync(path.join(installed, file), 'utf8');
      const imported = [...code.matchAll(/(?:from |require\()\s*["']([^"']+)["']/g)].map((m) => m[1]);
      expect(imported, file).toEqual(['node:crypto']);
    }
  });

  it.each([
    ['import', 'check.mjs', /\/dist\/esm\/index\.js$/],
    ['require', 'check.cjs', /\/dist\/cjs\/index\.js$/],
  ])('by %s, verifies real deliveries and names what is wrong with altered ones', async (_how, script, build) => {
    const { stdout } = await run(process.execPath, [script], { cwd: project, env });
    const out = JSON.parse(stdout) as { resolved: string; verdicts: string[] };
    expect(out.resolved).toMatch(build);
    expect(Object.fromEntries(cases.map((c, i) => [c.name, out.verdicts[i]]))).toEqual(
      Object.fromEntries(cases.map((c) => [c.name, c.expected])),
    );
  });

  it('recognises either build’s errors with instanceof, in an app that loads both; a subclass keeps the usual test', async () => {
    writeFileSync(
      path.join(project, 'both.mjs'),
      `import { createRequire } from 'node:module';
import * as esm from '@canvass/verify';
const cjs = createRequire(import.meta.url)('@canvass/verify');
const thrown = (lib) => { try { lib.verifySignature({ secret: 's', header: undefined, rawBody: '' }); } catch (e) { return e; } };
class Mine extends esm.WebhookVerificationError {}
console.log(JSON.stringify({
  distinct: esm.WebhookVerificationError !== cjs.WebhookVerificationError,
  cjsAsEsm: thrown(cjs) instanceof esm.WebhookVerificationError,
  esmAsCjs: thrown(esm) instanceof cjs.WebhookVerificationError,
  isError: thrown(cjs) instanceof Error,
  otherError: new Error('x') instanceof esm.WebhookVerificationError,
  baseAsMine: thrown(esm) instanceof Mine,
  mineAsMine: new Mine('missing_header') instanceof Mine,
}));
`,
    );
    const { stdout } = await run(process.execPath, ['both.mjs'], { cwd: project, env });
    expect(JSON.parse(stdout)).toEqual({
      distinct: true,
      cjsAsEsm: true,
      esmAsCjs: true,
      isError: true,
      otherError: false,
      baseAsMine: false,
      mineAsMine: true,
    });
  });

  it('gives TypeScript its types for import and for require', async () => {
    writeFileSync(
      path.join(project, 'esm.mts'),
      `import { verifySignature, WebhookVerificationError, type VerifyFailure } from '@canvass/verify';
const reason: VerifyFailure = new WebhookVerificationError('signature_mismatch').reason;
verifySignature({ secret: 's', header: ['t=1', 'v1=00'], rawBody: new Uint8Array(), toleranceMs: 1, now: reason.length });
`,
    );
    writeFileSync(
      path.join(project, 'cjs.cts'),
      `import verify = require('@canvass/verify');
const reason: verify.VerifyFailure = new verify.WebhookVerificationError('missing_header').reason;
verify.verifySignature({ secret: 's', header: null, rawBody: 'x', now: reason.length });
// @ts-expect-error rawBody is required
verify.verifySignature({ secret: 's', header: null });
`,
    );
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2022',
          lib: ['es2022'],
          types: [],
          strict: true,
          noEmit: true,
        },
        files: ['esm.mts', 'cjs.cts'],
      }),
    );
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const { stdout } = await run(process.execPath, [tsc, '-p', '.', '--traceResolution'], { cwd: project, env });
    const resolved = [...stdout.matchAll(/'@canvass\/verify' was successfully resolved to '([^']+)'/g)].map(
      (m) => m[1],
    );
    expect(resolved).toEqual([
      path.join(project, 'node_modules/@canvass/verify/dist/esm/index.d.ts'),
      path.join(project, 'node_modules/@canvass/verify/dist/cjs/index.d.ts'),
    ]);
  });
});
