import Fastify, { type FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../../src/http/error-handler.js';
import { dashboardRoutes } from '../../src/http/routes/dashboard.js';
import { harness, type Harness } from '../support/app.js';

/** /app serving (src/http/routes/dashboard.ts) on a stand-in build and on no build at all. */

const INDEX = '<!doctype html><title>stand-in dashboard</title>';
let dir: string;

async function server(root: string): Promise<FastifyInstance> {
  const app = Fastify();
  registerErrorHandling(app);
  await app.register(dashboardRoutes(root));
  await app.ready();
  return app;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'canvass-web-dist-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), INDEX);
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  writeFileSync(path.join(dir, '.secret.json'), '{"dot-file": true}');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dashboard at /app, built', () => {
  it('serves index.html at /app/ and for every app route, and redirects /app', async () => {
    const app = await server(dir);
    for (const url of ['/app/', '/app/polls/poll_1/webhooks', '/app/alerts?x=1']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toBe(INDEX);
    }
    const bare = await app.inject({ url: '/app' });
    expect(bare.statusCode).toBe(302);
    expect(bare.headers.location).toBe('/app/');
    await app.close();
  });

  it('sends a content security policy that keeps the page to its own origin, unframed, unopened and asking for no device, on every /app answer', async () => {
    const app = await server(dir);
    for (const url of ['/app/', '/app/alerts', '/app/assets/index-abc123.js', '/app/nope.css']) {
      const res = await app.inject({ url });
      const csp = String(res.headers['content-security-policy']);
      expect(csp, url).toContain("default-src 'self'");
      expect(csp, url).toContain("script-src 'self'");
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(res.headers['x-frame-options'], url).toBe('DENY');
      expect(res.headers['referrer-policy'], url).toBe('no-referrer');
      expect(res.headers['cross-origin-opener-policy'], url).toBe('same-origin');
      expect(String(res.headers['permissions-policy']), url).toContain('camera=()');
    }
    await app.close();
  });

  it('tells hashed bundles by their place in the build, wherever the build lies', async () => {
    // A build inside a directory named "assets": its other files are still checked on each load.
    const outer = mkdtempSync(path.join(os.tmpdir(), 'canvass-web-outer-'));
    const root = path.join(outer, 'assets', 'dist');
    mkdirSync(path.join(root, 'assets'), { recursive: true });
    writeFileSync(path.join(root, 'index.html'), INDEX);
    writeFileSync(path.join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(path.join(root, 'assets', 'index-abc123.js'), 'console.log(1)');
    const app = await server(root);
    try {
      for (const url of ['/app/favicon.svg', '/app/index.html']) {
        const res = await app.inject({ url });
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['cache-control'], url).toBe('no-cache');
      }
      const js = await app.inject({ url: '/app/assets/index-abc123.js' });
      expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    } finally {
      await app.close();
      rmSync(outer, { recursive: true, force: true });
    }
  });

  it('serves hashed bundles as immutable, and a missing file as a 404 problem', async () => {
    const app = await server(dir);
    const js = await app.inject({ url: '/app/assets/index-abc123.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    for (const url of [
      '/app/assets/index-old.js',
      '/app/../package.json',
      '/app/nope.css',
      // Refused by the file server (a directory, an encoded `..`, a dot-file): missing pages too.
      '/app/assets/',
      '/app/%2e%2e/package.json',
      '/app/.secret.json',
    ]) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toMatch(/^application\/problem\+json/);
      expect(res.json().code, url).toBe('not_found');
      expect(res.body, url).not.toContain('dot-file');
    }
    expect((await app.inject({ method: 'POST', url: '/app/polls' })).statusCode).toBe(404);
    await app.close();
  });
});

describe('dashboard at /app, not built', () => {
  it('answers 503 "not built" while a rebuild has emptied web/dist', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'canvass-web-empty-'));
    try {
      const app = await server(empty);
      const res = await app.inject({ url: '/app/polls' });
      expect(res.statusCode).toBe(503);
      expect(res.body).toContain('npm run build');
      await app.close();
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('says to run npm run build, for /app/ and any app route, never a 500', async () => {
    const app = await server(path.join(dir, 'missing'));
    for (const url of ['/app/', '/app/polls/poll_1']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(503);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('npm run build');
    }
    expect((await app.inject({ url: '/app/assets/index-abc123.js' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/app' })).statusCode).toBe(302);
    await app.close();
  });
});

describe('dashboard in the Canvass app', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(() => h?.close());

  it('answers /app without an API key, keeps the API behind one, and stays out of the OpenAPI document', async () => {
    expect([200, 503]).toContain((await h.app.inject({ url: '/app/' })).statusCode);
    expect((await h.app.inject({ url: '/polls?accountId=acc_x' })).statusCode).toBe(401);
    expect((await h.app.inject({ url: '/nope' })).statusCode).toBe(404);
    const doc = (await h.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/app'))).toEqual([]);
  });
});
