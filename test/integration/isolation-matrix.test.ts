import type { LightMyRequestResponse } from 'fastify';
import { sql, type RawBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../../src/app/accounts/set-plan.js';
import { ROLES, type Plan, type Role } from '../../src/domain/access.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { newId, randomBase62, type IdPrefix } from '../../src/domain/ids.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import {
  apiRoutes,
  contractIssues,
  mustSend,
  routeName,
  sample,
  type ApiRoute,
  type InjectMethod,
  type Schema,
} from '../support/openapi.js';

/**
 * No account reaches another's data, measured: every route that takes an id is aimed, with
 * another account's owner key, at this account's poll, slide, webhook, delivery, participant,
 * API key, member and account, and must answer exactly as it does for an id that does not
 * exist; nothing of the account changes, nothing of it (ids, secrets) appears in any answer, and
 * no key an answer hands out opens it. Then roles and plans: read_only never writes, editor never
 * touches webhooks, owner/admin alone change account settings and manage keys and members (never
 * above their own role), free and basic accounts get 403 plan_required everywhere.
 *
 * Routes and their id fields come from GET /openapi.json: a route added later is attacked too,
 * and an id field of a kind this file does not know fails the coverage test until it is taught.
 */

type Kind = 'account' | 'poll' | 'slide' | 'webhook' | 'delivery' | 'participant' | 'key' | 'member';
type Json = Record<string, unknown>;
type Req = { method: InjectMethod; url: string; headers: Record<string, string>; payload?: string };

const PREFIX: Record<Exclude<Kind, 'member'>, IdPrefix> = {
  account: 'acc',
  poll: 'poll',
  slide: 'sld',
  webhook: 'whk',
  delivery: 'dlv',
  participant: 'prt',
  key: 'key',
};
const BY_NAME: Record<string, Kind> = {
  accountId: 'account',
  pollId: 'poll',
  slideId: 'slide',
  webhookId: 'webhook',
  deliveryId: 'delivery',
  participantId: 'participant',
  keyId: 'key',
};

/** The kind of id a field carries; 'unknown' for an id-like name this file was never taught. */
function kindOf(r: ApiRoute, name: string): Kind | 'unknown' | undefined {
  if (BY_NAME[name]) return BY_NAME[name];
  if (name === 'id' && r.path.startsWith('/webhooks')) return 'webhook';
  if (name === 'id' && r.path === '/commit') return 'poll';
  // The key and member routes name a member by email.
  if (name === 'email' && (r.path === '/keys' || r.path === '/members')) return 'member';
  return /^id$|Id$/.test(name) ? 'unknown' : undefined;
}

/** A value of the kind that names nothing: a fresh id, or an email no user has. */
const missingValue = (kind: Kind): string =>
  kind === 'member' ? `missing-${randomBase62(10).toLowerCase()}@example.com` : newId(PREFIX[kind]);

type World = {
  acct: TestAccount;
  ids: Record<Kind, string>;
  hiddenPoll: string;
  apiOnlyPoll: string;
  ownerEmail: string;
  /**
   * Strings of this account no other account may ever read: ids and secrets. Participant ids
   * are not among them: the client chooses them, and another poll may hold the same one.
   */
  secrets: string[];
};

let h: Harness;
let routes: ApiRoute[];
let A: World;
let B: World;

async function call(req: Req): Promise<LightMyRequestResponse> {
  return h.app.inject(req);
}

/** The id of a live API key. */
async function keyIdOf(apiKey: string): Promise<string> {
  const found = await h.deps.store.keys.findByHash(hashApiKey(apiKey));
  expect(found).toBeDefined();
  return found!.keyId;
}

/**
 * Ends a delivery as the worker does when its target keeps failing: one attempt recorded, given
 * up. Anything else the claim took is given back, due at once.
 */
async function giveUp(deliveryId: string): Promise<void> {
  const store = h.deps.store.deliveries;
  const now = h.clock.now();
  const lease = `matrix-${randomBase62(8)}`;
  const claimed = await store.claim(now, 1000, new Date(now.getTime() + 60_000), lease, new Date(0));
  const mine = claimed.find((d) => d.id === deliveryId);
  expect(mine, `delivery ${deliveryId} is due`).toBeDefined();
  for (const d of claimed) if (d !== mine) await store.release(d.id, lease, now);
  const attempt = {
    id: newId('att'),
    deliveryId,
    number: mine!.attemptCount,
    sentAt: now,
    statusCode: 503,
    error: null,
    durationMs: 1,
    responseExcerpt: 'unavailable',
  };
  const result = { status: 'given_up' as const, nextAttemptAt: null, finishedAt: now, dnsFailure: false };
  const done = await store.recordResults([{ attempt, leaseToken: lease, result }], now);
  expect([...done]).toEqual([deliveryId]);
}

async function world(name: string): Promise<World> {
  const acct = await h.account({ name });
  const key = bearer(acct.key);
  const poll = await visiblePoll(h, acct, { title: `${name} main` });
  const hook = await createWebhook(h, acct, poll.pollId, `https://hooks.example.com/${name}-private-path`);
  const p = await answer(h, {
    pollId: poll.pollId,
    answers: [{ slideId: poll.q1, value: `${name} says hello` }],
    participantMetadata: { email: `${name.toLowerCase()}-respondent@example.com` },
  });
  const deliveries = (
    await h.app.inject({ url: `/webhooks/deliveries?webhookId=${hook.data.id}`, headers: key })
  ).json().data as { id: string }[];
  expect(deliveries).toHaveLength(1);
  // The delivery is finished (resend and recover act on finished ones), was resent once, and is
  // listed by a recover: every table of delivery control holds a row of this account.
  const deliveryId = deliveries[0]!.id;
  await giveUp(deliveryId);
  const resent = await h.app.inject({
    method: 'POST',
    url: '/webhooks/delivery/resend',
    headers: key,
    payload: { deliveryId },
  });
  expect(resent.statusCode, resent.body).toBe(202);
  await giveUp(deliveryId);
  const recovered = await h.app.inject({
    method: 'POST',
    url: '/webhooks/recover',
    headers: key,
    payload: { webhookId: hook.data.id, since: '2025-01-01T00:00:00Z' },
  });
  expect([recovered.statusCode, recovered.body]).toEqual([202, JSON.stringify({ data: { resent: 1 } })]);
  // A member below the owner, with a key of their own: what the key and member routes name.
  const memberEmail = `${name.toLowerCase()}-member@example.com`;
  const memberKey = await h.member(acct.accountId, 'editor', memberEmail);
  const memberKeyId = await keyIdOf(memberKey);
  const listed = await h.app.inject({ url: `/keys?accountId=${acct.accountId}&limit=100`, headers: key });
  expect(listed.statusCode, listed.body).toBe(200);
  const ownerEmail = (listed.json().data as { email: string; role: string }[]).find((k) => k.role === 'owner')!.email;
  // A second member who belongs to an account of their own too, their own key withdrawn from
  // this one: a row of api_key_withdrawals.
  const elsewhere = await h.account({ name: `${name} elsewhere` });
  const sharedEmail = `${name.toLowerCase()}-shared@example.com`;
  const sharedKeyId = await keyIdOf(await h.member(elsewhere.accountId, 'editor', sharedEmail));
  const joined = await h.app.inject({
    method: 'POST',
    url: '/keys',
    headers: key,
    payload: { accountId: acct.accountId, email: sharedEmail, role: 'editor' },
  });
  expect(joined.statusCode, joined.body).toBe(201);
  const withdrawn = await h.app.inject({ method: 'DELETE', url: `/keys?keyId=${sharedKeyId}`, headers: key });
  expect(withdrawn.json().data, withdrawn.body).toMatchObject({ revoked: false, withdrawnFrom: [acct.accountId] });
  const hidden = (
    await h.app.inject({
      method: 'POST',
      url: '/poll',
      headers: key,
      payload: { accountId: acct.accountId, title: `${name} hidden` },
    })
  ).json().data.id as string;
  const slideOfHidden = await h.app.inject({
    method: 'POST',
    url: '/slide',
    headers: key,
    payload: { pollId: hidden, type: 'short-answer', title: 'Hidden?' },
  });
  expect(slideOfHidden.statusCode, slideOfHidden.body).toBe(201);
  const apiOnly = await visiblePoll(h, acct, { title: `${name} api only`, settings: { apiOnly: true } });
  const tr = await h.app.inject({
    method: 'POST',
    url: '/poll/translations/update',
    headers: key,
    payload: { pollId: poll.pollId, language: 'en', translations: { hello: `${name} hello` } },
  });
  expect(tr.statusCode, tr.body).toBe(200);
  const alertId = newId('alr');
  await h.deps.store.alerts.insert({
    id: alertId,
    accountId: acct.accountId,
    endpointId: hook.data.id,
    webhookId: hook.data.id,
    pollId: poll.pollId,
    kind: 'first',
    sequence: 1,
    recipients: [`${name.toLowerCase()}-ops@example.com`],
    subject: `${name}: webhook failing`,
    text: 'text',
    html: '<p>html</p>',
    details: {
      endpoint: hook.data.id,
      survey: { id: poll.pollId, title: 'x' },
      question: null,
      trigger: 'x',
      configuredIn: 'x',
      whatWentWrong: 'x',
      responsesLostPastWeek: 1,
    },
    sentAt: h.clock.now(),
  });
  const secrets = [
    acct.accountId,
    poll.pollId,
    poll.q1,
    poll.q2,
    hook.data.id,
    deliveryId,
    ...p.responseIds,
    hidden,
    apiOnly.pollId,
    alertId,
    hook.data.legacySecret,
    hook.signingSecret!,
    `${name}-private-path`,
    `${name} says hello`,
    `${name.toLowerCase()}-respondent@example.com`,
    `${name.toLowerCase()}-ops@example.com`,
    acct.key,
    acct.userId,
    ownerEmail,
    memberEmail,
    memberKey,
    memberKeyId,
  ];
  return {
    acct,
    ids: {
      account: acct.accountId,
      poll: poll.pollId,
      slide: poll.q1,
      webhook: hook.data.id,
      delivery: deliveryId,
      participant: p.participantId,
      key: memberKeyId,
      member: memberEmail,
    },
    hiddenPoll: hidden,
    apiOnlyPoll: apiOnly.pollId,
    ownerEmail,
    secrets,
  };
}

// ---------------------------------------------------------------------------------------------
// Requests built from the route's own schema, with a world's ids

type Slot = { at: 'query' | 'body'; path: string[]; kind: Kind; required: boolean };
type Spec = { route: ApiRoute; query: Map<string, string>; body: unknown; slots: Slot[] };

const slotName = (s: Slot) => `${s.at}:${s.path.join('/')}`;

/** Values for strings the schema alone cannot make up. */
function filler(r: ApiRoute, ids: Record<Kind, string>) {
  return (name: string, s: Schema): unknown => {
    const kind = kindOf(r, name);
    if (kind && kind !== 'unknown' && (s.type === 'string' || s.type === undefined)) return ids[kind];
    if (name === 'url') return 'https://hooks.example.com/matrix';
    if (name === 'language') return 'en';
    if (name === 'title') return 'Matrix';
    // A role an admin may give too; a window that holds every delivery of the test.
    if (name === 'role') return 'editor';
    if (s.format === 'date-time') return '2025-01-01T00:00:00Z';
    // A respondent's one answer: the short-answer slide takes any string.
    if (name === 'answers' && s.type === 'array') return [{ slideId: ids.slide, value: 'matrix answer' }];
    return undefined;
  };
}

function spec(r: ApiRoute, ids: Record<Kind, string>): Spec {
  const fill = filler(r, ids);
  const query = new Map<string, string>();
  const slots: Slot[] = [];
  for (const p of r.query) {
    const kind = kindOf(r, p.name);
    if (kind === 'unknown')
      throw new Error(`${routeName(r)}: query parameter ${p.name} looks like an id of a kind this test does not know`);
    if (kind) slots.push({ at: 'query', path: [p.name], kind, required: mustSend(p) });
    if (mustSend(p)) query.set(p.name, String(sample(p.schema, fill, p.name, ['short-answer'])));
  }
  let body: unknown;
  if (r.body) {
    body = sample(r.body, fill, '', ['short-answer']);
    const walk = (v: unknown, path: string[]) => {
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, String(i)]));
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          const kind = kindOf(r, k);
          if (kind === 'unknown')
            throw new Error(
              `${routeName(r)}: body field ${[...path, k].join('/')} looks like an id of a kind this test does not know`,
            );
          if (kind && typeof x === 'string') slots.push({ at: 'body', path: [...path, k], kind, required: true });
          else walk(x, [...path, k]);
        }
      }
    };
    walk(body, []);
    // Optional top-level id fields (a respondent's participantId).
    for (const [k, s] of Object.entries(r.body.properties ?? {})) {
      const kind = kindOf(r, k);
      if (kind === 'unknown')
        throw new Error(`${routeName(r)}: body field ${k} looks like an id of a kind this test does not know`);
      if (kind && !(r.body.required ?? []).includes(k) && s.type === 'string')
        slots.push({ at: 'body', path: [k], kind, required: false });
    }
  }
  return { route: r, query, body, slots };
}

function setPath(root: unknown, path: string[], value: string): unknown {
  const copy = structuredClone(root) as Json;
  let node = copy as Record<string, unknown>;
  path.slice(0, -1).forEach((k) => (node = node[k] as Record<string, unknown>));
  node[path[path.length - 1]!] = value;
  return copy;
}

/** The spec's request with `overrides` (slot → value) applied; optional slots are sent only when overridden. */
function request(s: Spec, overrides: Map<Slot, string>, key: string | undefined): Req {
  const query = new Map(s.query);
  let body = s.body;
  for (const [slot, value] of overrides) {
    if (slot.at === 'query') query.set(slot.path[0]!, value);
    else body = setPath(body, slot.path, value);
  }
  const qs = [...query].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  const headers: Record<string, string> = key ? bearer(key) : {};
  const req: Req = { method: s.route.method, url: qs ? `${s.route.path}?${qs}` : s.route.path, headers };
  if (s.route.body) {
    headers['content-type'] = 'application/json';
    req.payload = JSON.stringify(body);
  }
  return req;
}

/**
 * The ways to name the scope of a request with `ids`: nothing more when the route has a required
 * id, else each of its optional ids on its own (GET /webhooks?pollId= or ?accountId=).
 */
function scopes(s: Spec, ids: Record<Kind, string>): Map<Slot, string>[] {
  if (s.slots.some((x) => x.required)) return [new Map()];
  return s.slots.map((o) => new Map([[o, ids[o.kind]]]));
}

let scratches = 0;

/** Another entity of `kind` in the world's account, for requests that would destroy the shared one. */
async function scratch(w: World, kind: Kind): Promise<string> {
  const key = bearer(w.acct.key);
  switch (kind) {
    case 'member': {
      const email = `scratch-${++scratches}@example.com`;
      await h.member(w.acct.accountId, 'editor', email);
      return email;
    }
    case 'key':
      return keyIdOf(await h.member(w.acct.accountId, 'editor', `scratch-${++scratches}@example.com`));
    case 'poll': {
      const res = await h.app.inject({
        method: 'POST',
        url: '/poll',
        headers: key,
        payload: { accountId: w.acct.accountId, title: 'Scratch' },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.id as string;
    }
    case 'slide': {
      const res = await h.app.inject({
        method: 'POST',
        url: '/slide',
        headers: key,
        payload: { pollId: w.hiddenPoll, type: 'short-answer', title: 'Scratch' },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.id as string;
    }
    case 'webhook':
      return (await createWebhook(h, w.acct, w.hiddenPoll, 'https://hooks.example.com/scratch')).data.id;
    default:
      throw new Error(`no scratch ${kind}: teach scratch() to make one`);
  }
}

/**
 * A world's own requests to a route, one per scope; scratch ids in every slot when the route
 * destroys what it names (the account a member is removed from is where, not what).
 */
async function own(r: ApiRoute, w: World, destroy: boolean): Promise<Req[]> {
  const s = spec(r, w.ids);
  const out: Req[] = [];
  for (const overrides of scopes(s, w.ids)) {
    if (destroy && r.method === 'DELETE')
      for (const slot of s.slots.filter((x) => x.required && x.kind !== 'account'))
        overrides.set(slot, await scratch(w, slot.kind));
    out.push(request(s, overrides, w.acct.key));
  }
  return out;
}

/** The same request sent with another key, or none. */
function withKey(req: Req, key: string | undefined): Req {
  const headers = { ...req.headers };
  delete headers.authorization;
  return { ...req, headers: key ? { ...headers, ...bearer(key) } : headers };
}

// ---------------------------------------------------------------------------------------------
// What an account holds, row by row

const ACCOUNT_TABLES = [
  'polls',
  'slides',
  'participants',
  'responses',
  'research_runs',
  'webhooks',
  'endpoints',
  'batches',
  'deliveries',
  'delivery_events',
  'recoveries',
  'alert_emails',
  'api_key_withdrawals',
] as const;

async function snapshot(accountId: string): Promise<Record<string, string[]>> {
  const db = h.database.db;
  const rows = async (q: RawBuilder<Json>) => (await q.execute(db)).rows.map((r) => JSON.stringify(r)).sort();
  const out: Record<string, string[]> = {
    accounts: await rows(sql<Json>`SELECT * FROM accounts WHERE id = ${accountId}`),
    memberships: await rows(sql<Json>`SELECT * FROM memberships WHERE account_id = ${accountId}`),
    api_keys: await rows(
      sql<Json>`SELECT k.* FROM api_keys k JOIN memberships m ON m.user_id = k.user_id WHERE m.account_id = ${accountId} AND (k.account_id IS NULL OR k.account_id = ${accountId})`,
    ),
    attempts: await rows(
      sql<Json>`SELECT a.* FROM attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.account_id = ${accountId}`,
    ),
    recovery_items: await rows(
      sql<Json>`SELECT i.* FROM recovery_items i JOIN deliveries d ON d.id = i.delivery_id WHERE d.account_id = ${accountId}`,
    ),
  };
  for (const t of ACCOUNT_TABLES)
    out[t] = await rows(sql<Json>`SELECT * FROM ${sql.table(t)} WHERE account_id = ${accountId}`);
  return out;
}

function leaks(res: LightMyRequestResponse, victim: World, sent: readonly string[]): string[] {
  return victim.secrets.filter((s) => !sent.includes(s) && res.body.includes(s));
}

/**
 * What of A the API keys in an answer open: every read of A's own data is tried with each, and
 * anything but a 404 is listed.
 */
async function opens(res: LightMyRequestResponse): Promise<string[]> {
  const out: string[] = [];
  for (const apiKey of new Set(res.body.match(/cvk_[0-9A-Za-z]{32}/g) ?? [])) {
    for (const r of routes.filter((x) => x.method === 'GET' && !x.isPublic && spec(x, A.ids).slots.length)) {
      for (const req of await own(r, A, false)) {
        const got = await call(withKey(req, apiKey));
        if (got.statusCode !== 404) out.push(`${req.method} ${req.url} (${got.statusCode})`);
      }
    }
  }
  return out;
}

/** A problem document with the ids we sent replaced, for comparing two answers. */
function normalised(res: LightMyRequestResponse, sent: readonly string[]): unknown {
  let text = res.body;
  for (const s of sent) text = text.split(s).join('<id>');
  try {
    return { status: res.statusCode, body: JSON.parse(text) as unknown };
  } catch {
    return { status: res.statusCode, text };
  }
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  h = await harness({ delivery: { batchWindowMs: 0 } });
  A = await world('Alpha');
  B = await world('Bravo');
  routes = await apiRoutes(h.app);
});
afterAll(() => h?.close());

/** Routes that name an account's resources (all but GET /accounts, which lists the caller's own memberships). */
const scoped = () => routes.filter((r) => spec(r, A.ids).slots.length > 0);

describe('coverage', () => {
  it('every route is known to the matrix; every id kind is attacked somewhere', () => {
    const unscoped = routes.filter((r) => spec(r, A.ids).slots.length === 0).map(routeName);
    expect(unscoped).toEqual(['GET /accounts']);
    const kinds = new Set(scoped().flatMap((r) => spec(r, A.ids).slots.map((s) => s.kind)));
    expect([...kinds].sort()).toEqual([
      'account',
      'delivery',
      'key',
      'member',
      'participant',
      'poll',
      'slide',
      'webhook',
    ]);
    expect(scoped().length).toBeGreaterThanOrEqual(35);
  });

  it("A's fixtures exist in every table the matrix watches", async () => {
    const snap = await snapshot(A.acct.accountId);
    for (const t of [
      'accounts',
      'memberships',
      'api_keys',
      'attempts',
      'recovery_items',
      ...ACCOUNT_TABLES.filter((x) => x !== 'research_runs' && x !== 'batches'),
    ]) {
      expect(snap[t]!.length, t).toBeGreaterThan(0);
    }
  });
});

describe("tenant isolation: B's owner key aimed at A's ids", () => {
  let before: Record<string, string[]>;
  beforeAll(async () => {
    before = await snapshot(A.acct.accountId);
  });

  /**
   * Where the foreign answer is not a 404 by design, and why:
   * - a respondent naming another poll's slide, or choosing any participant id, is answered
   *   for the respondent's own poll (400 naming the slide; 201 with a new participant there);
   * - committing a preview whose id is another account's poll: 404, while a free id is simply
   *   created (201); poll ids are unguessable, so the difference tells nothing;
   * - an email names a person, not A's data: B may make a key for anyone as a member of B (201).
   *   What B is handed must still open nothing of A (checked below);
   * - that made A's member a member of B too, so B may remove them from B again (200), and
   *   withdraw from B that member's own key, which then opens B as well (200, withdrawn from B
   *   alone: docs/operations.md, "API keys across accounts"); their membership of A, and every
   *   key that opens A, stay as they were (checked below).
   */
  const FOREIGN_STATUS: Record<string, number> = {
    'POST /participant/responses body:answers/0/slideId': 400,
    'POST /participant/responses body:participantId': 201,
    'POST /keys body:email': 201,
    'DELETE /members query:email': 200,
    'DELETE /keys query:keyId': 200,
  };
  const NOT_COMPARABLE = new Set([
    'POST /commit body:data/id',
    'DELETE /members query:email',
    'DELETE /keys query:keyId',
  ]);

  it('answers exactly as for a missing id (404 not_found, same problem), and shows nothing of A', async () => {
    const failures: string[] = [];
    let compared = 0;
    for (const r of scoped()) {
      const s = spec(r, B.ids);
      const optional = s.slots.filter((x) => !x.required);
      for (const slot of s.slots) {
        const name = `${routeName(r)} ${slotName(slot)}`;
        // A respondent (public route) may answer A's visible poll by design: aim at the ones that are not public.
        const foreignValues = r.isPublic && slot.kind === 'poll' ? [A.hiddenPoll, A.apiOnlyPoll] : [A.ids[slot.kind]];
        // Alone (the one scope given), and among B's own values in every other optional slot.
        const contexts: [string, Map<Slot, string>][] = [['alone', new Map()]];
        if (optional.some((o) => o !== slot))
          contexts.push([
            'with B in the other slots',
            new Map(optional.filter((o) => o !== slot).map((o) => [o, B.ids[o.kind]])),
          ]);
        for (const [ctx, others] of contexts) {
          for (const foreign of foreignValues) {
            const missing = missingValue(slot.kind);
            const fRes = await call(request(s, new Map([...others, [slot, foreign]]), B.acct.key));
            const mRes = await call(request(s, new Map([...others, [slot, missing]]), B.acct.key));
            compared++;
            const label = `${name} (${ctx}, ${foreign})`;
            for (const issue of contractIssues(fRes)) failures.push(`${label}: ${issue}`);
            const leaked = leaks(fRes, A, [foreign]);
            if (leaked.length) failures.push(`${label}: the answer holds ${leaked.join(', ')}`);
            for (const opened of await opens(fRes)) failures.push(`${label}: the key it answers opens ${opened}`);
            const want = ctx === 'alone' ? (FOREIGN_STATUS[name] ?? 404) : undefined;
            if (want !== undefined && fRes.statusCode !== want)
              failures.push(`${label}: ${fRes.statusCode}, want ${want}: ${fRes.body.slice(0, 200)}`);
            if (want === 404 && fRes.json().code !== 'not_found')
              failures.push(`${label}: code ${String(fRes.json().code)}`);
            if (NOT_COMPARABLE.has(name)) continue;
            if (fRes.statusCode !== mRes.statusCode)
              failures.push(`${label}: ${fRes.statusCode} but a missing id answers ${mRes.statusCode}`);
            else if (fRes.statusCode >= 400) {
              const [f, m] = [normalised(fRes, [foreign]), normalised(mRes, [missing])];
              if (JSON.stringify(f) !== JSON.stringify(m))
                failures.push(`${label}: ${JSON.stringify(f)} ≠ missing ${JSON.stringify(m)}`);
            }
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(compared).toBeGreaterThanOrEqual(61);
  });

  it("B's own lists and accounts never hold A's rows, even from A's ids passed as a cursor", async () => {
    const failures: string[] = [];
    const cursors = [
      ...A.secrets,
      ...(
        await sql<{ seq: string }>`SELECT seq FROM participants WHERE account_id = ${A.acct.accountId}`.execute(
          h.database.db,
        )
      ).rows.map((r) => r.seq),
    ];
    for (const r of routes.filter((x) => x.method === 'GET')) {
      const s = spec(r, B.ids);
      const cursor = r.query.find((p) => p.name === 'startCursor');
      const optional = s.slots.filter((x) => !x.required);
      // Each optional scope on its own (or none when the route has only required ones).
      const scopes: Map<Slot, string>[] = optional.length
        ? optional.map((o) => new Map([[o, B.ids[o.kind]]]))
        : [new Map()];
      for (const scope of scopes) {
        const base = request(s, scope, B.acct.key);
        const plain = await call(base);
        if (plain.statusCode !== 200) failures.push(`${base.url}: ${plain.statusCode} ${plain.body.slice(0, 200)}`);
        for (const leak of leaks(plain, A, [])) failures.push(`${base.url}: holds ${leak}`);
        if (!cursor) continue;
        for (const c of cursors) {
          const res = await call({
            ...base,
            url: `${base.url}${base.url.includes('?') ? '&' : '?'}startCursor=${encodeURIComponent(c)}`,
          });
          for (const issue of contractIssues(res)) failures.push(`${base.url} cursor ${c}: ${issue}`);
          for (const leak of leaks(res, A, [c])) failures.push(`${base.url} cursor ${c}: holds ${leak}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('the same requests with no key, and with a key of a user in no account, learn nothing either', async () => {
    const stranger = await h.account({ name: 'Stranger' });
    const failures: string[] = [];
    for (const r of scoped()) {
      // The respondent route answers A's visible poll for anyone, by design: aim it at the hidden one.
      const ids = r.isPublic ? { ...A.ids, poll: A.hiddenPoll } : A.ids;
      for (const req of await own(r, { ...A, ids }, false)) {
        for (const key of [undefined, stranger.key]) {
          const res = await call(withKey(req, key));
          const want = key || r.isPublic ? 404 : 401;
          const label = `${req.method} ${req.url} key ${key ? 'stranger' : 'none'}`;
          if (res.statusCode !== want)
            failures.push(`${label}: ${res.statusCode}, want ${want}: ${res.body.slice(0, 200)}`);
          for (const issue of contractIssues(res)) failures.push(`${label}: ${issue}`);
          for (const leak of leaks(res, A, [...Object.values(ids)])) failures.push(`${label}: holds ${leak}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('left every row of A exactly as it was', async () => {
    expect(await snapshot(A.acct.accountId)).toEqual(before);
  });

  it("the same requests with B's own ids do get through (so the 404s above come from the ids)", async () => {
    const failures: string[] = [];
    for (const r of scoped()) {
      for (const req of await own(r, B, true)) {
        const res = await call(req);
        if (res.statusCode >= 300 && res.statusCode !== 409)
          failures.push(`${req.method} ${req.url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

/**
 * Who may call a route: reads all; writes not read_only; webhooks owner/admin/billing_admin;
 * account settings, keys and members (even listing them) owner/admin.
 */
function allowed(r: ApiRoute): readonly Role[] {
  // Alerts report webhooks' failures: seen by the roles that see the webhooks.
  if (r.tags.includes('webhooks') || r.path.startsWith('/webhooks') || r.path === '/alerts')
    return ['owner', 'admin', 'billing_admin'];
  if (r.path === '/keys' || r.path === '/members') return ['owner', 'admin'];
  if (r.method === 'GET') return ROLES;
  if (r.tags.includes('account')) return ['owner', 'admin'];
  return ['owner', 'admin', 'billing_admin', 'editor'];
}

describe('role matrix (members of A, on A’s own resources)', () => {
  const keys = {} as Record<Role, string>;
  let before: Record<string, string[]>;
  beforeAll(async () => {
    keys.owner = A.acct.key;
    for (const role of ['admin', 'billing_admin', 'editor', 'read_only'] as const)
      keys[role] = await h.member(A.acct.accountId, role);
    // A key's first use is recorded on its row: used once here, so that the snapshots below
    // see only what the requests did.
    for (const key of Object.values(keys))
      expect((await call({ method: 'GET', url: '/accounts', headers: bearer(key) })).statusCode).toBe(200);
  });

  it('a role that may not: 403 role_forbidden on every such route, and nothing changes', async () => {
    before = await snapshot(A.acct.accountId);
    const failures: string[] = [];
    let checked = 0;
    for (const r of scoped().filter((x) => !x.isPublic)) {
      for (const role of ROLES.filter((x) => !allowed(r).includes(x))) {
        for (const req of await own(r, A, false)) {
          const res = await call(withKey(req, keys[role]));
          checked++;
          const label = `${req.method} ${req.url} as ${role}`;
          for (const issue of contractIssues(res)) failures.push(`${label}: ${issue}`);
          if (res.statusCode !== 403 || res.json().code !== 'role_forbidden')
            failures.push(`${label}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    // read_only on every write, editor on every webhook route and on alerts, billing_admin/editor/
    // read_only on account settings, keys and members.
    expect(checked).toBeGreaterThanOrEqual(53);
    expect(await snapshot(A.acct.accountId)).toEqual(before);
  });

  it('a role that may: gets through (2xx, or 409 for a state conflict) on every route it is allowed', async () => {
    const failures: string[] = [];
    for (const r of scoped().filter((x) => !x.isPublic)) {
      for (const role of allowed(r)) {
        for (const req of await own(r, A, true)) {
          const res = await call(withKey(req, keys[role]));
          if (res.statusCode >= 300 && res.statusCode !== 409)
            failures.push(`${req.method} ${req.url} as ${role}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('billing_admin manages webhooks end to end; editor and read_only cannot even read them', async () => {
    const created = await call({
      method: 'POST',
      url: '/webhooks',
      headers: { ...bearer(keys.billing_admin), 'content-type': 'application/json' },
      payload: JSON.stringify({
        pollId: A.ids.poll,
        url: 'https://hooks.example.com/billing',
        deliveryRule: 'complete',
      }),
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as string;
    for (const role of ['editor', 'read_only'] as const) {
      for (const url of [
        `/webhooks?pollId=${A.ids.poll}`,
        `/webhooks/deliveries?webhookId=${id}`,
        `/webhooks/delivery?deliveryId=${A.ids.delivery}`,
      ]) {
        const res = await call({ method: 'GET', url, headers: bearer(keys[role]) });
        expect(res.statusCode, `${role} ${url}`).toBe(403);
      }
      expect(
        (await call({ method: 'DELETE', url: `/webhooks?id=${id}`, headers: bearer(keys[role]) })).statusCode,
      ).toBe(403);
    }
    const del = await call({ method: 'DELETE', url: `/webhooks?id=${id}`, headers: bearer(keys.billing_admin) });
    expect(del.statusCode, del.body).toBe(200);
  });

  it('owner and admin manage keys and members, never above their own role; the last owner stays', async () => {
    const snap = await snapshot(A.acct.accountId);
    const ownerKeyId = await keyIdOf(A.acct.key);
    const owner = encodeURIComponent(A.ownerEmail);
    const body = (email: string, role: Role) => JSON.stringify({ accountId: A.acct.accountId, email, role });
    const cases: [Role, InjectMethod, string, string | undefined, number, string][] = [
      ['admin', 'POST', '/keys', body('new-owner@example.com', 'owner'), 403, 'role_forbidden'],
      ['admin', 'POST', '/keys', body(A.ownerEmail, 'admin'), 403, 'role_forbidden'],
      ['admin', 'DELETE', `/keys?keyId=${ownerKeyId}`, undefined, 403, 'role_forbidden'],
      ['admin', 'DELETE', `/members?accountId=${A.acct.accountId}&email=${owner}`, undefined, 403, 'role_forbidden'],
      ['owner', 'POST', '/keys', body(A.ownerEmail, 'admin'), 409, 'conflict'],
      ['owner', 'DELETE', `/members?accountId=${A.acct.accountId}&email=${owner}`, undefined, 409, 'conflict'],
    ];
    const failures: string[] = [];
    for (const [role, method, url, payload, status, code] of cases) {
      const headers = { ...bearer(keys[role]), ...(payload ? { 'content-type': 'application/json' } : {}) };
      const res = await call({ method, url, headers, ...(payload ? { payload } : {}) });
      const label = `${method} ${url} ${payload ?? ''} as ${role}`;
      for (const issue of contractIssues(res)) failures.push(`${label}: ${issue}`);
      if (res.statusCode !== status || res.json().code !== code)
        failures.push(`${label}: ${res.statusCode} ${res.body.slice(0, 200)}, want ${status} ${code}`);
    }
    expect(failures).toEqual([]);
    expect(await snapshot(A.acct.accountId)).toEqual(snap);
  });
});

describe('access before anything else: a URL to check is looked at only once the caller may write', () => {
  /**
   * Every route that saves a webhook or logic URL, aimed at A. A caller without access must get
   * exactly the 404/403 it gets for a harmless body: no invalid_url, and no name resolution
   * (a stranger must not be able to make the service look names up, nor learn the URL rules).
   */
  const rule = (url: string) => [
    { match: 'all', conditions: [{ op: 'answered' }], action: { type: 'trigger-webhook', url } },
  ];
  const surveyRule = (url: string) => [{ on: 'complete', action: { type: 'trigger-webhook', url } }];
  const saving: [InjectMethod, string, (url: string) => Json][] = [
    ['POST', '/webhooks', (url) => ({ pollId: A.ids.poll, url, deliveryRule: 'partial' })],
    ['POST', '/slide', (url) => ({ pollId: A.ids.poll, type: 'short-answer', title: 'Q', logic: rule(url) })],
    ['POST', '/slide/update', (url) => ({ slideId: A.ids.slide, logic: rule(url) })],
    ['POST', '/poll/update', (url) => ({ pollId: A.ids.poll, actionLogic: surveyRule(url) })],
    ['POST', '/poll', (url) => ({ accountId: A.acct.accountId, title: 'P', actionLogic: surveyRule(url) })],
  ];

  it('another account (404) and read_only (403) answer as for a public URL, and nothing is resolved', async () => {
    const readOnly = await h.member(A.acct.accountId, 'read_only');
    const lookups: string[] = [];
    h.deps.resolveHost = async (host) => {
      lookups.push(host);
      return ['93.184.216.34'];
    };
    const failures: string[] = [];
    try {
      for (const [who, key, want] of [
        ['B owner', B.acct.key, 404],
        ['A read_only', readOnly, 403],
      ] as const) {
        for (const [method, url, body] of saving) {
          for (const target of [
            'https://probe.attacker.example/x',
            'https://127.0.0.1/x',
            'http://hooks.example.com/x',
          ]) {
            lookups.length = 0;
            const res = await call({
              method,
              url,
              headers: { ...bearer(key), 'content-type': 'application/json' },
              payload: JSON.stringify(body(target)),
            });
            if (res.statusCode !== want)
              failures.push(`${who} ${url} ${target}: ${res.statusCode} ${res.body.slice(0, 160)}`);
            if (lookups.length) failures.push(`${who} ${url} ${target}: resolved ${lookups.join(', ')}`);
          }
        }
      }
    } finally {
      delete h.deps.resolveHost;
    }
    expect(failures).toEqual([]);
  });
});

describe('plan matrix: accounts below premium', () => {
  it.each(['free', 'basic'] as Plan[])(
    '%s: the owner gets 403 plan_required on every route naming the account, and nothing changes',
    async (plan) => {
      const w = await world(`Plan-${plan}`);
      await setPlan(h.deps, w.acct.accountId, plan);
      const before = await snapshot(w.acct.accountId);
      const failures: string[] = [];
      for (const r of scoped().filter((x) => !x.isPublic)) {
        for (const req of await own(r, w, false)) {
          const res = await call(req);
          for (const issue of contractIssues(res)) failures.push(`${req.method} ${req.url}: ${issue}`);
          if (res.statusCode !== 403 || res.json().code !== 'plan_required')
            failures.push(`${req.method} ${req.url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }
      expect(failures).toEqual([]);
      expect(await snapshot(w.acct.accountId)).toEqual(before);
    },
  );
});
