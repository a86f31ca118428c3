import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { expectProblem, HOOK, request, type Json, type Method, type Problem } from './api.js';
import { harness, type Harness, type TestAccount } from './app.js';

/**
 * Setup shared by the route tests of respondents' answers (test/integration/responses/). A test
 * file calls useResponsesApi() once, at its top: that registers the beforeAll that makes the file's
 * harness (in-memory PGlite, or PostgreSQL when CANVASS_TEST_PG_URL is set; the batch window is
 * the default 5 s) and its accounts, and the afterAll that closes it. The bindings below are
 * assigned by that beforeAll; imports of them are live, so tests read their own file's harness.
 */

export { expectProblem, HOOK, type Json, type Method, type Problem };

export let h: Harness;
export let acme: TestAccount;
export let rival: TestAccount;

export function useResponsesApi(): void {
  beforeAll(async () => {
    h = await harness();
    acme = await h.account({ name: 'Acme' });
    rival = await h.account({ name: 'Rival' });
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

export const submit = (payload: Json, key?: string) => call('POST', '/participant/responses', key, payload);

export async function slide(pollId: string, payload: Json, who = acme): Promise<string> {
  const res = await call('POST', '/slide', who.key, { pollId, ...payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id;
}
