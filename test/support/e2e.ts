import { expect } from 'vitest';
import type { apiClient } from './processes.js';

/** Small helpers shared by the real-process tests (test/e2e). */

export type Api = ReturnType<typeof apiClient>;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `fn` until it holds; fails naming `what` after `timeoutMs`. */
export async function until(
  what: string,
  fn: () => Promise<boolean> | boolean,
  timeoutMs: number,
  everyMs = 100,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Every page of a list endpoint (`p` already has a query string). */
export async function listAll<T>(api: Api, p: string): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const res = await api('GET', `${p}&limit=100${cursor ? `&startCursor=${cursor}` : ''}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    out.push(...(res.json.data as T[]));
    cursor = res.json.hasNextPage ? (res.json.endCursor as string) : null;
  } while (cursor);
  return out;
}

/** A visible poll with the given short-answer slides and one webhook per (path url, rule). */
export async function surveyWithWebhooks(
  api: Api,
  accountId: string,
  opts: { title: string; slides: string[]; webhooks: { url: string; deliveryRule: 'partial' | 'complete' }[] },
): Promise<{ pollId: string; slideIds: string[]; webhookIds: string[]; secret: string | undefined }> {
  const poll = await api('POST', '/poll', { accountId, title: opts.title });
  expect(poll.status, JSON.stringify(poll.json)).toBe(201);
  const pollId = (poll.json.data as { id: string }).id;
  const slideIds: string[] = [];
  for (const title of opts.slides) {
    const slide = await api('POST', '/slide', { pollId, type: 'short-answer', title });
    expect(slide.status, JSON.stringify(slide.json)).toBe(201);
    slideIds.push((slide.json.data as { id: string }).id);
  }
  const visible = await api('POST', '/poll/update', { pollId, isVisible: true });
  expect(visible.status, JSON.stringify(visible.json)).toBe(200);
  const webhookIds: string[] = [];
  let secret: string | undefined;
  for (const w of opts.webhooks) {
    const hook = await api('POST', '/webhooks', { pollId, ...w });
    expect(hook.status, JSON.stringify(hook.json)).toBe(201);
    webhookIds.push((hook.json.data as { id: string }).id);
    secret ??= hook.json.signingSecret as string | undefined;
  }
  return { pollId, slideIds, webhookIds, secret };
}

/** Whether a child process is still running (no exit code, no signal). */
export const alive = (child: { exitCode: number | null; signalCode: NodeJS.Signals | null }) =>
  child.exitCode === null && child.signalCode === null;
