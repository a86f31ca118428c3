import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness, testApp } from '../support/app.js';

type Schema = { type?: string; required?: string[]; properties?: Record<string, unknown> };
type Operation = {
  summary?: string;
  tags?: string[];
  parameters?: { in: string; name: string; required?: boolean; schema: Schema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  security?: unknown[];
};
type OpenApi = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, { type: string; scheme?: string }> };
  security?: Record<string, unknown>[];
};

let h: Harness;
let doc: OpenApi;

beforeAll(async () => {
  h = await harness();
  const res = await h.app.inject({ url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(() => h?.close());

/** Route → [body fields it requires] or [query parameters it requires]. */
const BODY_ROUTES: Record<string, string[]> = {
  'post /poll': ['accountId', 'title'],
  'post /survey': ['accountId', 'title'],
  'post /commit': ['data'],
  'post /poll/update': ['pollId'],
  'post /research/start': ['pollId'],
  'post /poll/translations/update': ['pollId', 'language', 'translations'],
  'post /slide': ['pollId', 'type', 'title'],
  'post /slide/update': ['slideId'],
  'patch /account/settings': ['accountId'],
};
const QUERY_ROUTES: Record<string, string[]> = {
  'get /poll': ['pollId'],
  'get /polls': ['accountId'],
  'delete /poll': ['pollId'],
  'get /poll/translations': ['pollId', 'language'],
  'get /slides': ['pollId'],
  'delete /slide': ['slideId'],
  'get /account/settings': ['accountId'],
  'get /account/usage': ['accountId'],
  'get /accounts': [],
};

function op(key: string): Operation | undefined {
  const [method, path] = key.split(' ') as [string, string];
  return doc.paths[path]?.[method];
}

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3 document served without a key, with bearer authentication declared', async () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info.title).toBe('Canvass API');
    expect(doc.info.version).toEqual(expect.any(String));
    expect(doc.components?.securitySchemes?.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('lists every poll, slide and account route that takes a body, with its JSON request schema', () => {
    for (const [key, required] of Object.entries(BODY_ROUTES)) {
      const o = op(key);
      expect(o, key).toBeDefined();
      expect(o!.summary, key).toEqual(expect.any(String));
      const schema = o!.requestBody?.content['application/json']?.schema;
      expect(schema, `${key} request schema`).toMatchObject({ type: 'object' });
      expect([...(schema!.required ?? [])].sort(), key).toEqual([...required].sort());
      for (const field of required) expect(schema!.properties, `${key} ${field}`).toHaveProperty(field);
    }
  });

  it("marks a list's limit, which defaults to 20, as one a client may leave out", () => {
    const lists = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { parameters?: { in: string; name: string; required?: boolean }[] }>)
        .map(([method, o]) => ({ key: `${method} ${path}`, limit: o.parameters?.find((p) => p.name === 'limit') }))
        .filter((x) => x.limit?.in === 'query'),
    );
    expect(lists.map((l) => l.key)).toContain('get /polls');
    for (const l of lists) expect(l.limit!.required ?? false, l.key).toBe(false);
  });

  it('documents the poll fields on POST /poll and POST /poll/update', () => {
    const create = op('post /poll')!.requestBody!.content['application/json']!.schema.properties!;
    for (const f of [
      'accountId',
      'title',
      'dryRun',
      'isSynthetic',
      'pageRules',
      'pageExcludeRules',
      'settings',
      'displaySettings',
      'emailDisplaySettings',
      'smsDisplaySettings',
      'pageDisplaySettings',
      'visibilitySettings',
      'targetingSettings',
      'schedule',
      'languageSettings',
      'actionLogic',
    ]) {
      expect(create, f).toHaveProperty(f);
    }
    const update = op('post /poll/update')!.requestBody!.content['application/json']!.schema.properties!;
    for (const f of ['pollId', 'isVisible', 'title', 'settings', 'languageSettings'])
      expect(update, f).toHaveProperty(f);
    const slide = op('post /slide')!.requestBody!.content['application/json']!.schema.properties!;
    for (const f of ['pollId', 'type', 'title', 'subtitle', 'answers', 'multi', 'idx', 'logic'])
      expect(slide, f).toHaveProperty(f);
  });

  it('lists every poll, slide and account route that takes a query, with its parameters', () => {
    for (const [key, required] of Object.entries(QUERY_ROUTES)) {
      const o = op(key);
      expect(o, key).toBeDefined();
      expect(o!.summary, key).toEqual(expect.any(String));
      const params = (o!.parameters ?? []).filter((p) => p.in === 'query');
      for (const name of required)
        expect(
          params.find((p) => p.name === name),
          `${key} ?${name}`,
        ).toMatchObject({ required: true, schema: { type: 'string' } });
    }
    const list = op('get /polls')!.parameters!;
    expect(list.find((p) => p.name === 'startCursor')).toMatchObject({ required: false });
    expect(list.find((p) => p.name === 'limit')?.schema).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 20,
    });
  });

  it('keeps plumbing out of the API listing', () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json']) expect(doc.paths).not.toHaveProperty(path);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/docs'))).toBe(false);
  });

  it('describes exactly the routes the app serves', async () => {
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        expect(h.app.hasRoute({ method: method.toUpperCase() as 'GET', url: path }), `${method} ${path}`).toBe(true);
      }
    }
  });
});

describe('GET /docs', () => {
  it('answers 200 HTML without a key', async () => {
    const res = await h.app.inject({ url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/<html/i);
    expect(res.body).toMatch(/swagger/i);
  });

  it('serves the same document the page renders', async () => {
    const res = await h.app.inject({ url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(doc);
  });

  it('/docs without the slash leads to the page', async () => {
    const res = await h.app.inject({ url: '/docs' });
    expect(res.statusCode).toBeLessThan(400);
    if (res.statusCode >= 300) expect(res.headers.location).toMatch(/\/docs\/?$|\/docs\/static\/index\.html$/);
  });
});

describe('health', () => {
  it('/healthz answers 200 without a key', async () => {
    const res = await h.app.inject({ url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('/healthz answers 503 failed once the process cannot serve again (its embedded database stopped)', async () => {
    const app = await testApp({ deps: h.deps, logger: false, alive: () => false });
    try {
      const res = await app.inject({ url: '/healthz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ status: 'failed' });
    } finally {
      await app.close();
    }
  });

  it('/readyz answers 200 without a key when storage answers', async () => {
    const res = await h.app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready' });
  });

  it('/readyz answers 503 when not ready, or when the readiness check throws', async () => {
    for (const ready of [async () => false, async () => Promise.reject(new Error('storage gone'))]) {
      const app = await testApp({ deps: h.deps, logger: false, ready });
      try {
        const res = await app.inject({ url: '/readyz' });
        expect(res.statusCode).toBe(503);
        expect(res.json()).toEqual({ status: 'unavailable' });
        expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
      } finally {
        await app.close();
      }
    }
  });
});

describe('a slow or silent storage', () => {
  it('/readyz answers 503 when the readiness check does not answer (within its deadline), not never', async () => {
    const app = await testApp({ deps: h.deps, logger: false, ready: () => new Promise<boolean>(() => {}) });
    try {
      const res = await app.inject({ url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ status: 'unavailable' });
    } finally {
      await app.close();
    }
  });

  it('slow requests are warned of at most once a second, each line counting the requests it stands for', async () => {
    const lines: { msg: string; slowRequests?: number }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as { msg: string });
        done();
      },
    });
    // Every readiness check takes over a second: each /readyz is a slow request.
    const ready = () => new Promise<boolean>((r) => setTimeout(() => r(true), 1_100));
    const app = await testApp({ deps: h.deps, logger: pino({ level: 'warn' }, sink), ready });
    try {
      const burst = await Promise.all(Array.from({ length: 5 }, () => app.inject({ url: '/readyz' })));
      for (const res of burst) expect(res.statusCode).toBe(200);
      expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
      const slow = lines.filter((l) => l.msg === 'slow request');
      // The five answered together share a line or more; the one after them, over a second
      // later, has its own; every slow request is counted once.
      expect(slow.length).toBeLessThan(6);
      expect(slow.reduce((n, l) => n + l.slowRequests!, 0)).toBe(6);
    } finally {
      await app.close();
    }
  });
});

describe('content sniffing', () => {
  it('every answer, an error included, tells the browser not to sniff its type', async () => {
    for (const url of ['/openapi.json', '/health', '/polls?accountId=acc_x', '/nope']) {
      const res = await h.app.inject({ url });
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });
});
