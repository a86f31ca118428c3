import { expect } from 'vitest';
import type { Harness, TestAccount } from './app.js';
import { bearer } from './app.js';

/** A visible poll with a short-answer and an email slide, ready for respondents. */
export async function visiblePoll(h: Harness, acct: TestAccount, extra: Record<string, unknown> = {}) {
  const poll = (
    await h.app.inject({
      method: 'POST',
      url: '/poll',
      headers: bearer(acct.key),
      payload: { accountId: acct.accountId, title: 'Feedback', ...extra },
    })
  ).json().data;
  const slide = async (payload: Record<string, unknown>) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/slide',
      headers: bearer(acct.key),
      payload: { pollId: poll.id, ...payload },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: string };
  };
  const q1 = await slide({ type: 'short-answer', title: 'What brought you here?' });
  const q2 = await slide({ type: 'email-capture', title: 'Your email?' });
  const vis = await h.app.inject({
    method: 'POST',
    url: '/poll/update',
    headers: bearer(acct.key),
    payload: { pollId: poll.id, isVisible: true },
  });
  expect(vis.statusCode, vis.body).toBe(200);
  return { pollId: poll.id as string, q1: q1.id, q2: q2.id };
}

export async function createWebhook(
  h: Harness,
  acct: TestAccount,
  pollId: string,
  url: string,
  deliveryRule: 'partial' | 'complete' = 'partial',
) {
  const res = await h.app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: bearer(acct.key),
    payload: { pollId, url, deliveryRule },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { data: { id: string; legacySecret: string }; signingSecret?: string };
}

export async function answer(h: Harness, payload: Record<string, unknown>) {
  const res = await h.app.inject({ method: 'POST', url: '/participant/responses', payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { participantId: string; responseIds: string[]; complete: boolean };
}
