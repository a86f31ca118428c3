import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Role } from '../../src/domain/access.js';
import { expectProblem, HOOK, request, type Json, type Method, type Problem } from './api.js';
import { harness, type Harness, type TestAccount } from './app.js';

/**
 * Setup shared by the route tests of webhooks and their delivery log (test/integration/webhooks/,
 * and DELETE /poll's webhooks in test/integration/polls/). A test file calls useWebhooksApi() once,
 * at its top: that registers the beforeAll that makes the file's harness (in-memory PGlite, or
 * PostgreSQL when CANVASS_TEST_PG_URL is set) with a batch window of 0, so a submission makes its
 * delivery at once, and its accounts; and the afterAll that closes it. The bindings below are
 * assigned by that beforeAll; imports of them are live, so tests read their own file's harness.
 */

export { expectProblem, HOOK, type Json, type Method, type Problem };

export let h: Harness;
export let acme: TestAccount;
export let rival: TestAccount;
/** Keys of acme's members by role (owner is acme.key). */
export const keys = {} as Record<Role, string>;

export function useWebhooksApi(): void {
  beforeAll(async () => {
    h = await harness({ delivery: { batchWindowMs: 0 } });
    acme = await h.account({ name: 'Acme' });
    rival = await h.account({ name: 'Rival' });
    keys.owner = acme.key;
    for (const role of ['admin', 'billing_admin', 'editor', 'read_only'] as const)
      keys[role] = await h.member(acme.accountId, role);
  });
  afterAll(() => h?.close());
}

export async function call(
  method: Method,
  url: string,
  key: string | undefined,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return request(h, method, url, key, payload);
}

export async function newPoll(who: TestAccount, title = 'Hooks'): Promise<string> {
  const res = await call('POST', '/poll', who.key, { accountId: who.accountId, title });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id;
}

export const postHook = (key: string, pollId: string, url = HOOK, deliveryRule = 'partial') =>
  call('POST', '/webhooks', key, { pollId, url, deliveryRule });
