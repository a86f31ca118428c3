import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, harness, testApp, type Harness, type TestAccount } from '../support/app.js';

/**
 * Corners of the HTTP contract (README, API overview): answers a client integrating against the
 * OpenAPI document and the README would otherwise trip over.
 */

let h: Harness;
let acct: TestAccount;
beforeAll(async () => {
  h = await harness();
  acct = await h.account();
});
afterAll(() => h?.close());

type Doc = {
  paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, { content?: object }> }>>;
};
const doc = async () => (await h.app.inject({ url: '/openapi.json' })).json() as Doc;

describe('requests without a body', () => {
  it('a DELETE sent with a Content-Type but no body is read as having none, not refused with 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await h.app.inject({
        method: 'DELETE',
        url: '/poll?pollId=poll_none',
        headers: { ...bearer(acct.key), 'content-type': type, 'content-length': '0' },
      });
      expect(res.statusCode, `${type}: ${res.body}`).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found' });
    }
  });

  it('a route that takes a body still refuses one of another type', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/poll',
      headers: { ...bearer(acct.key), 'content-type': 'text/plain' },
      payload: 'title=x',
    });
    expect(res.statusCode).toBe(415);
  });
});

describe('GET /accounts', () => {
  it('refuses a query field it does not take, as every route does', async () => {
    const res = await h.app.inject({ url: '/accounts?limit=1', headers: bearer(acct.key) });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'query:/limit' }] });
    expect((await h.app.inject({ url: '/accounts', headers: bearer(acct.key) })).statusCode).toBe(200);
  });
  it('answers a key below premium with its accounts and plans, and is the one route that does', async () => {
    const free = await h.account({ plan: 'free' });
    const res = await h.app.inject({ url: '/accounts', headers: bearer(free.key) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject([{ accountId: free.accountId, plan: 'free', role: 'owner' }]);
    const polls = await h.app.inject({ url: `/polls?accountId=${free.accountId}`, headers: bearer(free.key) });
    expect([polls.statusCode, polls.json().code]).toEqual([403, 'plan_required']);
  });
});

describe('headers every answer carries', () => {
  it('an unreadable path’s 400 is not cached and not sniffed', async () => {
    const res = await h.app.inject({ url: '/po%zzll' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('the metrics token’s 401 names its own realm', async () => {
    const { prometheusMetrics } = await import('../../src/infra/metrics/prometheus.js');
    const app = await testApp({
      deps: h.deps,
      logger: false,
      metrics: { metrics: prometheusMetrics({ now: () => new Date() }), token: 'scrape-token' },
    });
    try {
      const res = await app.inject({ url: '/metrics' });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    } finally {
      await app.close();
    }
  });
});

describe('the OpenAPI document', () => {
  it('says a key is optional on POST /participant/responses (an apiOnly poll needs one)', async () => {
    expect((await doc()).paths['/participant/responses']!.post!.security).toEqual([{}, { bearer: [] }]);
  });

  it('gives the CSV export its media type and its problem answers', async () => {
    const get = (await doc()).paths['/responses/export']!.get!;
    expect(get.responses['200']!.content).toHaveProperty('text/csv');
    expect(get.responses['4XX'] ?? get.responses['4xx']).toBeDefined();
  });
});
