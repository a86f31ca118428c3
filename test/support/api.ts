import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { bearer, type Harness } from './app.js';

/** Helpers shared by the route tests of every subject (test/support/{polls,webhooks,responses}-api.ts). */

export type Json = Record<string, unknown>;
export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
export type Problem = Json & { errors?: { path: string; message: string }[] };

/** The webhook URL the route tests save: public https, as the URL policy wants (the harness runs no worker). */
export const HOOK = 'https://hooks.example.com/canvass';

/** One request to the harness's API, with `key` as the bearer token when there is one. */
export async function request(
  h: Harness,
  method: Method,
  url: string,
  key: string | undefined,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method,
    url,
    headers: key ? bearer(key) : {},
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

/** Asserts an RFC 9457 problem document (status, code, and string type, title and detail); returns the body. */
export function expectProblem(res: LightMyRequestResponse, status: number, code: string): Problem {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({
    status,
    code,
    type: expect.any(String),
    title: expect.any(String),
    detail: expect.any(String),
  });
  return body;
}
