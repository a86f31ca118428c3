import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LOGIC_CHARS, MAX_LOGIC_VALUES } from '../../src/domain/logic.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';

/**
 * Logic is weighed at every submission (docs/operations.md, Quotas): a slide's rules, and a
 * poll's survey logic, hold at most MAX_LOGIC_VALUES condition values of MAX_LOGIC_CHARS
 * characters in all. Rules saved over the bound may be saved again as they are, or smaller.
 */

let h: Harness;
let acct: TestAccount;
beforeAll(async () => {
  h = await harness();
  acct = await h.account();
});
afterAll(() => h?.close());

const call = (method: 'POST', url: string, payload: object) =>
  h.app.inject({ method, url, headers: bearer(acct.key), payload });

/** One rule per value list: `contains` any of `values`. */
const rules = (...lists: string[][]) =>
  lists.map((values) => ({
    match: 'any',
    conditions: [{ op: 'contains', value: values }],
    action: { type: 'end-survey' },
  }));
const words = (n: number, size = 1) => Array.from({ length: n }, (_, i) => `${i}`.padStart(size, 'w'));

async function poll(): Promise<string> {
  const res = await call('POST', '/poll', { accountId: acct.accountId, title: 'Logic size' });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id as string;
}

describe('the size of a slide’s logic', () => {
  it('takes 100 condition values, and refuses 101 with limit_reached naming /logic', async () => {
    const pollId = await poll();
    const slide = { pollId, type: 'checkbox', title: 'Pick', answers: words(100).map((title) => ({ title })) };
    const full = await call('POST', '/slide', { ...slide, logic: rules(words(60), words(MAX_LOGIC_VALUES - 60)) });
    expect(full.statusCode, full.body).toBe(201);
    const over = await call('POST', '/slide', { ...slide, logic: rules(words(60), words(MAX_LOGIC_VALUES - 59)) });
    expect(over.statusCode, over.body).toBe(409);
    expect(over.json()).toMatchObject({ code: 'limit_reached', errors: [{ path: '/logic' }] });
  });

  it('refuses more than 10,000 characters of values', async () => {
    const pollId = await poll();
    const long = words(11, 1_000);
    expect(long.join('').length).toBeGreaterThan(MAX_LOGIC_CHARS);
    const res = await call('POST', '/slide', {
      pollId,
      type: 'short-answer',
      title: 'Say',
      logic: long.map((value) => ({
        match: 'any',
        conditions: [{ op: 'contains', value }],
        action: { type: 'end-survey' },
      })),
    });
    expect(res.statusCode, res.body).toBe(409);
  });

  it('lets rules saved over the bound be saved again as they are, or smaller, but not larger', async () => {
    const pollId = await poll();
    const made = await call('POST', '/slide', { pollId, type: 'checkbox', title: 'Pick', answers: [{ title: 'a' }] });
    expect(made.statusCode, made.body).toBe(201);
    const slideId = made.json().data.id as string;
    // As a slide saved before the bound would hold it.
    const big = rules(words(100), words(50));
    await sql`UPDATE slides SET logic = ${JSON.stringify(big)}::jsonb WHERE id = ${slideId}`.execute(h.database.db);
    const update = (logic: object) => call('POST', '/slide/update', { slideId, logic });
    expect((await update(big)).statusCode).toBe(200);
    expect((await update(rules(words(100), words(40)))).statusCode).toBe(200);
    expect((await update(rules(words(100), words(45)))).statusCode).toBe(409);
  });
});

describe('the size of a poll’s survey logic', () => {
  it('is bounded as a slide’s is', async () => {
    const pollId = await poll();
    const s = await call('POST', '/slide', { pollId, type: 'checkbox', title: 'Pick', answers: [{ title: 'a' }] });
    const slideId = s.json().data.id as string;
    const survey = (...lists: string[][]) =>
      lists.map((values) => ({
        on: 'complete',
        conditions: [{ slideId, op: 'contains', value: values }],
        action: { type: 'end-survey' },
      }));
    expect((await call('POST', '/poll/update', { pollId, actionLogic: survey(words(60), words(40)) })).statusCode).toBe(
      200,
    );
    const over = await call('POST', '/poll/update', { pollId, actionLogic: survey(words(60), words(41)) });
    expect(over.statusCode, over.body).toBe(409);
    expect(over.json()).toMatchObject({ code: 'limit_reached', errors: [{ path: '/actionLogic' }] });
  });
});

describe('rules over the bounds', () => {
  it('are refused before any Trigger webhook URL among them is looked up', async () => {
    const pollId = await poll();
    const looked: string[] = [];
    const resolveHost = h.deps.resolveHost;
    h.deps.resolveHost = async (host) => (looked.push(host), ['93.184.216.34']);
    try {
      const hook = (values: string[], n: number) => ({
        match: 'any',
        conditions: [{ op: 'contains', value: values }],
        action: { type: 'trigger-webhook', url: `https://hook-${n}.example.com/in` },
      });
      const over = await call('POST', '/slide', {
        pollId,
        type: 'short-answer',
        title: 'Too many',
        logic: [hook(words(60), 1), hook(words(41), 2)],
      });
      expect(over.statusCode, over.body).toBe(409);
      expect(looked).toEqual([]);
      const within = await call('POST', '/slide', {
        pollId,
        type: 'short-answer',
        title: 'Within',
        logic: [hook(words(60), 1), hook(words(40), 2)],
      });
      expect(within.statusCode, within.body).toBe(201);
      expect(looked).toEqual(['hook-1.example.com', 'hook-2.example.com']);
    } finally {
      h.deps.resolveHost = resolveHost;
    }
  });

  it('looks their names up at once, each name once, and refuses with the first rule that fails', async () => {
    const pollId = await poll();
    const looked: string[] = [];
    let under = 0;
    let most = 0;
    const resolveHost = h.deps.resolveHost;
    h.deps.resolveHost = async (host) => {
      looked.push(host);
      most = Math.max(most, ++under);
      // The first rule's refusal comes last: the refusal is still the first rule's.
      await new Promise((r) => setTimeout(r, host === 'inside-1.example.com' ? 60 : 20));
      under--;
      return [host.startsWith('inside') ? '10.0.0.7' : '93.184.216.34'];
    };
    try {
      const hook = (host: string) => ({
        match: 'any',
        conditions: [{ op: 'contains', value: ['x'] }],
        action: { type: 'trigger-webhook', url: `https://${host}/in` },
      });
      const res = await call('POST', '/slide', {
        pollId,
        type: 'short-answer',
        title: 'Hooks',
        logic: [
          hook('out.example.com'),
          hook('inside-1.example.com'),
          hook('out.example.com'),
          hook('inside-2.example.com'),
        ],
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_url', errors: [{ path: '/logic/1/action/url' }] });
      expect([...looked].sort()).toEqual(['inside-1.example.com', 'inside-2.example.com', 'out.example.com']);
      expect(most).toBe(3);
      // A URL refused for its form is answered before any name is looked up.
      looked.length = 0;
      const badForm = await call('POST', '/slide', {
        pollId,
        type: 'short-answer',
        title: 'Hooks',
        logic: [
          hook('out.example.com'),
          { ...hook('x'), action: { type: 'trigger-webhook', url: 'http://plain.example.com/in' } },
        ],
      });
      expect(badForm.statusCode, badForm.body).toBe(400);
      expect(badForm.json()).toMatchObject({ code: 'invalid_url', errors: [{ path: '/logic/1/action/url' }] });
      expect(looked).toEqual([]);
    } finally {
      h.deps.resolveHost = resolveHost;
    }
  });
});
