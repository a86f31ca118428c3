import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { request, type Json, type Method } from './api.js';
import { harness, type Harness, type TestAccount } from './app.js';
import { SPEC_TABLES } from './spec-tables.js';

/**
 * Setup shared by the route tests of polls, slides, translations, research and account settings
 * (test/integration/polls/, test/integration/accounts/). A test file calls usePollsApi() once, at
 * its top: that registers the beforeAll that makes the file's harness (in-memory PGlite, or
 * PostgreSQL when CANVASS_TEST_PG_URL is set) and its accounts, and the afterAll that closes it.
 * The bindings below are assigned by that beforeAll; imports of them are live, so tests read the
 * values of their own file's harness.
 */

export type { Json, Method };

export let h: Harness;
/** Account A: the main subject. */
export let acme: TestAccount;
/** Account B: premium too, but must never see A's resources. */
export let rival: TestAccount;
export let acmeEditor: string;
export let acmeAdmin: string;
export let acmeReader: string;

export function usePollsApi(): void {
  beforeAll(async () => {
    h = await harness();
    acme = await h.account({ name: 'Acme' });
    rival = await h.account({ name: 'Rival' });
    acmeEditor = await h.member(acme.accountId, 'editor');
    acmeAdmin = await h.member(acme.accountId, 'admin');
    acmeReader = await h.member(acme.accountId, 'read_only');
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

/** Asserts an RFC 9457 problem document with the contract's fields; returns the body. */
export function expectProblem(
  res: LightMyRequestResponse,
  status: number,
  code: string,
): Json & { errors?: { path: string; message: string }[] } {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code });
  expect(typeof body.type).toBe('string');
  expect(body.type.length).toBeGreaterThan(0);
  expect(typeof body.title).toBe('string');
  expect(body.title.length).toBeGreaterThan(0);
  expect(typeof body.detail).toBe('string');
  return body;
}

export function paths(body: { errors?: { path: string }[] }): string[] {
  return (body.errors ?? []).map((e) => e.path);
}

export async function createPoll(who: TestAccount, extra: Json = {}, key = who.key): Promise<Json & { id: string }> {
  const res = await call('POST', '/poll', key, { accountId: who.accountId, title: 'A poll', ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

export async function addSlide(
  pollId: string,
  extra: Json = {},
  key = acme.key,
): Promise<Json & { id: string; idx: number }> {
  const res = await call('POST', '/slide', key, { pollId, type: 'short-answer', title: 'Tell us more', ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

export async function slideIds(pollId: string): Promise<string[]> {
  const res = await call('GET', `/slides?pollId=${pollId}`, acme.key);
  expect(res.statusCode).toBe(200);
  return res.json().data.map((s: { id: string }) => s.id);
}

// The defaults a new poll takes where neither the request nor the account sets a value, written
// out once in test/support (not imported from src, so a wrong constant fails).
export const SPEC_SETTINGS = { ...SPEC_TABLES.settings, isSynthetic: false, anonymous: false };
export const SPEC_DISPLAY = SPEC_TABLES.displaySettings;
export const SPEC_SMS = SPEC_TABLES.smsDisplaySettings;
export const SPEC_EMAIL = SPEC_TABLES.emailDisplaySettings;
export const SPEC_VISIBILITY = SPEC_TABLES.visibilitySettings;
