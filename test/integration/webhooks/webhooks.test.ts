import { beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../../../src/app/accounts/set-plan.js';
import type { Plan } from '../../../src/domain/access.js';
import type { TestAccount } from '../../support/app.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import {
  acme,
  call,
  expectProblem,
  h,
  HOOK,
  keys,
  newPoll,
  postHook,
  rival,
  useWebhooksApi,
  type Json,
} from '../../support/webhooks-api.js';

/**
 * Route tests for managing webhooks (src/http/routes/webhooks.ts; src/app/webhooks/): POST, GET and
 * DELETE /webhooks, the URL policy (a public https:// URL only), who may manage them (owner, admin
 * and billing_admin, on premium and enterprise plans), the limit of 20 webhooks per poll, and the
 * account signing secret, shown once, in the answer to the account's first webhook. The delivery
 * log has its own file beside this one (deliveries.test.ts).
 */

useWebhooksApi();

describe('POST /webhooks', () => {
  it('creates a webhook: 201 {data: Webhook} with its own legacy secret and a health object', async () => {
    const pollId = await newPoll(acme);
    const res = await postHook(acme.key, pollId, HOOK, 'complete');
    expect(res.statusCode, res.body).toBe(201);
    const w = res.json().data;
    expect(w).toEqual({
      id: expect.stringMatching(/^whk_[0-9A-Za-z]{22}$/),
      accountId: acme.accountId,
      pollId,
      url: HOOK,
      deliveryRule: 'complete',
      legacySecret: expect.any(String),
      createdAt: h.clock.now().toISOString(),
      paused: false,
      pausedAt: null,
      health: { state: 'healthy', lastSuccessAt: null, lastGivenUpAt: null, alertEmailsSent: 0 },
    });
    expect(w.legacySecret.length).toBeGreaterThanOrEqual(20);
    expect(w.legacySecret).not.toMatch(/^whsec_/);
  });

  it('each webhook has its own legacySecret', async () => {
    const pollId = await newPoll(acme);
    const a = (await postHook(acme.key, pollId)).json().data;
    const b = (await postHook(acme.key, pollId)).json().data;
    expect(a.id).not.toBe(b.id);
    expect(a.legacySecret).not.toBe(b.legacySecret);
  });

  it('normalises the URL as WHATWG parsing does', async () => {
    const pollId = await newPoll(acme);
    const res = await postHook(acme.key, pollId, '  HTTPS://Hooks.Example.COM/In?x=1  ');
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.url).toBe('https://hooks.example.com/In?x=1');
  });

  it.each([
    ['only pollId', {}, '/url'],
    ['only pollId (rule)', {}, '/deliveryRule'],
    ['unknown deliveryRule', { url: HOOK, deliveryRule: 'always' }, '/deliveryRule'],
    ['missing url', { deliveryRule: 'partial' }, '/url'],
    ['unknown field', { url: HOOK, deliveryRule: 'partial', secret: 'x' }, '/secret'],
  ])('400 validation_failed: %s', async (_n, body, path) => {
    const pollId = await newPoll(acme);
    const res = await call('POST', '/webhooks', acme.key, { pollId, ...body });
    const p = expectProblem(res, 400, 'validation_failed');
    expect((p.errors ?? []).map((e) => e.path)).toContain(path);
  });

  it('401 without a key', async () => {
    const pollId = await newPoll(acme);
    expectProblem(
      await call('POST', '/webhooks', undefined, { pollId, url: HOOK, deliveryRule: 'partial' }),
      401,
      'unauthenticated',
    );
  });

  it('404 for a poll that does not exist or belongs to another account', async () => {
    expectProblem(await postHook(acme.key, 'poll_0000000000000000000000'), 404, 'not_found');
    const rivalPoll = await newPoll(rival);
    expectProblem(await postHook(acme.key, rivalPoll), 404, 'not_found');
  });
});

describe('URL policy: a public https:// URL only (harness default: private targets not allowed)', () => {
  let pollId: string;
  beforeAll(async () => {
    pollId = await newPoll(acme, 'URL policy');
  });

  it.each([
    ['http://', 'http://hooks.example.com/canvass'],
    ['userinfo user:pass', 'https://user:pass@hooks.example.com/'],
    ['userinfo user only', 'https://user@hooks.example.com/'],
    ['localhost', 'https://localhost/hook'],
    ['sub.localhost', 'https://api.localhost/hook'],
    ['127.0.0.1', 'https://127.0.0.1/hook'],
    ['2130706433 (decimal 127.0.0.1)', 'https://2130706433/hook'],
    ['0x7f000001 (hex 127.0.0.1)', 'https://0x7f000001/hook'],
    ['0177.0.0.1 (octal 127.0.0.1)', 'https://0177.0.0.1/hook'],
    ['127.1 (short form)', 'https://127.1/hook'],
    ['[::1]', 'https://[::1]/hook'],
    ['[::ffff:127.0.0.1]', 'https://[::ffff:127.0.0.1]/hook'],
    ['10.0.0.1', 'https://10.0.0.1/hook'],
    ['169.254.169.254 (cloud metadata)', 'https://169.254.169.254/latest/meta-data'],
    ['192.168.1.1', 'https://192.168.1.1/hook'],
    ['172.16.0.1', 'https://172.16.0.1/hook'],
    ['0.0.0.0', 'https://0.0.0.0/hook'],
    ['[fe80::1]', 'https://[fe80::1]/hook'],
    ['[fc00::1] (unique local)', 'https://[fc00::1]/hook'],
    ['not-a-host_name', 'https://not-a-host_name/hook'],
    ['a single-label name', 'https://intranet/hook'],
    ['.internal', 'https://metadata.google.internal/hook'],
    ['not a URL', 'hooks.example.com/canvass'],
    ['empty', ''],
  ])('%s → 400 invalid_url', async (_n, url) => {
    const res = await postHook(acme.key, pollId, url);
    if (url === '') {
      // An empty string may already fail the body schema; either way it is a 400 naming url.
      expect(res.statusCode, res.body).toBe(400);
      expect(['invalid_url', 'validation_failed']).toContain(res.json().code);
      return;
    }
    const p = expectProblem(res, 400, 'invalid_url');
    expect(p.errors?.[0]?.path).toBe('/url');
  });

  it('nothing was saved by the refusals', async () => {
    const res = await call('GET', `/webhooks?pollId=${pollId}`, acme.key);
    expect(res.json().data).toEqual([]);
  });

  it('a public IP literal is fine', async () => {
    const res = await postHook(acme.key, pollId, 'https://8.8.8.8/hook');
    expect(res.statusCode, res.body).toBe(201);
  });
});

describe('plans and roles', () => {
  it.each(['owner', 'admin', 'billing_admin'] as const)('%s may create, list and delete webhooks', async (role) => {
    const pollId = await newPoll(acme, `by ${role}`);
    const created = await postHook(keys[role], pollId);
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id;
    const list = await call('GET', `/webhooks?pollId=${pollId}`, keys[role]);
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().data.map((w: Json) => w.id)).toEqual([id]);
    expect((await call('GET', `/webhooks?accountId=${acme.accountId}`, keys[role])).statusCode).toBe(200);
    expect((await call('GET', `/webhooks/deliveries?webhookId=${id}`, keys[role])).statusCode).toBe(200);
    expect((await call('GET', `/webhooks/deliveries?pollId=${pollId}`, keys[role])).statusCode).toBe(200);
    const del = await call('DELETE', `/webhooks?id=${id}`, keys[role]);
    expect(del.statusCode, del.body).toBe(200);
  });

  it.each(['editor', 'read_only'] as const)(
    '%s is refused with 403 role_forbidden on every webhook operation',
    async (role) => {
      const pollId = await newPoll(acme, `refused ${role}`);
      const { data } = await createWebhook(h, acme, pollId, HOOK);
      expectProblem(await postHook(keys[role], pollId), 403, 'role_forbidden');
      expectProblem(await call('GET', `/webhooks?pollId=${pollId}`, keys[role]), 403, 'role_forbidden');
      expectProblem(await call('GET', `/webhooks?accountId=${acme.accountId}`, keys[role]), 403, 'role_forbidden');
      expectProblem(await call('DELETE', `/webhooks?id=${data.id}`, keys[role]), 403, 'role_forbidden');
      expectProblem(await call('GET', `/webhooks/deliveries?webhookId=${data.id}`, keys[role]), 403, 'role_forbidden');
      expectProblem(await call('GET', `/webhooks/deliveries?pollId=${pollId}`, keys[role]), 403, 'role_forbidden');
      // The webhook survived the refused delete.
      expect((await call('GET', `/webhooks?pollId=${pollId}`, acme.key)).json().data).toHaveLength(1);
    },
  );

  it.each(['free', 'basic'] as Plan[])('%s plan → 403 plan_required, even for the owner', async (plan) => {
    const acct = await h.account({ name: `Down to ${plan}` });
    const pollId = await newPoll(acct);
    const { data } = await createWebhook(h, acct, pollId, HOOK);
    await setPlan(h.deps, acct.accountId, plan);
    expectProblem(await postHook(acct.key, pollId), 403, 'plan_required');
    expectProblem(await call('GET', `/webhooks?pollId=${pollId}`, acct.key), 403, 'plan_required');
    expectProblem(await call('GET', `/webhooks?accountId=${acct.accountId}`, acct.key), 403, 'plan_required');
    expectProblem(await call('DELETE', `/webhooks?id=${data.id}`, acct.key), 403, 'plan_required');
    expectProblem(await call('GET', `/webhooks/deliveries?webhookId=${data.id}`, acct.key), 403, 'plan_required');
    await setPlan(h.deps, acct.accountId, 'enterprise');
    expect((await postHook(acct.key, pollId)).statusCode).toBe(201);
  });

  it('a free account from the start → 403 plan_required on list', async () => {
    const free = await h.account({ name: 'Free', plan: 'free' });
    expectProblem(await call('GET', `/webhooks?accountId=${free.accountId}`, free.key), 403, 'plan_required');
  });
});

describe('limit: 20 webhooks per survey', () => {
  it('the 21st webhook on one poll → 409 limit_reached; another poll is unaffected; deleting one frees a place', async () => {
    const pollId = await newPoll(acme, 'Twenty');
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await postHook(acme.key, pollId, `${HOOK}/${i}`);
      expect(res.statusCode, `webhook ${i + 1}: ${res.body}`).toBe(201);
      ids.push(res.json().data.id);
    }
    expectProblem(await postHook(acme.key, pollId), 409, 'limit_reached');
    const list = await call('GET', `/webhooks?pollId=${pollId}&limit=100`, acme.key);
    expect(list.json().data).toHaveLength(20);

    expect((await postHook(acme.key, await newPoll(acme, 'Other'))).statusCode).toBe(201);

    expect((await call('DELETE', `/webhooks?id=${ids[0]}`, acme.key)).statusCode).toBe(200);
    expect((await postHook(acme.key, pollId)).statusCode).toBe(201);
    expectProblem(await postHook(acme.key, pollId), 409, 'limit_reached');
  });
});

describe('limit under concurrency', () => {
  it('concurrent creations on one poll never pass 20', async () => {
    const pollId = await newPoll(acme, 'Crowded');
    for (let i = 0; i < 17; i++) expect((await postHook(acme.key, pollId, `${HOOK}/${i}`)).statusCode).toBe(201);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => postHook(acme.key, pollId, `${HOOK}/c${i}`)));
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 201)).toHaveLength(3);
    expect(codes.filter((c) => c === 409)).toHaveLength(5);
    for (const r of results.filter((x) => x.statusCode === 409)) expect(r.json().code).toBe('limit_reached');
    expect(await h.deps.store.webhooks.countByPoll(pollId)).toBe(20);
  });
});

describe('the account signing secret', () => {
  it('appears only in the response that created it', async () => {
    const acct = await h.account({ name: 'Secrets' });
    const poll1 = await newPoll(acct, 'one');
    const poll2 = await newPoll(acct, 'two');

    const first = await postHook(acct.key, poll1);
    expect(first.statusCode).toBe(201);
    const secret = first.json().signingSecret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Object.keys(first.json()).sort()).toEqual(['data', 'signingSecret']);
    expect(JSON.stringify(first.json().data)).not.toContain('whsec_');
    expect((await h.deps.store.accounts.get(acct.accountId))?.signingSecret).toBe(secret);

    const second = await postHook(acct.key, poll1);
    expect(second.statusCode).toBe(201);
    expect(second.json()).not.toHaveProperty('signingSecret');
    expect(second.body).not.toContain('whsec_');

    const other = await postHook(acct.key, poll2);
    expect(other.statusCode).toBe(201);
    expect(other.json()).not.toHaveProperty('signingSecret');
    expect(other.body).not.toContain('whsec_');

    // Never in a list either, and adding/deleting webhooks leaves it unchanged.
    for (const url of [`/webhooks?pollId=${poll1}`, `/webhooks?accountId=${acct.accountId}`]) {
      const list = await call('GET', url, acct.key);
      expect(list.statusCode).toBe(200);
      expect(list.body).not.toContain('whsec_');
    }
    await call('DELETE', `/webhooks?id=${first.json().data.id}`, acct.key);
    await call('DELETE', `/webhooks?id=${second.json().data.id}`, acct.key);
    await call('DELETE', `/webhooks?id=${other.json().data.id}`, acct.key);
    const again = await postHook(acct.key, poll2);
    expect(again.json()).not.toHaveProperty('signingSecret');
    expect((await h.deps.store.accounts.get(acct.accountId))?.signingSecret).toBe(secret);
  });

  it('is per account: another account’s first webhook gets its own secret', async () => {
    const a = await h.account({ name: 'SA' });
    const b = await h.account({ name: 'SB' });
    const sa = (await postHook(a.key, await newPoll(a))).json().signingSecret;
    const sb = (await postHook(b.key, await newPoll(b))).json().signingSecret;
    expect(sa).toMatch(/^whsec_/);
    expect(sb).toMatch(/^whsec_/);
    expect(sa).not.toBe(sb);
  });

  it('two concurrent first creations: exactly one response carries the secret', async () => {
    const acct = await h.account({ name: 'Race' });
    const [p1, p2] = [await newPoll(acct, 'r1'), await newPoll(acct, 'r2')];
    const results = await Promise.all([postHook(acct.key, p1), postHook(acct.key, p2)]);
    for (const r of results) expect(r.statusCode, r.body).toBe(201);
    const secrets = results.map((r) => r.json().signingSecret).filter(Boolean);
    expect(secrets).toHaveLength(1);
    expect((await h.deps.store.accounts.get(acct.accountId))?.signingSecret).toBe(secrets[0]);
  });
});

describe('GET /webhooks', () => {
  let pager: TestAccount;
  let pollA: string;
  let pollB: string;
  const created: { id: string; pollId: string }[] = [];

  beforeAll(async () => {
    pager = await h.account({ name: 'Pager' });
    pollA = await newPoll(pager, 'A');
    pollB = await newPoll(pager, 'B');
    for (const pollId of [pollA, pollB, pollA, pollA, pollB]) {
      h.clock.advance(1_000);
      const { data } = await createWebhook(h, pager, pollId, HOOK);
      created.push({ id: data.id, pollId });
    }
  });

  async function pages(query: string, limit: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let n = 0;
    for (;;) {
      const res = await call(
        'GET',
        `/webhooks?${query}&limit=${limit}${cursor ? `&startCursor=${cursor}` : ''}`,
        pager.key,
      );
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(Object.keys(body).sort()).toEqual(['data', 'endCursor', 'hasNextPage']);
      expect(body.data.length).toBeLessThanOrEqual(limit);
      for (const w of body.data) {
        expect(w).toMatchObject({
          accountId: pager.accountId,
          url: HOOK,
          health: { state: 'healthy', alertEmailsSent: 0 },
        });
        expect(typeof w.legacySecret).toBe('string');
      }
      ids.push(...body.data.map((w: Json) => w.id as string));
      n++;
      if (!body.hasNextPage) {
        expect(body.endCursor === null || body.endCursor === body.data.at(-1)?.id).toBe(true);
        return { ids, pages: n };
      }
      expect(body.endCursor).toBe(body.data.at(-1).id);
      cursor = body.endCursor;
      if (n > 20) throw new Error('paging does not end');
    }
  }

  it('?accountId pages through every webhook of the account, in creation order, without repeats', async () => {
    const { ids, pages: n } = await pages(`accountId=${pager.accountId}`, 2);
    expect(ids).toEqual(created.map((c) => c.id));
    expect(n).toBe(3);
  });

  it('?pollId lists that poll’s webhooks only, paged', async () => {
    const { ids } = await pages(`pollId=${pollA}`, 1);
    expect(ids).toEqual(created.filter((c) => c.pollId === pollA).map((c) => c.id));
    const b = await pages(`pollId=${pollB}`, 20);
    expect(b.ids).toEqual(created.filter((c) => c.pollId === pollB).map((c) => c.id));
    expect(b.pages).toBe(1);
  });

  it('default limit is 20 and limit is checked (1..100)', async () => {
    const res = await call('GET', `/webhooks?accountId=${pager.accountId}`, pager.key);
    expect(res.json()).toMatchObject({ hasNextPage: false });
    expect(res.json().data).toHaveLength(5);
    expectProblem(
      await call('GET', `/webhooks?accountId=${pager.accountId}&limit=0`, pager.key),
      400,
      'validation_failed',
    );
    expectProblem(
      await call('GET', `/webhooks?accountId=${pager.accountId}&limit=101`, pager.key),
      400,
      'validation_failed',
    );
  });

  it('needs pollId or accountId → 400 validation_failed', async () => {
    expectProblem(await call('GET', '/webhooks', pager.key), 400, 'validation_failed');
  });

  it('another account’s key → 404 on ?pollId and ?accountId, exactly as for a missing one', async () => {
    const a = expectProblem(await call('GET', `/webhooks?pollId=${pollA}`, rival.key), 404, 'not_found');
    const m = expectProblem(
      await call('GET', '/webhooks?pollId=poll_0000000000000000000000', rival.key),
      404,
      'not_found',
    );
    expect(a.detail).toBe(m.detail);
    expectProblem(await call('GET', `/webhooks?accountId=${pager.accountId}`, rival.key), 404, 'not_found');
    expectProblem(await call('GET', '/webhooks?accountId=acc_0000000000000000000000', rival.key), 404, 'not_found');
  });

  it('a poll named with an account is looked for in that account: 404 in another, its webhooks in its own', async () => {
    for (const route of ['/webhooks', '/webhooks/deliveries']) {
      expectProblem(
        await call('GET', `${route}?pollId=${pollA}&accountId=${rival.accountId}`, pager.key),
        404,
        'not_found',
      );
      const same = await call('GET', `${route}?pollId=${pollA}&accountId=${pager.accountId}`, pager.key);
      expect(same.statusCode, same.body).toBe(200);
    }
    expect(
      (await call('GET', `/webhooks?pollId=${pollA}&accountId=${pager.accountId}`, pager.key)).json().data.length,
    ).toBeGreaterThan(0);
  });

  it('a webhook’s delivery log named beside another poll → 404, not an empty log; beside its own, its log', async () => {
    const ofA = created.find((c) => c.pollId === pollA)!.id;
    expectProblem(
      await call('GET', `/webhooks/deliveries?webhookId=${ofA}&pollId=${pollB}`, pager.key),
      404,
      'not_found',
    );
    const own = await call('GET', `/webhooks/deliveries?webhookId=${ofA}&pollId=${pollA}`, pager.key);
    expect(own.statusCode, own.body).toBe(200);
  });
});

describe('DELETE /webhooks', () => {
  it('answers {data: {id, deleted: true, cancelledDeliveries}} and the webhook is gone', async () => {
    const pollId = await newPoll(acme, 'Delete me');
    const { data } = await createWebhook(h, acme, pollId, HOOK);
    const res = await call('DELETE', `/webhooks?id=${data.id}`, acme.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ data: { id: data.id, deleted: true, cancelledDeliveries: 0 } });
    expect((await call('GET', `/webhooks?pollId=${pollId}`, acme.key)).json().data).toEqual([]);
    expectProblem(await call('DELETE', `/webhooks?id=${data.id}`, acme.key), 404, 'not_found');
  });

  it('another account’s key → 404, and the webhook stays', async () => {
    const pollId = await newPoll(acme, 'Not yours');
    const { data } = await createWebhook(h, acme, pollId, HOOK);
    const theirs = expectProblem(await call('DELETE', `/webhooks?id=${data.id}`, rival.key), 404, 'not_found');
    const missing = expectProblem(
      await call('DELETE', '/webhooks?id=whk_0000000000000000000000', rival.key),
      404,
      'not_found',
    );
    expect(theirs.detail).toBe(missing.detail);
    expect((await call('GET', `/webhooks?pollId=${pollId}`, acme.key)).json().data).toHaveLength(1);
  });

  it('needs id → 400', async () => {
    expectProblem(await call('DELETE', '/webhooks', acme.key), 400, 'validation_failed');
  });

  it('cancels the webhook’s pending deliveries and counts them', async () => {
    const poll = await visiblePoll(h, acme);
    const { data } = await createWebhook(h, acme, poll.pollId, HOOK);
    const keep = (await createWebhook(h, acme, poll.pollId, `${HOOK}/keep`)).data;
    const p = await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'one' }] });
    await answer(h, {
      pollId: poll.pollId,
      participantId: p.participantId,
      answers: [{ slideId: poll.q2, value: 'x@example.com' }],
    });
    const pending = (await call('GET', `/webhooks/deliveries?webhookId=${data.id}&status=pending`, acme.key)).json()
      .data;
    expect(pending).toHaveLength(2);

    h.clock.advance(5_000);
    const res = await call('DELETE', `/webhooks?id=${data.id}`, acme.key);
    expect(res.json()).toEqual({ data: { id: data.id, deleted: true, cancelledDeliveries: 2 } });

    for (const d of pending) {
      const detail = (await call('GET', `/webhooks/delivery?deliveryId=${d.id}`, acme.key)).json().data;
      expect(detail).toMatchObject({
        status: 'cancelled',
        finishedAt: h.clock.now().toISOString(),
        nextAttemptAt: null,
      });
    }
    // The log of a deleted webhook stays readable through its poll; the other webhook's deliveries are untouched.
    const log = (await call('GET', `/webhooks/deliveries?pollId=${poll.pollId}`, acme.key)).json().data;
    expect(log.filter((d: Json) => d.status === 'cancelled')).toHaveLength(2);
    expect(log.filter((d: Json) => d.webhookId === keep.id).map((d: Json) => d.status)).toEqual(['pending', 'pending']);
  });
});
