import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';

let h: Harness;
let acct: TestAccount;

beforeAll(async () => {
  h = await harness();
  acct = await h.account();
});
afterAll(() => h?.close());

const post = (url: string, payload: unknown, key = acct.key) =>
  h.app.inject({ method: 'POST', url, headers: bearer(key), payload: payload as object });

describe('the signing secret of an account that only uses logic-triggered webhooks', () => {
  it('is returned once, by the first save of a Trigger webhook action, and never again', async () => {
    const poll = (await post('/poll', { accountId: acct.accountId, title: 'Logic only' })).json().data;
    const plain = await post('/slide', { pollId: poll.id, type: 'short-answer', title: 'No logic' });
    expect(plain.json().signingSecret).toBeUndefined();

    const first = await post('/slide', {
      pollId: poll.id,
      type: 'short-answer',
      title: 'With a trigger',
      logic: [
        {
          match: 'all',
          conditions: [{ op: 'answered' }],
          action: { type: 'trigger-webhook', url: 'https://hooks.example.com/a' },
        },
      ],
    });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().signingSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const stored = await h.deps.store.accounts.get(acct.accountId);
    expect(stored?.signingSecret).toBe(first.json().signingSecret);

    const again = await post('/poll/update', {
      pollId: poll.id,
      actionLogic: [{ on: 'complete', action: { type: 'trigger-webhook', url: 'https://hooks.example.com/b' } }],
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().signingSecret).toBeUndefined();
    const hook = await post('/webhooks', {
      pollId: poll.id,
      url: 'https://hooks.example.com/c',
      deliveryRule: 'partial',
    });
    expect(hook.statusCode, hook.body).toBe(201);
    expect(hook.json().signingSecret).toBeUndefined();
  });

  it('is neither made nor shown by an editor saving Trigger webhook actions as they are stored', async () => {
    // Actions stored before the account had a secret (its first delivery makes one).
    const legacy = await h.account();
    const editor = await h.member(legacy.accountId, 'editor');
    const poll = (await post('/poll', { accountId: legacy.accountId, title: 'Legacy' }, legacy.key)).json().data;
    await post('/slide', { pollId: poll.id, type: 'short-answer', title: 'S' }, legacy.key);
    const slide = (await h.deps.store.slides.listByPoll(poll.id))[0]!;
    const action = { type: 'trigger-webhook' as const, url: 'https://hooks.example.com/l' };
    await h.deps.store.slides.update({ ...slide, logic: [{ match: 'all', conditions: [{ op: 'answered' }], action }] });
    const read = await h.app.inject({ method: 'GET', url: `/slides?pollId=${poll.id}`, headers: bearer(editor) });
    const saved = await post(
      '/slide/update',
      { slideId: slide.id, title: 'Renamed', logic: read.json().data[0].logic },
      editor,
    );
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json().signingSecret).toBeUndefined();
    expect((await h.deps.store.accounts.get(legacy.accountId))?.signingSecret).toBeNull();
  });

  it('is not created by a dry run', async () => {
    const other = await h.account();
    const preview = await post(
      '/poll',
      {
        accountId: other.accountId,
        title: 'Preview',
        dryRun: true,
        actionLogic: [{ on: 'complete', action: { type: 'trigger-webhook', url: 'https://hooks.example.com/p' } }],
      },
      other.key,
    );
    expect(preview.statusCode).toBe(200);
    expect(preview.json().signingSecret).toBeUndefined();
    expect((await h.deps.store.accounts.get(other.accountId))?.signingSecret).toBeNull();
    const commit = await post('/commit', { data: preview.json().data }, other.key);
    expect(commit.statusCode, commit.body).toBe(201);
    expect(commit.json().signingSecret).toMatch(/^whsec_/);
  });
});

describe('logic URLs', () => {
  it('are stored in the same normalised form as webhook URLs', async () => {
    const poll = (await post('/poll', { accountId: acct.accountId, title: 'Normalised' })).json().data;
    const res = await post('/slide', {
      pollId: poll.id,
      type: 'short-answer',
      title: 'Q',
      logic: [
        {
          match: 'any',
          conditions: [{ op: 'answered' }],
          action: { type: 'trigger-webhook', url: 'https://Hooks.EXAMPLE.com:443/Path' },
        },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.logic[0].action.url).toBe('https://hooks.example.com/Path');
  });
});
