import { beforeAll, describe, expect, it } from 'vitest';
import { checkAlerts } from '../../src/app/alerts/check-alerts.js';
import type { Deps, Mailer } from '../../src/app/ports/index.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import { apiRoutes, routeName } from '../support/openapi.js';
import { acme, call, expectProblem, h, HOOK, useWebhooksApi, type Json } from '../support/webhooks-api.js';

/**
 * A list's startCursor is the endCursor of the page before (README, "API"): every list takes its
 * own endCursor, and refuses anything else (text that is no id, another list's id) with a 400
 * naming startCursor, rather than answering a page that starts nowhere in particular.
 */

useWebhooksApi();

type PageBody = { data: Json[]; hasNextPage: boolean; endCursor: string | null };

/** Each list, with a query that scopes it to an account that holds two rows or more of it. */
let lists: Record<string, string>;

beforeAll(async () => {
  const poll = await visiblePoll(h, acme);
  await visiblePoll(h, acme);
  const hooks = [
    (await createWebhook(h, acme, poll.pollId, HOOK)).data,
    (await createWebhook(h, acme, poll.pollId, `${HOOK}/2`)).data,
  ];
  h.clock.advance(60_000);
  for (const participantId of ['p1', 'p2'])
    await answer(h, { pollId: poll.pollId, participantId, answers: [{ slideId: poll.q1, value: 'A friend' }] });
  await h.member(acme.accountId, 'editor');
  // Two alerts: each webhook has given up a delivery, and the quiet window has passed.
  for (const hook of hooks) await h.deps.store.endpoints.recordGivenUp(hook.id, h.clock.now(), 'HTTP 500');
  const alerts = { quietMs: 60_000, reminderMs: 600_000 };
  h.clock.advance(alerts.quietMs + 1);
  const mailer: Mailer = { send: async () => ({ refused: [] }), close: async () => {} };
  const deps: Deps = { ...h.deps, mailer, alerts };
  expect(await checkAlerts(deps)).toBe(2);

  const account = `accountId=${acme.accountId}`;
  lists = {
    'GET /alerts': `/alerts?${account}`,
    'GET /emails': `/emails?${account}`,
    'GET /keys': `/keys?${account}`,
    'GET /participants': `/participants?pollId=${poll.pollId}`,
    'GET /polls': `/polls?${account}`,
    'GET /responses': `/responses?${account}`,
    'GET /webhooks': `/webhooks?${account}`,
    'GET /webhooks/deliveries': `/webhooks/deliveries?pollId=${poll.pollId}`,
  };
});

const page = async (url: string): Promise<PageBody> => {
  const res = await call('GET', url, acme.key);
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return res.json();
};

describe('startCursor', () => {
  it('is named on every list of the API, and each list is covered here', async () => {
    const paged = (await apiRoutes(h.app))
      .filter((r) => r.query.some((p) => p.name === 'startCursor'))
      .map(routeName)
      .sort();
    expect(paged).toEqual(Object.keys(lists).sort());
  });

  it("takes a list's own endCursor and answers the next page", async () => {
    for (const url of Object.values(lists)) {
      const first = await page(`${url}&limit=1`);
      expect(first.hasNextPage, url).toBe(true);
      const next = await page(`${url}&limit=1&startCursor=${first.endCursor}`);
      expect(next.data, url).toHaveLength(1);
      expect(next.data[0], url).not.toEqual(first.data[0]);
    }
  });

  it('refuses text that is no id, and the cursor of another list, with a 400 naming startCursor', async () => {
    const cursors: Record<string, string> = {};
    for (const [name, url] of Object.entries(lists)) cursors[name] = (await page(`${url}&limit=1`)).endCursor!;
    for (const [name, url] of Object.entries(lists)) {
      const foreign = Object.entries(cursors)
        .filter(([, c]) => c.split('_')[0] !== cursors[name]!.split('_')[0])
        .map(([, c]) => c);
      expect(foreign.length, name).toBeGreaterThan(0);
      for (const bad of ['garbage', 'zzz', `${cursors[name]}x`, ...foreign]) {
        const res = await call('GET', `${url}&startCursor=${encodeURIComponent(bad)}`, acme.key);
        const problem = expectProblem(res, 400, 'validation_failed');
        expect(JSON.stringify(problem), `${name} ${bad}`).toContain('startCursor');
      }
    }
  });
});
