import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/domain/api-key.js';
import { newId } from '../../src/domain/ids.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import {
  apiRoutes,
  branches,
  contractIssues,
  mustSend,
  routeName,
  sample,
  type ApiRoute,
  type InjectMethod,
  type Schema,
} from '../support/openapi.js';

/**
 * Property-based fuzzing of every route in GET /openapi.json (the README's Guarantees: no
 * input is answered with a 500): bodies, query strings and headers generated from each route's own schema, mostly
 * almost-valid (so that they get past validation and reach the code behind it) and sometimes
 * plain junk. Properties: no 5xx, no crash, every 4xx a problem document.
 *
 * malformed-input.test.ts holds the hand-picked cases (huge bodies, deep nesting, prototype
 * keys); this file explores the space between them at random. Runs are bounded by count and
 * time. A failure prints the seed: replay with CANVASS_FUZZ_SEED=<seed> (and more runs with
 * CANVASS_FUZZ_RUNS, more time with CANVASS_FUZZ_MS).
 */

const SEED = Number(process.env.CANVASS_FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.CANVASS_FUZZ_RUNS ?? 300);
const TIME_MS = Number(process.env.CANVASS_FUZZ_MS ?? 8_000);

// ---------------------------------------------------------------------------------------------
// Ids: generated as references, resolved to live rows when the request is sent

const REFS = [
  'ref:poll',
  'ref:slide',
  'ref:slide2',
  'ref:webhook',
  'ref:delivery',
  'ref:account',
  'ref:preview',
  'ref:foreignPoll',
  'ref:foreignAccount',
  'ref:foreignSlide',
  'ref:missingPoll',
  'ref:key',
  'ref:memberEmail',
] as const;
type Ref = (typeof REFS)[number];
const ID_NAMES = new Set(['accountId', 'pollId', 'slideId', 'webhookId', 'deliveryId', 'id', 'participantId', 'keyId']);

/** A member of acme (editor) that the key and member routes may revoke and remove: never the owner. */
const MEMBER_EMAIL = 'fuzz-member@example.com';

type Live = Record<Ref, string>;

let h: Harness;
let acme: TestAccount;
let rival: TestAccount;
let keys: Record<'owner' | 'readOnly' | 'editor' | 'foreign', string>;
let live: Live;
let memberUserId: string;
let routes: ApiRoute[];

async function inject(method: string, url: string, key: string, payload?: unknown): Promise<Record<string, unknown>> {
  const res = await h.app.inject({
    method: method as 'POST',
    url,
    headers: bearer(key),
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  if (res.statusCode >= 300) throw new Error(`fixture ${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json().data as Record<string, unknown>;
}

/** A visible poll of acme with two slides, a webhook and one delivery. */
async function buildFixtures(): Promise<void> {
  const poll = await inject('POST', '/poll', acme.key, { accountId: acme.accountId, title: 'Fuzz target' });
  const q1 = await inject('POST', '/slide', acme.key, { pollId: poll.id, type: 'short-answer', title: 'Why?' });
  const q2 = await inject('POST', '/slide', acme.key, {
    pollId: poll.id,
    type: 'question',
    title: 'Which?',
    answers: [{ title: 'a' }, { title: 'b' }],
  });
  await inject('POST', '/poll/update', acme.key, { pollId: poll.id, isVisible: true });
  const hook = await inject('POST', '/webhooks', acme.key, {
    pollId: poll.id,
    url: 'https://hooks.example.com/fuzz',
    deliveryRule: 'partial',
  });
  const res = await h.app.inject({
    method: 'POST',
    url: '/participant/responses',
    payload: { pollId: poll.id, answers: [{ slideId: q1.id, value: 'x' }] },
  });
  if (res.statusCode !== 201) throw new Error(`fixture answer: ${res.statusCode} ${res.body}`);
  const deliveries = (
    await h.app.inject({ url: `/webhooks/deliveries?webhookId=${String(hook.id)}`, headers: bearer(acme.key) })
  ).json().data as { id: string }[];
  live = {
    ...live,
    'ref:poll': String(poll.id),
    'ref:slide': String(q1.id),
    'ref:slide2': String(q2.id),
    'ref:webhook': String(hook.id),
    'ref:delivery': deliveries[0]?.id ?? newId('dlv'),
  };
}

/** The scratch member, as an editor of acme with a live key (again, when an earlier run changed that). */
async function buildMember(): Promise<void> {
  const apiKey = await h.member(acme.accountId, 'editor', MEMBER_EMAIL);
  const found = await h.deps.store.keys.findByHash(hashApiKey(apiKey));
  if (!found) throw new Error('fixture member: its key is not live');
  live = { ...live, 'ref:key': found.keyId, 'ref:memberEmail': MEMBER_EMAIL };
  memberUserId = found.userId;
}

/** Puts back what an earlier run deleted (DELETE /poll, /slide, /webhooks, /keys and /members are fuzzed too). */
async function ensureFixtures(): Promise<void> {
  const s = h.deps.store;
  const [poll, slide, slide2, hook, key, member] = await Promise.all([
    s.polls.get(live['ref:poll']),
    s.slides.get(live['ref:slide']),
    s.slides.get(live['ref:slide2']),
    s.webhooks.get(live['ref:webhook']),
    s.keys.get(live['ref:key']),
    s.users.membership(acme.accountId, memberUserId),
  ]);
  if (!poll || !slide || !slide2 || !hook) await buildFixtures();
  if (!key || key.revokedAt || member?.role !== 'editor') await buildMember();
}

function resolveRefs(v: unknown): unknown {
  if (typeof v === 'string') return (REFS as readonly string[]).includes(v) ? live[v as Ref] : v;
  if (Array.isArray(v)) return v.map(resolveRefs);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolveRefs(x)]));
  return v;
}

// ---------------------------------------------------------------------------------------------
// Values from schemas

const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '😀🏳️‍🌈',
  '\u202e',
  'zero\u200bwidth',
  '<script>alert(1)</script>',
  "'; DROP TABLE polls; --",
  '%00',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'null',
  'NaN',
  '-0',
  '1e400',
  'x'.repeat(3000),
];
const ODD_NUMBERS = [
  0,
  -0,
  -1,
  0.5,
  1e-300,
  1e21,
  2 ** 31,
  2 ** 53 + 2,
  -(2 ** 63),
  Number.MAX_VALUE,
  Number.MIN_VALUE,
];

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom<unknown>(...ODD_STRINGS, ...ODD_NUMBERS, null, true, false, [], {}, [[[]]], { a: { b: { c: {} } } }),
);

const text = (max: number) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: max }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: max }) },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  );

const pad = (n: number, w: number) => String(n).padStart(w, '0');

/** RFC 3339 date-times: anywhere in the grammar, or at its edges (years 0000 and 9999, leap seconds, extreme offsets). */
const dateTime: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({
      y: fc.integer({ min: 0, max: 9999 }),
      mo: fc.integer({ min: 1, max: 12 }),
      d: fc.integer({ min: 1, max: 31 }),
      hh: fc.integer({ min: 0, max: 23 }),
      mm: fc.integer({ min: 0, max: 59 }),
      ss: fc.integer({ min: 0, max: 59 }),
      frac: fc.constantFrom('', '.0', '.999', '.123456789'),
      t: fc.constantFrom('T', 't'),
      off: fc.oneof(
        fc.constantFrom('Z', 'z'),
        fc
          .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
          .map(([s, a, b]) => `${s}${pad(a, 2)}:${pad(b, 2)}`),
      ),
    })
    .map(
      (x) =>
        `${pad(x.y, 4)}-${pad(x.mo, 2)}-${pad(x.d, 2)}${x.t}${pad(x.hh, 2)}:${pad(x.mm, 2)}:${pad(x.ss, 2)}${x.frac}${x.off}`,
    ),
  fc
    .record({
      date: fc.constantFrom('0000-01-01', '0001-01-01', '1970-01-01', '2016-12-31', '9999-12-31'),
      time: fc.constantFrom('00:00:00', '23:59:59', '23:59:60', '23:59:60.5'),
      off: fc.constantFrom('Z', 'z', '+00:00', '-00:00', '+23:59', '-23:59'),
    })
    .map((x) => `${x.date}T${x.time}${x.off}`),
);

const URLS = [
  'https://hooks.example.com/fuzz',
  'https://8.8.8.8/x',
  'https://[2606:4700:4700::1111]/x',
  'https://127.0.0.1/',
  'https://[::1]/',
  'https://0x7f.1/',
  'https://169.254.169.254/',
  'https://localhost/',
  'http://hooks.example.com/',
  'https://user:pw@hooks.example.com/',
  'https://münchen.example/',
  'https://a..b/',
  'https://example.com:99999/',
  'javascript:alert(1)',
  'https://',
];
const url = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...URLS) },
  {
    weight: 2,
    arbitrary: fc.webUrl({ validSchemes: ['https', 'http'], withQueryParameters: true, withFragments: true }),
  },
  { weight: 1, arbitrary: text(80) },
);

/** The live row a field of that name names, when a request is meant to get through. */
const OWN: Record<string, Ref[]> = {
  accountId: ['ref:account'],
  pollId: ['ref:poll'],
  slideId: ['ref:slide', 'ref:slide2'],
  webhookId: ['ref:webhook'],
  deliveryId: ['ref:delivery'],
  id: ['ref:webhook'],
  keyId: ['ref:key'],
};

/** Mostly the field's own kind of live id; sometimes another account's, a missing one, another kind, or text. */
const idValue = (name: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<string>(...(OWN[name] ?? REFS)) },
    { weight: 2, arbitrary: fc.constantFrom<string>(...REFS) },
    { weight: 1, arbitrary: text(40) },
    { weight: 1, arbitrary: fc.constantFrom(newId('poll'), newId('sld'), 'poll_', 'x'.repeat(101)) },
  );

function matching(pattern: string): fc.Arbitrary<string> | undefined {
  try {
    return fc.stringMatching(new RegExp(pattern));
  } catch {
    return undefined;
  }
}

/**
 * 'clean': every value as the schema asks (numbers in range, storable strings), so that whole
 * requests get through validation and exercise what lies behind it. 'mixed': each value is
 * sometimes out of range, of the wrong type, or junk.
 */
type Mode = 'clean' | 'mixed';

const cache = new Map<string, Map<Schema, fc.Arbitrary<unknown>>>();

function value(s: Schema, mode: Mode, name = '', depth = 0): fc.Arbitrary<unknown> {
  const memo = name ? undefined : (cache.get(mode) ?? cache.set(mode, new Map()).get(mode)!);
  if (memo?.has(s)) return memo.get(s)!;
  const arb =
    mode === 'clean'
      ? valid(s, mode, name, depth)
      : fc.oneof({ weight: 8, arbitrary: valid(s, mode, name, depth) }, { weight: 1, arbitrary: junk });
  memo?.set(s, arb);
  return arb;
}

function valid(s: Schema, mode: Mode, name: string, depth: number): fc.Arbitrary<unknown> {
  const alts = branches(s);
  if (alts) return fc.oneof(...alts.map((b) => valid(b, mode, name, depth)));
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.not && Object.keys(s.not).length === 0) return mode === 'clean' ? fc.constant(undefined) : junk;
  if (depth > 6) return mode === 'clean' ? fc.constant(undefined) : junk;
  switch (Array.isArray(s.type) ? s.type[0] : s.type) {
    case 'object': {
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, child] of Object.entries(s.properties ?? {})) model[k] = value(child, mode, k, depth + 1);
      const known = fc.record(model, { requiredKeys: (s.required ?? []).filter((k) => k in model) });
      let extra: fc.Arbitrary<Record<string, unknown>> = fc.constant({});
      const patterns = Object.entries(s.patternProperties ?? {});
      if (patterns.length) {
        const [p, child] = patterns[0]!;
        extra = fc.dictionary(matching(p) ?? fc.string({ maxLength: 10 }), value(child, mode, 'x', depth + 1), {
          maxKeys: 3,
        });
      } else if (
        s.additionalProperties &&
        typeof s.additionalProperties === 'object' &&
        !('not' in s.additionalProperties)
      ) {
        extra = fc.dictionary(
          fc.string({ maxLength: 20 }),
          value(s.additionalProperties as Schema, mode, 'x', depth + 1),
          { maxKeys: 4 },
        );
      }
      const unknown =
        mode === 'clean'
          ? fc.constant({})
          : fc.oneof(
              { weight: 9, arbitrary: fc.constant({}) },
              { weight: 1, arbitrary: fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), junk, { maxKeys: 2 }) },
            );
      return fc.tuple(known, extra, unknown).map(([a, b, c]) => ({ ...c, ...b, ...a }));
    }
    case 'array': {
      const item = Array.isArray(s.items) ? s.items[0] : s.items;
      const max = Math.min(s.maxItems ?? 4, 4);
      const items = item ? value(item, mode, name, depth + 1) : junk;
      return mode === 'clean'
        ? fc.array(items, { minLength: Math.min(s.minItems ?? 0, max), maxLength: max })
        : fc.array(items, { maxLength: Math.max(max, 1) });
    }
    case 'integer': {
      const inRange = fc.integer({ min: s.minimum ?? -1_000_000, max: s.maximum ?? 1_000_000 });
      return mode === 'clean'
        ? inRange
        : fc.oneof(
            { weight: 4, arbitrary: inRange },
            { weight: 1, arbitrary: fc.constantFrom(...ODD_NUMBERS, (s.minimum ?? 0) - 1, (s.maximum ?? 0) + 1) },
          );
    }
    case 'number': {
      const inRange = fc.double({ noNaN: true, noDefaultInfinity: true, min: s.minimum, max: s.maximum });
      return mode === 'clean'
        ? inRange
        : fc.oneof({ weight: 4, arbitrary: inRange }, { weight: 1, arbitrary: fc.constantFrom(...ODD_NUMBERS) });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'string':
      return stringValue(s, mode, name);
    default:
      return fc.jsonValue({ maxDepth: 3 });
  }
}

function stringValue(s: Schema, mode: Mode, name: string): fc.Arbitrary<string> {
  if (s.pattern?.startsWith('^poll_'))
    return fc.oneof(
      {
        weight: 4,
        arbitrary: fc.constantFrom<string>('ref:preview', 'ref:poll', 'ref:foreignPoll', 'ref:missingPoll'),
      },
      { weight: 1, arbitrary: idValue('') },
    );
  if (ID_NAMES.has(name)) return idValue(name);
  if (/url/i.test(name)) return url;
  if (s.format === 'date-time') return dateTime;
  // The key and member routes name a member by email: often the scratch member, so that they reach it.
  const member = name === 'email' ? [{ weight: 2, arbitrary: fc.constant<string>('ref:memberEmail') }] : [];
  if (s.format === 'email')
    return mode === 'clean'
      ? fc.oneof({ weight: 3, arbitrary: fc.emailAddress() }, ...member)
      : fc.oneof({ weight: 3, arbitrary: fc.emailAddress() }, { weight: 1, arbitrary: text(60) }, ...member);
  const max = Math.min(s.maxLength ?? 60, 60);
  const min = Math.min(s.minLength ?? 0, max);
  const bySchema =
    (s.pattern ? matching(s.pattern) : undefined) ?? fc.string({ unit: 'grapheme', minLength: min, maxLength: max });
  if (mode === 'clean') return bySchema;
  const over =
    s.maxLength !== undefined && s.maxLength <= 5000
      ? [{ weight: 1, arbitrary: fc.constant('y'.repeat(s.maxLength + 1)) }]
      : [];
  return fc.oneof({ weight: 6, arbitrary: bySchema }, { weight: 2, arbitrary: text(max) }, ...over);
}

// ---------------------------------------------------------------------------------------------
// Requests

type Auth =
  'owner' | 'readOnly' | 'editor' | 'foreign' | 'none' | 'garbage' | 'lowercase' | 'basic' | 'long' | 'twoSpaces';
type Gen = {
  route: ApiRoute;
  body: { kind: 'json'; value: unknown } | { kind: 'raw'; text: string } | { kind: 'none' };
  query: [string, string][];
  rawQuery: string;
  auth: Auth;
  contentType: string | null;
  contentLength: 'auto' | 'short' | 'long';
  extra: Record<string, string>;
};

const fillRefs = (name: string, s: Schema): unknown => {
  if (ID_NAMES.has(name) || s.pattern?.startsWith('^poll_')) {
    if (s.pattern?.startsWith('^poll_')) return 'ref:preview';
    const refs: Record<string, Ref> = {
      accountId: 'ref:account',
      pollId: 'ref:poll',
      slideId: 'ref:slide',
      webhookId: 'ref:webhook',
      deliveryId: 'ref:delivery',
      id: 'ref:webhook',
      keyId: 'ref:key',
    };
    return refs[name];
  }
  if (/url/i.test(name)) return 'https://hooks.example.com/fuzz-base';
  if (name === 'language') return 'en';
  if (name === 'email' && s.format === 'email') return 'ref:memberEmail';
  if (name === 'role') return 'editor';
  // A window holding every delivery of the test; the delivery log's status filter is a comma list.
  if (s.format === 'date-time') return '2025-01-01T00:00:00.000Z';
  if (name === 'status' && s.pattern?.includes(',')) return 'rejected,given_up';
  if (name === 'answers' && s.type === 'array') return [{ slideId: 'ref:slide', value: 'x' }];
  // Any other id a schema spells out (a list's startCursor): one of that kind that no row has.
  const idKind = /^\^([a-z]+)_\[0-9A-Za-z\]\{22\}\$$/.exec(s.pattern ?? '');
  if (idKind) return `${idKind[1]}_${'0'.repeat(22)}`;
  return undefined;
};

function baseBody(r: ApiRoute): unknown {
  if (!r.body) return undefined;
  const body = sample(r.body, fillRefs, '', ['short-answer']) as Record<string, unknown>;
  // A body whose target is one of several optional fields (a recover's webhookId or pollId) names one.
  if (!Object.keys(body).some((k) => ID_NAMES.has(k))) {
    const scope = Object.keys(r.body.properties ?? {}).find((k) => ID_NAMES.has(k));
    if (scope) body[scope] = fillRefs(scope, r.body.properties![scope]!);
  }
  return body;
}

function baseQuery(r: ApiRoute): [string, string][] {
  const out: [string, string][] = r.query
    .filter(mustSend)
    .map((p) => [p.name, String(sample(p.schema, fillRefs, p.name))]);
  // Routes scoped by one of several optional ids want one of them.
  if (!out.some(([k]) => ID_NAMES.has(k))) {
    const scope = r.query.find((p) => ID_NAMES.has(p.name));
    if (scope) out.push([scope.name, String(fillRefs(scope.name, scope.schema))]);
  }
  return out;
}

const asQueryValues = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.map((x) => (typeof x === 'string' ? x : (JSON.stringify(x) ?? '')))
    : [typeof v === 'string' ? v : (JSON.stringify(v) ?? '')];

function queryArb(r: ApiRoute, mode: Mode): fc.Arbitrary<[string, string][]> {
  const params = r.query.map((p) =>
    fc.option(
      value(p.schema, mode, p.name).map((v) => asQueryValues(v).map((x): [string, string] => [p.name, x])),
      { freq: mustSend(p) ? 10 : 2 },
    ),
  );
  const extraKey = fc.oneof(
    fc.constantFrom(
      ...r.query.map((p) => p.name),
      'startCursor',
      'limit',
      '__proto__',
      'constructor',
      'a[b]',
      'x.y',
      '',
    ),
    fc.string({ maxLength: 10 }),
  );
  const extras =
    mode === 'clean'
      ? fc.constant([])
      : fc.oneof(
          { weight: 6, arbitrary: fc.constant([]) },
          { weight: 1, arbitrary: fc.array(fc.tuple(extraKey, text(30)), { minLength: 1, maxLength: 2 }) },
        );
  return fc.tuple(fc.tuple(...params), extras).map(([ps, ex]) => [...ps.flatMap((x) => x ?? []), ...ex]);
}

const RAW_QUERY_TAILS = ['', '%', '%E0%A4%A', '%00', '&&&', '=', 'limit=%FF', 'pollId', '&pollId[]=x', '+', '%2B%20'];

const headerName = fc
  .stringMatching(/^[a-z][a-z0-9-]{0,15}$/)
  .filter(
    (n) =>
      ![
        'host',
        'content-length',
        'content-type',
        'authorization',
        'transfer-encoding',
        'connection',
        'expect',
        'upgrade',
      ].includes(n),
  );
const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);
const KNOWN_HEADERS: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constant('content-encoding'), fc.constantFrom('gzip', 'br', 'deflate', 'identity', 'x-unknown')),
  fc.tuple(fc.constant('accept'), fc.constantFrom('application/xml', '*/*', 'text/csv', '')),
  fc.tuple(fc.constant('accept-encoding'), fc.constantFrom('gzip', 'br', '*', 'identity;q=0')),
  fc.tuple(fc.constant('x-forwarded-for'), fc.constantFrom('127.0.0.1', '::1, 10.0.0.1', 'garbage')),
  fc.tuple(fc.constant('x-http-method-override'), fc.constantFrom('DELETE', 'GET', 'PATCH')),
  fc.tuple(fc.constant('if-none-match'), fc.constantFrom('*', '"x"')),
);

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  'application/merge-patch+json',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '',
  ';',
  'application/json, text/plain',
  'application/json; boundary="',
];

type Focus = { body: number; query: number; headers: number };

function requestArb(candidates: ApiRoute[], focus: Focus): fc.Arbitrary<Gen> {
  // Built once per route: chain() asks again for every generated value.
  const built = new Map<ApiRoute, fc.Arbitrary<Gen>>();
  return fc.constantFrom(...candidates).chain((route) => {
    if (!built.has(route)) built.set(route, routeArb(route, focus));
    return built.get(route)!;
  });
}

/** One route's requests: each part either its base (valid) form or generated, by the focus weights (0..10). */
function routeArb(route: ApiRoute, focus: Focus): fc.Arbitrary<Gen> {
  const body: fc.Arbitrary<Gen['body']> = route.body
    ? fc.oneof(
        { weight: 10 - focus.body, arbitrary: fc.constant({ kind: 'json' as const, value: baseBody(route) }) },
        {
          weight: focus.body * 2,
          arbitrary: value(route.body, 'clean').map((v) => ({ kind: 'json' as const, value: v })),
        },
        {
          weight: focus.body * 2,
          arbitrary: value(route.body, 'mixed').map((v) => ({ kind: 'json' as const, value: v })),
        },
        {
          weight: focus.body,
          arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ kind: 'json' as const, value: v })),
        },
        { weight: focus.body, arbitrary: text(200).map((t) => ({ kind: 'raw' as const, text: t })) },
      )
    : fc.oneof(
        { weight: 9, arbitrary: fc.constant({ kind: 'none' as const }) },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => ({ kind: 'json' as const, value: v })) },
      );
  const query = fc.oneof(
    { weight: 10 - focus.query, arbitrary: fc.constant(baseQuery(route)) },
    { weight: focus.query * 2, arbitrary: queryArb(route, 'clean') },
    { weight: focus.query * 2, arbitrary: queryArb(route, 'mixed') },
  );
  const rawQuery = fc.oneof(
    { weight: 24, arbitrary: fc.constant('') },
    { weight: focus.query, arbitrary: fc.constantFrom(...RAW_QUERY_TAILS) },
  );
  const auth = fc.oneof(
    { weight: 20 - focus.headers, arbitrary: fc.constant<Auth>('owner') },
    {
      weight: focus.headers + 1,
      arbitrary: fc.constantFrom<Auth>(
        'readOnly',
        'editor',
        'foreign',
        'none',
        'garbage',
        'lowercase',
        'basic',
        'long',
        'twoSpaces',
      ),
    },
  );
  const contentType = fc.oneof(
    { weight: 20 - focus.headers, arbitrary: fc.constant<string | null>('application/json') },
    { weight: focus.headers, arbitrary: fc.constantFrom<string | null>(...CONTENT_TYPES, null) },
    { weight: 1, arbitrary: headerValue },
  );
  const contentLength = fc.oneof(
    { weight: 20 - focus.headers, arbitrary: fc.constant<Gen['contentLength']>('auto') },
    { weight: focus.headers, arbitrary: fc.constantFrom<Gen['contentLength']>('short', 'long') },
  );
  const extra = fc.oneof(
    { weight: 10 - focus.headers, arbitrary: fc.constant({}) },
    {
      weight: focus.headers,
      arbitrary: fc
        .tuple(fc.dictionary(headerName, headerValue, { maxKeys: 3 }), fc.array(KNOWN_HEADERS, { maxLength: 2 }))
        .map(([d, k]) => ({ ...d, ...Object.fromEntries(k) })),
    },
  );
  return fc.record({ route: fc.constant(route), body, query, rawQuery, auth, contentType, contentLength, extra });
}

function authHeader(a: Auth): string | undefined {
  switch (a) {
    case 'owner':
    case 'readOnly':
    case 'editor':
    case 'foreign':
      return `Bearer ${keys[a]}`;
    case 'none':
      return undefined;
    case 'garbage':
      return 'Bearer cvk_notarealkeyatallnotarealkeyatall';
    case 'lowercase':
      return `bearer ${keys.owner}`;
    case 'basic':
      return `Basic ${Buffer.from('user:pass').toString('base64')}`;
    case 'long':
      return `Bearer ${'k'.repeat(8000)}`;
    case 'twoSpaces':
      return `Bearer  ${keys.owner}  `;
  }
}

/** Like encodeURIComponent, but an unpaired surrogate goes out as its (invalid) 3-byte UTF-8 form instead of throwing. */
function enc(s: string): string {
  return s.replace(/[\s\S]/gu, (ch) => {
    const c = ch.charCodeAt(0);
    if (ch.length === 1 && c >= 0xd800 && c <= 0xdfff)
      return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]
        .map((b) => '%' + b.toString(16).toUpperCase())
        .join('');
    return encodeURIComponent(ch);
  });
}

type Injected = {
  method: InjectMethod;
  url: string;
  headers: Record<string, string>;
  payload?: string;
};

function materialise(g: Gen): Injected {
  const q = g.query.map(([k, v]) => `${enc(k)}=${enc(String(resolveRefs(v)))}`).join('&');
  const qs = [q, g.rawQuery].filter(Boolean).join('&');
  const headers: Record<string, string> = { ...g.extra };
  const auth = authHeader(g.auth);
  if (auth) headers.authorization = auth;
  let payload: string | undefined;
  if (g.body.kind === 'json') payload = JSON.stringify(resolveRefs(g.body.value)) ?? 'null';
  if (g.body.kind === 'raw') payload = g.body.text;
  if (payload !== undefined && g.contentType !== null) headers['content-type'] = g.contentType;
  if (payload !== undefined && g.contentLength !== 'auto')
    headers['content-length'] = String(
      Math.max(0, Buffer.byteLength(payload) + (g.contentLength === 'short' ? -1 : 1)),
    );
  return {
    method: g.route.method,
    url: qs ? `${g.route.path}?${qs}` : g.route.path,
    headers,
    ...(payload === undefined ? {} : { payload }),
  };
}

const describeReq = (r: Injected) =>
  `${r.method} ${r.url.slice(0, 300)}\n  headers ${JSON.stringify(r.headers).slice(0, 400)}\n  body ${(r.payload ?? '').slice(0, 600)}`;

// ---------------------------------------------------------------------------------------------

type Tally = { runs: number; statuses: Record<string, number> };

/** RFC 3339 allows them, so the schema does; PostgreSQL rejects leap seconds, PGlite years 0 and 10000. */
const UNSTORABLE_TIMES = [
  '2016-12-31T23:59:60Z',
  '1998-12-31T23:59:60.5Z',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+01:00',
  '9999-12-31T23:59:59-23:59',
];
const STORABLE_TIMES = ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-01-01T00:00:00.123+05:30'];

/** Runs one property; fails with the seed, the shrunk request and what was wrong. */
async function fuzz(name: string, arb: fc.Arbitrary<Gen>, tally: Tally): Promise<void> {
  const property = fc.asyncProperty(arb, async (g) => {
    await ensureFixtures();
    const req = materialise(g);
    let res: LightMyRequestResponse;
    try {
      res = await h.app.inject(req);
    } catch (e) {
      throw new Error(`inject failed: ${String(e)}\n${describeReq(req)}`);
    }
    tally.runs++;
    tally.statuses[res.statusCode] = (tally.statuses[res.statusCode] ?? 0) + 1;
    const issues = contractIssues(res);
    if (issues.length) throw new Error(`${issues.join('; ')}\n${describeReq(req)}`);
  });
  const details = await fc.check(property, {
    seed: SEED,
    numRuns: RUNS,
    interruptAfterTimeLimit: TIME_MS,
    markInterruptAsFailure: false,
  });
  console.log(
    `fuzz ${name}: seed ${SEED}, ${details.numRuns} runs${details.interrupted ? ' (time limit)' : ''}, statuses ${JSON.stringify(tally.statuses)}`,
  );
  if (details.failed) {
    const cause =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(
      `fuzz ${name} failed — replay with CANVASS_FUZZ_SEED=${SEED}\n${cause}\n\n${fc.defaultReportMessage(details) ?? ''}`,
    );
  }
}

beforeAll(async () => {
  h = await harness();
  acme = await h.account({ name: 'Fuzz' });
  rival = await h.account({ name: 'Rival' });
  keys = {
    owner: acme.key,
    readOnly: await h.member(acme.accountId, 'read_only'),
    editor: await h.member(acme.accountId, 'editor'),
    foreign: rival.key,
  };
  const rivalPoll = await inject('POST', '/poll', rival.key, { accountId: rival.accountId, title: 'Rival' });
  const rivalSlide = await inject('POST', '/slide', rival.key, {
    pollId: rivalPoll.id,
    type: 'short-answer',
    title: 'Rival?',
  });
  const preview = await h.app.inject({
    method: 'POST',
    url: '/poll',
    headers: bearer(acme.key),
    payload: { accountId: acme.accountId, title: 'Preview', dryRun: true },
  });
  live = {
    'ref:account': acme.accountId,
    'ref:preview': preview.json().data.id,
    'ref:foreignPoll': String(rivalPoll.id),
    'ref:foreignAccount': rival.accountId,
    'ref:foreignSlide': String(rivalSlide.id),
    'ref:missingPoll': newId('poll'),
  } as Live;
  await buildFixtures();
  await buildMember();
  routes = await apiRoutes(h.app);
});
afterAll(() => h?.close());

describe('fuzzing every route (fast-check)', () => {
  it('covers every route of the OpenAPI document', () => {
    expect(routes.length).toBeGreaterThanOrEqual(36);
    expect(routes.filter((r) => r.body).length).toBeGreaterThanOrEqual(16);
  });

  it('starts from base requests that get past validation on every route, alone and with each optional parameter', async () => {
    // Past validation: state may still answer (a missing id 404, a delivery on its way 409).
    const failures: string[] = [];
    for (const r of routes) {
      const base = baseQuery(r);
      const optional = r.query.filter((p) => !base.some(([k]) => k === p.name));
      for (const query of [
        base,
        ...optional.map((p): [string, string][] => [...base, [p.name, String(sample(p.schema, fillRefs, p.name))]]),
      ]) {
        await ensureFixtures();
        const req = materialise({
          route: r,
          body: r.body ? { kind: 'json', value: baseBody(r) } : { kind: 'none' },
          query,
          rawQuery: '',
          auth: 'owner',
          contentType: 'application/json',
          contentLength: 'auto',
          extra: {},
        });
        const res = await h.app.inject(req);
        if (res.statusCode >= 500 || [400, 401, 413, 415].includes(res.statusCode))
          failures.push(`${req.method} ${req.url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  const tallies = {
    bodies: { runs: 0, statuses: {} },
    queries: { runs: 0, statuses: {} },
    headers: { runs: 0, statuses: {} },
  } as Record<string, Tally>;

  it(
    'generated bodies: never a 5xx, every 4xx a problem document',
    async () => {
      await fuzz(
        'bodies',
        requestArb(
          routes.filter((r) => r.body),
          { body: 8, query: 1, headers: 1 },
        ),
        tallies.bodies!,
      );
    },
    TIME_MS + 50_000,
  );

  it(
    'generated query strings: never a 5xx, every 4xx a problem document',
    async () => {
      // Routes with more parameters are drawn more often, most of all those with a format to parse.
      const weighted = routes.flatMap((r) =>
        Array<ApiRoute>(1 + r.query.length + 4 * r.query.filter((p) => p.schema.format).length).fill(r),
      );
      await fuzz('queries', requestArb(weighted, { body: 1, query: 8, headers: 1 }), tallies.queries!);
    },
    TIME_MS + 50_000,
  );

  it(
    'generated headers (keys, content types, lengths, extras): never a 5xx, every 4xx a problem document',
    async () => {
      await fuzz('headers', requestArb(routes, { body: 2, query: 2, headers: 8 }), tallies.headers!);
    },
    TIME_MS + 50_000,
  );

  it('regressions it found: date-time query filters storage cannot take are a 400 naming the parameter, not a 500', async () => {
    const failures: string[] = [];
    const timed = routes.flatMap((r) =>
      r.query.filter((p) => p.schema.format === 'date-time').map((p) => [r, p.name] as const),
    );
    expect(timed.map(([r, p]) => `${routeName(r)} ${p}`)).toEqual(
      expect.arrayContaining(['GET /responses createdAfter', 'GET /responses createdBefore']),
    );
    for (const [r, param] of timed) {
      await ensureFixtures();
      const base = materialise({
        route: r,
        body: { kind: 'none' },
        query: baseQuery(r),
        rawQuery: '',
        auth: 'owner',
        contentType: null,
        contentLength: 'auto',
        extra: {},
      });
      const at = (v: string) =>
        h.app.inject({
          ...base,
          url: `${base.url}${base.url.includes('?') ? '&' : '?'}${param}=${encodeURIComponent(v)}`,
        });
      for (const v of UNSTORABLE_TIMES) {
        const res = await at(v);
        const problem =
          res.statusCode === 400 ? (res.json() as { code: string; errors: { path: string }[] }) : undefined;
        if (problem?.code !== 'validation_failed' || problem.errors[0]?.path !== `query:/${param}`)
          failures.push(`${routeName(r)} ${param}=${v}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
      // The edges that storage does take still work.
      for (const v of STORABLE_TIMES) {
        const res = await at(v);
        if (res.statusCode !== 200)
          failures.push(`${routeName(r)} ${param}=${v}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('and in bodies: a date-time field storage cannot take is a 400 naming the field, not a 500', async () => {
    const failures: string[] = [];
    const timed = routes.flatMap((r) =>
      Object.entries(r.body?.properties ?? {})
        .filter(([, s]) => s.format === 'date-time')
        .map(([field]) => [r, field] as const),
    );
    expect(timed.map(([r, f]) => `${routeName(r)} ${f}`)).toEqual(
      expect.arrayContaining(['POST /webhooks/recover since', 'POST /webhooks/recover until']),
    );
    for (const [r, field] of timed) {
      const at = async (v: string) => {
        await ensureFixtures();
        return h.app.inject(
          materialise({
            route: r,
            body: { kind: 'json', value: { ...(baseBody(r) as object), [field]: v } },
            query: baseQuery(r),
            rawQuery: '',
            auth: 'owner',
            contentType: 'application/json',
            contentLength: 'auto',
            extra: {},
          }),
        );
      };
      for (const v of UNSTORABLE_TIMES) {
        const res = await at(v);
        const problem =
          res.statusCode === 400 ? (res.json() as { code: string; errors: { path: string }[] }) : undefined;
        if (problem?.code !== 'validation_failed' || problem.errors[0]?.path !== `/${field}`)
          failures.push(`${routeName(r)} ${field}=${v}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
      // The edges storage takes may still be refused for what they mean (until before since), never with a 5xx.
      for (const v of STORABLE_TIMES)
        for (const issue of contractIssues(await at(v))) failures.push(`${routeName(r)} ${field}=${v}: ${issue}`);
    }
    expect(failures).toEqual([]);
  });

  it('the generators reached the code behind validation, and the service still answers', async () => {
    for (const [name, t] of Object.entries(tallies)) {
      const got = Object.entries(t.statuses);
      expect(t.runs, name).toBeGreaterThan(0);
      // Something got through (2xx), something was refused by validation (400), and something by access or state (403/404/409).
      expect(
        got.some(([s]) => s.startsWith('2')),
        `${name}: ${JSON.stringify(t.statuses)}`,
      ).toBe(true);
      expect(
        got.some(([s]) => s === '400'),
        `${name}: ${JSON.stringify(t.statuses)}`,
      ).toBe(true);
    }
    expect((await h.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    expect(
      (await h.app.inject({ url: `/polls?accountId=${acme.accountId}`, headers: bearer(acme.key) })).statusCode,
    ).toBe(200);
  });
});
