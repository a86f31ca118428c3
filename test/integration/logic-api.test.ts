import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import { answer } from '../support/fixtures.js';

/**
 * Question logic and survey action logic through the HTTP API (README, API overview and
 * Webhooks): where the respondent goes next, which logic-triggered deliveries are queued,
 * and the URL check when logic is saved. The harness runs no worker, so queued deliveries stay
 * in the table to be looked at. PGlite, or PostgreSQL with CANVASS_TEST_PG_URL.
 */

let h: Harness;
let acct: TestAccount;

type Json = Record<string, unknown>;

beforeAll(async () => {
  h = await harness();
  acct = await h.account();
});
afterAll(() => h?.close());

async function call(method: 'GET' | 'POST', url: string, payload?: Json): Promise<LightMyRequestResponse> {
  return h.app.inject({ method, url, headers: bearer(acct.key), ...(payload ? { payload } : {}) });
}

async function ok(method: 'GET' | 'POST', url: string, payload: Json | undefined, status: number) {
  const res = await call(method, url, payload);
  expect(res.statusCode, res.body).toBe(status);
  return res.json().data;
}

const LOW_HOOK = 'https://hooks.example.com/low-score?src=logic';
const DONE_HOOK = 'https://automation.example.org/catch/42/done';

/**
 * A poll of four slides: a Yes/No choice (Yes skips to the comment, No ends the survey), a star
 * rating (below 3 triggers a webhook), a comment and an email. Survey action logic: on
 * completion with "Yes" chosen, trigger another webhook.
 */
async function logicPoll() {
  const poll = await ok('POST', '/poll', { accountId: acct.accountId, title: 'Logic poll' }, 201);
  const slide = (payload: Json) => ok('POST', '/slide', { pollId: poll.id, ...payload }, 201);
  const choice = await slide({
    type: 'question',
    title: 'Did you find what you wanted?',
    answers: [{ title: 'Yes' }, { title: 'No' }],
  });
  const rating = await slide({
    type: 'star-rating',
    title: 'Rate us',
    logic: [{ match: 'all', conditions: [{ op: 'lt', value: 3 }], action: { type: 'trigger-webhook', url: LOW_HOOK } }],
  });
  const comment = await slide({ type: 'short-answer', title: 'Anything else?' });
  const email = await slide({ type: 'email-capture', title: 'Your email?' });
  // Skip targets must exist, so the choice's logic is set once every slide is there.
  await ok(
    'POST',
    '/slide/update',
    {
      slideId: choice.id,
      logic: [
        { match: 'all', conditions: [{ op: 'equals', value: 'No' }], action: { type: 'end-survey' } },
        {
          match: 'all',
          conditions: [{ op: 'equals', value: 'yes' }],
          action: { type: 'skip-to', slideId: comment.id },
        },
      ],
    },
    200,
  );
  await ok(
    'POST',
    '/poll/update',
    {
      pollId: poll.id,
      isVisible: true,
      actionLogic: [
        {
          on: 'complete',
          conditions: [{ slideId: choice.id, op: 'equals', value: 'Yes' }],
          action: { type: 'trigger-webhook', url: DONE_HOOK },
        },
      ],
    },
    200,
  );
  return {
    pollId: poll.id as string,
    choice: choice.id as string,
    rating: rating.id as string,
    comment: comment.id as string,
    email: email.id as string,
  };
}

async function submit(payload: Json) {
  const res = await h.app.inject({ method: 'POST', url: '/participant/responses', payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as {
    participantId: string;
    responseIds: string[];
    complete: boolean;
    nextSlideId: string | null;
    ended: boolean;
  };
}

const deliveriesOf = (pollId: string, participantId?: string) => {
  let q = h.database.db.selectFrom('deliveries').selectAll().where('poll_id', '=', pollId);
  if (participantId) q = q.where('participant_id', '=', participantId);
  return q.orderBy('created_at').execute();
};

describe('what comes next (question logic navigation)', () => {
  let p: Awaited<ReturnType<typeof logicPoll>>;
  beforeAll(async () => {
    p = await logicPoll();
  });

  it('skip-to sends the respondent to the named slide', async () => {
    const r = await submit({ pollId: p.pollId, answers: [{ slideId: p.choice, value: 'Yes' }] });
    expect(r).toMatchObject({ nextSlideId: p.comment, ended: false, complete: false });
  });

  it('end-survey ends it', async () => {
    const r = await submit({ pollId: p.pollId, answers: [{ slideId: p.choice, value: 'No' }] });
    expect(r).toMatchObject({ nextSlideId: null, ended: true, complete: false });
  });

  it('without a firing navigation rule, the next slide in order follows', async () => {
    // Rating 5: its only rule (< 3) does not fire.
    const r = await submit({ pollId: p.pollId, answers: [{ slideId: p.rating, value: 5 }] });
    expect(r).toMatchObject({ nextSlideId: p.comment, ended: false });
    // A slide with no logic at all.
    const c = await submit({ pollId: p.pollId, answers: [{ slideId: p.comment, value: 'fine' }] });
    expect(c).toMatchObject({ nextSlideId: p.email, ended: false });
  });

  it('a firing trigger-webhook rule does not navigate: the next slide in order still follows', async () => {
    const r = await submit({ pollId: p.pollId, answers: [{ slideId: p.rating, value: 1 }] });
    expect(r).toMatchObject({ nextSlideId: p.comment, ended: false });
  });

  it('after the last slide, the survey has ended', async () => {
    const r = await submit({ pollId: p.pollId, answers: [{ slideId: p.email, value: 'a@example.com' }] });
    expect(r).toMatchObject({ nextSlideId: null, ended: true });
  });

  it('the last answer of a submission decides', async () => {
    const r = await submit({
      pollId: p.pollId,
      answers: [
        { slideId: p.rating, value: 4 },
        { slideId: p.choice, value: 'No' },
      ],
    });
    expect(r).toMatchObject({ nextSlideId: null, ended: true });
  });

  it('continue moves on in order, and a later skip-to rule does not override an earlier navigation', async () => {
    const poll = await ok('POST', '/poll', { accountId: acct.accountId, title: 'Continue poll' }, 201);
    const a = await ok('POST', '/slide', { pollId: poll.id, type: 'range', title: 'How much?' }, 201);
    const b = await ok('POST', '/slide', { pollId: poll.id, type: 'short-answer', title: 'Why?' }, 201);
    const c = await ok('POST', '/slide', { pollId: poll.id, type: 'short-answer', title: 'Else?' }, 201);
    await ok(
      'POST',
      '/slide/update',
      {
        slideId: a.id,
        logic: [
          { match: 'any', conditions: [{ op: 'gt', value: '5' }], action: { type: 'continue' } },
          { match: 'all', conditions: [{ op: 'answered' }], action: { type: 'skip-to', slideId: c.id } },
        ],
      },
      200,
    );
    await ok('POST', '/poll/update', { pollId: poll.id, isVisible: true }, 200);
    expect(await submit({ pollId: poll.id, answers: [{ slideId: a.id, value: 8 }] })).toMatchObject({
      nextSlideId: b.id,
      ended: false,
    });
    expect(await submit({ pollId: poll.id, answers: [{ slideId: a.id, value: 2 }] })).toMatchObject({
      nextSlideId: c.id,
      ended: false,
    });
  });
});

describe('logic-triggered deliveries', () => {
  let p: Awaited<ReturnType<typeof logicPoll>>;
  beforeAll(async () => {
    p = await logicPoll();
  });

  it('a question rule whose condition holds queues one delivery to its URL', async () => {
    const r = await submit({ pollId: p.pollId, answers: [{ slideId: p.rating, value: 2 }] });
    const rows = await deliveriesOf(p.pollId, r.participantId);
    expect(rows).toHaveLength(1);
    const d = rows[0]!;
    expect(d).toMatchObject({
      source: 'question-logic',
      webhook_id: null,
      url: LOW_HOOK,
      type: 'submitted-responses',
      status: 'pending',
      account_id: acct.accountId,
    });
    expect(d.id).toMatch(/^dlv_/);
    const body = JSON.parse(d.body);
    expect(body).toMatchObject({
      type: 'submitted-responses',
      accountId: acct.accountId,
      pollId: p.pollId,
      participantId: r.participantId,
      submissionsComplete: false,
      email: null,
      emails: [],
    });
    expect(Object.keys(body.responses)).toEqual([p.rating]);
    expect(body.responses[p.rating]).toMatchObject({
      slideId: p.rating,
      type: 'star-rating',
      value: 2,
      title: 'Rate us',
    });
    expect(typeof body.timestamp).toBe('number');
  });

  it('a question rule whose condition fails queues nothing', async () => {
    const r = await submit({ pollId: p.pollId, answers: [{ slideId: p.rating, value: 3 }] });
    expect(await deliveriesOf(p.pollId, r.participantId)).toEqual([]);
  });

  it('logic deliveries show in the delivery log of the poll, webhookId null', async () => {
    const r = await submit({
      pollId: p.pollId,
      participantId: 'log-check',
      answers: [{ slideId: p.rating, value: 1 }],
    });
    const page = await call('GET', `/webhooks/deliveries?pollId=${p.pollId}`);
    expect(page.statusCode, page.body).toBe(200);
    const mine = (page.json().data as Json[]).filter((d) => d.participantId === r.participantId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      source: 'question-logic',
      webhookId: null,
      url: LOW_HOOK,
      type: 'submitted-responses',
    });
  });

  it('survey action logic on completion queues a completed-survey delivery with every answer', async () => {
    const first = await submit({ pollId: p.pollId, answers: [{ slideId: p.choice, value: 'Yes' }] });
    // Not complete yet: nothing from the survey rule.
    expect((await deliveriesOf(p.pollId, first.participantId)).filter((d) => d.source === 'survey-logic')).toEqual([]);
    const done = await submit({
      pollId: p.pollId,
      participantId: first.participantId,
      answers: [
        { slideId: p.comment, value: 'Great' },
        { slideId: p.email, value: 'Eve@Example.com' },
      ],
      complete: true,
    });
    expect(done.complete).toBe(true);
    expect(done.ended).toBe(true);
    const rows = (await deliveriesOf(p.pollId, first.participantId)).filter((d) => d.source === 'survey-logic');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      source: 'survey-logic',
      webhook_id: null,
      url: DONE_HOOK,
      type: 'completed-survey',
    });
    const body = JSON.parse(rows[0]!.body);
    expect(body).toMatchObject({
      type: 'completed-survey',
      submissionsComplete: true,
      participantId: first.participantId,
      email: 'eve@example.com',
      emails: ['eve@example.com'],
    });
    expect(Object.keys(body.responses).sort()).toEqual([p.choice, p.comment, p.email].sort());
  });

  it('survey action logic whose condition fails queues nothing on completion', async () => {
    const r = await submit({
      pollId: p.pollId,
      answers: [
        { slideId: p.choice, value: 'No' },
        { slideId: p.comment, value: 'meh' },
      ],
      complete: true,
    });
    expect(r.complete).toBe(true);
    expect(await deliveriesOf(p.pollId, r.participantId)).toEqual([]);
  });

  it('a completion fires the survey rule once, and the question rule of the same submission too', async () => {
    const r = await submit({
      pollId: p.pollId,
      answers: [
        { slideId: p.choice, value: 'Yes' },
        { slideId: p.rating, value: 1 },
        { slideId: p.comment, value: 'ok' },
        { slideId: p.email, value: 'x@example.com' },
      ],
    });
    // Every answerable slide answered: complete without complete:true.
    expect(r.complete).toBe(true);
    const rows = await deliveriesOf(p.pollId, r.participantId);
    expect(rows.map((d) => [d.source, d.url, d.type]).sort()).toEqual(
      [
        ['question-logic', LOW_HOOK, 'submitted-responses'],
        ['survey-logic', DONE_HOOK, 'completed-survey'],
      ].sort(),
    );
    expect(new Set(rows.map((d) => d.id)).size).toBe(2);
    // One logic endpoint per (poll, slide or survey, URL), reused by later deliveries.
    const endpoints = await h.database.db.selectFrom('endpoints').selectAll().where('poll_id', '=', p.pollId).execute();
    expect(endpoints.map((e) => [e.source, e.slide_id, e.url, e.webhook_id]).sort()).toEqual(
      [
        ['question-logic', p.rating, LOW_HOOK, null],
        ['survey-logic', null, DONE_HOOK, null],
      ].sort(),
    );
  });

  it('a saved webhook on the same poll still gets its own deliveries, with source webhook', async () => {
    const poll = await logicPoll();
    const res = await call('POST', '/webhooks', {
      pollId: poll.pollId,
      url: 'https://saved.example.com/hook',
      deliveryRule: 'complete',
    });
    expect(res.statusCode, res.body).toBe(201);
    const webhookId = res.json().data.id;
    const r = await answer(h, {
      pollId: poll.pollId,
      answers: [{ slideId: poll.choice, value: 'Yes' }],
      complete: true,
    });
    const rows = await deliveriesOf(poll.pollId, r.participantId);
    expect(rows.map((d) => [d.source, d.webhook_id]).sort()).toEqual([
      ['survey-logic', null],
      ['webhook', webhookId],
    ]);
  });
});

describe('logic URLs are checked when saved', () => {
  let pollId: string;
  let slideId: string;
  beforeAll(async () => {
    const poll = await ok('POST', '/poll', { accountId: acct.accountId, title: 'URL checks' }, 201);
    pollId = poll.id;
    slideId = (await ok('POST', '/slide', { pollId, type: 'short-answer', title: 'Q' }, 201)).id;
  });

  const questionRule = (url: string) => [
    { match: 'all', conditions: [{ op: 'answered' }], action: { type: 'trigger-webhook', url } },
  ];
  const surveyRule = (url: string) => [{ on: 'complete', action: { type: 'trigger-webhook', url } }];

  function expectInvalidUrl(res: LightMyRequestResponse, path: string) {
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = res.json();
    expect(body.code).toBe('invalid_url');
    expect(body.errors.map((e: { path: string }) => e.path)).toContain(path);
  }

  const BAD = [
    'http://hooks.example.com/x',
    'https://127.0.0.1/x',
    'https://localhost/x',
    'https://10.1.2.3/x',
    'ftp://hooks.example.com/x',
    'not a url',
  ];

  it('on a new slide', async () => {
    for (const url of BAD) {
      expectInvalidUrl(
        await call('POST', '/slide', { pollId, type: 'short-answer', title: 'Q2', logic: questionRule(url) }),
        '/logic/0/action/url',
      );
    }
    expect((await call('GET', `/slides?pollId=${pollId}`)).json().data).toHaveLength(1);
  });

  it('on a slide update, leaving the slide as it was', async () => {
    for (const url of BAD) {
      expectInvalidUrl(
        await call('POST', '/slide/update', { slideId, logic: questionRule(url) }),
        '/logic/0/action/url',
      );
    }
    const slides = (await call('GET', `/slides?pollId=${pollId}`)).json().data;
    expect(slides[0].logic).toEqual([]);
  });

  it('in survey action logic on poll creation and update', async () => {
    for (const url of ['http://hooks.example.com/x', 'https://127.0.0.1/x']) {
      expectInvalidUrl(
        await call('POST', '/poll', { accountId: acct.accountId, title: 'Bad', actionLogic: surveyRule(url) }),
        '/actionLogic/0/action/url',
      );
      expectInvalidUrl(
        await call('POST', '/poll/update', { pollId, actionLogic: surveyRule(url) }),
        '/actionLogic/0/action/url',
      );
    }
    expect((await call('GET', `/poll?pollId=${pollId}`)).json().data.actionLogic).toEqual([]);
  });

  it('accepts a public https URL in both places', async () => {
    await ok('POST', '/slide/update', { slideId, logic: questionRule('https://hooks.example.com/ok') }, 200);
    const poll = await ok(
      'POST',
      '/poll/update',
      { pollId, actionLogic: surveyRule('https://hooks.example.com/done') },
      200,
    );
    expect(poll.actionLogic).toEqual(surveyRule('https://hooks.example.com/done'));
  });

  it('a loopback URL is accepted only when private targets are allowed (CANVASS_ALLOW_PRIVATE_TARGETS)', async () => {
    // The same app with the development policy: the routes read deps.urlPolicy per request.
    const saved = h.deps.urlPolicy;
    h.deps.urlPolicy = { allowPrivateTargets: true };
    try {
      await ok('POST', '/slide/update', { slideId, logic: questionRule('https://127.0.0.1:8443/x') }, 200);
      expectInvalidUrl(
        await call('POST', '/slide/update', { slideId, logic: questionRule('http://127.0.0.1:8443/x') }),
        '/logic/0/action/url',
      );
    } finally {
      h.deps.urlPolicy = saved;
    }
    expectInvalidUrl(
      await call('POST', '/slide/update', { slideId, logic: questionRule('https://127.0.0.1:8443/y') }),
      '/logic/0/action/url',
    );
  });
});
