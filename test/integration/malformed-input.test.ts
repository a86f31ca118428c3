import { Readable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/domain/api-key.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import { branches, type InjectMethod, type Parameter, type Schema } from '../support/openapi.js';

/**
 * No input produces a 500 (README, Guarantees). The routes come from the OpenAPI document, so a route
 * added later is attacked too; request bodies and queries are generated from its own schema.
 */

type Operation = {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema: Schema }> };
  security?: unknown[];
};
type Route = {
  method: InjectMethod;
  path: string;
  op: Operation;
  body?: Schema;
  query: Parameter[];
  isPublic: boolean;
};
type Req = {
  method: InjectMethod;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer | Readable;
};
type Case = { name: string; req: Req; expect?: { status?: number; code?: string; errorPath?: string } };

const KB = 1024;
const HUGE = 'x'.repeat(200 * KB);
const RESPONDENT = { method: 'POST' as const, path: '/participant/responses' };
const MISSING = '_0000000000000000000000';

let h: Harness;
let acme: TestAccount;
let routes: Route[];
let ids: {
  pollId: string;
  slideId: string;
  previewId: string;
  webhookId: string;
  deliveryId: string;
  keyId: string;
  memberEmail: string;
};

// ---------------------------------------------------------------------------------------------
// Schema-driven samples

/** The JSON kinds a schema accepts, or 'any'. */
function kinds(s: Schema): Set<string> | 'any' {
  const k = kindsOf(s);
  if (k !== 'any' && s.nullable) k.add('null');
  return k;
}

function kindsOf(s: Schema): Set<string> | 'any' {
  const alts = branches(s);
  if (alts) {
    const out = new Set<string>();
    for (const b of alts) {
      const k = kinds(b);
      if (k === 'any') return 'any';
      k.forEach((x) => out.add(x));
    }
    return out;
  }
  if (s.type) return new Set((Array.isArray(s.type) ? s.type : [s.type]).map((t) => (t === 'integer' ? 'number' : t)));
  if (s.const !== undefined) return new Set([kindOf(s.const)]);
  if (s.not && Object.keys(s.not).length === 0) return new Set();
  return 'any';
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** Literals that need no companions (a question slide needs answers; a short answer does not). */
const PREFERRED = ['short-answer'];

/** A value the schema accepts, using real ids of this test's account where a field names one. */
function sample(s: Schema, name = '', method = 'POST'): unknown {
  const alts = branches(s);
  if (alts) {
    const preferred = alts.find(
      (b) => PREFERRED.includes(b.const as string) || PREFERRED.includes(b.enum?.[0] as string),
    );
    return sample(preferred ?? alts.find((b) => b.type !== 'null') ?? alts[0]!, name, method);
  }
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of s.required ?? []) out[key] = sample(s.properties?.[key] ?? {}, key, method);
      return out;
    }
    case 'array': {
      // Answers are worth one item: the respondent route then stores something.
      const item = Array.isArray(s.items) ? undefined : s.items;
      if (item?.required?.includes('slideId')) return [sample(item, name, method)];
      const items = Array.isArray(s.items) ? s.items : s.items ? Array(s.minItems ?? 0).fill(s.items) : [];
      return items
        .slice(0, Math.max(s.minItems ?? 0, Array.isArray(s.items) ? s.items.length : 0))
        .map((i: Schema) => sample(i, name, method));
    }
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'string':
      return sampleString(s, name, method);
    default:
      return 'x';
  }
}

function sampleString(s: Schema, name: string, method: string): string {
  // Deleting the test's own poll would leave nothing to aim at: deletes aim at missing ids.
  const real = method !== 'DELETE';
  if (name === 'accountId') return acme.accountId;
  if (name === 'pollId') return real ? ids.pollId : 'poll' + MISSING;
  if (name === 'slideId') return real ? ids.slideId : 'sld' + MISSING;
  if (name === 'webhookId') return real ? ids.webhookId : 'whk' + MISSING;
  if (name === 'deliveryId') return ids.deliveryId;
  // Keys and members to revoke and remove: a member of their own, never the test's owner.
  if (name === 'keyId') return ids.keyId;
  if (name === 'email' && method === 'DELETE') return ids.memberEmail;
  // The delivery log filters by one status or a comma list of them.
  if (name === 'status' && s.pattern?.includes(',')) return 'rejected,given_up';
  if (name === 'id' && s.pattern?.startsWith('^poll_')) return ids.previewId;
  if (s.pattern?.startsWith('^poll_')) return 'poll' + MISSING;
  // Any other id a schema spells out (a list's startCursor): one of that kind that no row has.
  const idKind = /^\^([a-z]+)_\[0-9A-Za-z\]\{22\}\$$/.exec(s.pattern ?? '');
  if (idKind) return idKind[1] + MISSING;
  if (name === 'language' || name === 'defaultLanguage' || s.pattern?.startsWith('^[a-z]{2,3}')) return 'en';
  if (s.pattern === '^[A-Za-z]{2}$') return 'US';
  if (s.format === 'email') return 'someone@example.com';
  if (s.format === 'date-time') return '2026-01-01T00:00:00.000Z';
  if (/url/i.test(name)) return 'https://example.com/hook';
  return 'x'.repeat(Math.max(s.minLength ?? 1, 1));
}

/** Every field a body schema names, with its JSON pointer; array items are entered at index 0. */
function fields(s: Schema, path = ''): { path: string; schema: Schema }[] {
  const out: { path: string; schema: Schema }[] = [];
  const nonNull = branches(s)?.filter((b) => b.type !== 'null');
  // Nullable objects (anyOf [X, null]) are entered; real unions report on the union itself.
  const node = nonNull?.length === 1 ? nonNull[0]! : s;
  if (node.type === 'object' && node.properties) {
    for (const [key, child] of Object.entries(node.properties)) {
      out.push({ path: `${path}/${key}`, schema: child });
      out.push(...fields(child, `${path}/${key}`));
    }
  }
  if (node.type === 'array' && node.items && !Array.isArray(node.items)) {
    const item = node.items;
    if (item.type === 'object') out.push(...fields(item, `${path}/0`));
  }
  return out;
}

/** Child schema of an object or array schema. */
function child(s: Schema, key: string): Schema {
  const nonNull = branches(s)?.filter((b) => b.type !== 'null');
  const node = nonNull?.length === 1 ? nonNull[0]! : s;
  if (node.type === 'array') return (Array.isArray(node.items) ? node.items[Number(key)] : node.items) ?? {};
  return node.properties?.[key] ?? {};
}

/** A copy of `base` with `value` at `pointer`, creating missing parents as valid samples. */
function setAt(base: unknown, schema: Schema, pointer: string, value: unknown, method: string): unknown {
  const root = structuredClone(base) as Record<string, unknown>;
  const keys = pointer.split('/').slice(1);
  let node: Record<string, unknown> = root;
  let nodeSchema = schema;
  keys.forEach((key, i) => {
    const childSchema = child(nodeSchema, key);
    if (i === keys.length - 1) {
      node[key] = value;
      return;
    }
    if (node[key] === undefined || node[key] === null) {
      const next = childSchema;
      const isArray = (branches(next)?.find((b) => b.type !== 'null') ?? next).type === 'array';
      node[key] = isArray ? [sample(child(next, '0'), keys[i + 1], method)] : sample(next, key, method);
    }
    node = node[key] as Record<string, unknown>;
    nodeSchema = childSchema;
  });
  return root;
}

// ---------------------------------------------------------------------------------------------
// Requests

const json = (key?: string, extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  ...(key ? bearer(key) : {}),
  ...extra,
});

/** Scope fields of which a route wants one (`pollId`, `accountId` or `webhookId`), in order of preference. */
const SCOPES = ['pollId', 'accountId', 'webhookId'];

function baseBody(r: Route): Record<string, unknown> {
  const schema = r.body ?? { type: 'object' };
  const body = sample(schema, '', r.method) as Record<string, unknown>;
  // A body whose target is one of several optional fields (a recover's webhookId or pollId) names one.
  if (!Object.keys(body).some((k) => /^id$|Id$/.test(k))) {
    const scope = SCOPES.find((n) => schema.properties?.[n]);
    if (scope) body[scope] = sample(schema.properties![scope]!, scope, r.method);
  }
  return body;
}

function baseQuery(r: Route): [string, string][] {
  const params = r.query.filter((p) => p.required && p.schema.default === undefined);
  if (!params.some((p) => SCOPES.includes(p.name))) {
    const scope = SCOPES.map((n) => r.query.find((p) => p.name === n)).find((p) => p);
    if (scope) params.push(scope);
  }
  return params.map((p) => [p.name, String(sample(p.schema, p.name, r.method))]);
}

/** Like encodeURIComponent, but an unpaired surrogate goes out as its (invalid) 3-byte UTF-8 form. */
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

function url(path: string, query: [string, string][]): string {
  const qs = query.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
  return qs ? `${path}?${qs}` : path;
}

function bodyReq(r: Route, payload: string | Buffer | Readable, headers: Record<string, string> = json(acme.key)): Req {
  return { method: r.method, url: url(r.path, baseQuery(r)), headers, payload };
}

function deep(levels: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(levels) + ']'.repeat(levels) : '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

const WRONG: unknown[] = [12345, 'not-the-right-type', true, [1, 2], { unexpected: 1 }, null];
/** Strings PostgreSQL cannot store: a 400 naming the field. */
const UNSTORABLE = ['\u0000', 'a\u0000b', '\ud800', '\udfff lone', 'a\udbff'];
const ODD_STRINGS = [
  ...UNSTORABLE,
  '😀🏳️‍🌈',
  '\u202eevil',
  'zero\u200bwidth',
  '  ',
  '<script>alert(1)</script>',
  "'; DROP TABLE polls; --",
  '%00',
  '\\u0000',
  HUGE,
];

function bodyCases(r: Route): Case[] {
  const schema = r.body!;
  const base = baseBody(r);
  const cases: Case[] = [];
  const send = (
    name: string,
    payload: string | Buffer | Readable,
    e?: Case['expect'],
    headers?: Record<string, string>,
  ) => cases.push({ name, req: bodyReq(r, payload, headers), expect: e });
  const sendJson = (name: string, value: unknown, e?: Case['expect']) => send(name, JSON.stringify(value), e);

  // Wrong types, huge and odd strings, deep nesting and unknown keys for every field.
  for (const f of fields(schema)) {
    const k = kinds(f.schema);
    for (const v of WRONG) {
      const wrong = k !== 'any' && !k.has(kindOf(v));
      sendJson(
        `${f.path} = ${JSON.stringify(v)}`,
        setAt(base, schema, f.path, v, r.method),
        wrong ? { status: 400, code: 'validation_failed', errorPath: f.path } : undefined,
      );
    }
    if (k === 'any' || k.has('string')) {
      for (const s of ODD_STRINGS) {
        const rejected = (s === HUGE && f.schema.maxLength !== undefined) || UNSTORABLE.includes(s);
        sendJson(
          `${f.path} = ${JSON.stringify(s.slice(0, 20))}${s.length > 20 ? '…' : ''}`,
          setAt(base, schema, f.path, s, r.method),
          rejected ? { status: 400, code: 'validation_failed', errorPath: f.path } : undefined,
        );
      }
    }
    // JSON reads 1e999 as Infinity, which no storage keeps as a number: a 400 naming the field,
    // also as a value of a keyed record (metadata) or inside an array of numbers.
    const huge = (value: unknown) =>
      JSON.stringify(setAt(base, schema, f.path, value, r.method)).replace(/"__huge__"/g, '1e999');
    if (k === 'any' || k.has('number'))
      send(`${f.path} = 1e999`, huge('__huge__'), { status: 400, code: 'validation_failed', errorPath: f.path });
    const record = branches(f.schema)?.find((b) => b.type === 'object') ?? f.schema;
    if (record.type === 'object' && (record.patternProperties || typeof record.additionalProperties === 'object'))
      send(`${f.path} holding 1e999`, huge({ zz1: '__huge__' }), {
        status: 400,
        code: 'validation_failed',
        errorPath: `${f.path}/zz1`,
      });
    if (k !== 'any' && k.has('array'))
      send(`${f.path} = [1e999]`, huge(['__huge__']), { status: 400, code: 'validation_failed' });
    for (const kind of ['array', 'object'] as const) {
      const marker = '"__deep__"';
      const text = JSON.stringify(setAt(base, schema, f.path, '__deep__', r.method)).replace(
        marker,
        deep(10_000, kind),
      );
      // Settings objects drop unknown keys, so a deep object there is harmless; elsewhere it is a 400.
      const dropped = kind === 'object' && f.schema.additionalProperties === false;
      send(`${f.path} nested 10k ${kind}s`, text, dropped ? undefined : { status: 400, code: 'validation_failed' });
    }
    if (k !== 'any' && k.has('object')) {
      sendJson(
        `${f.path} with an unknown key`,
        setAt(base, schema, f.path, { ...(sample(f.schema, '', r.method) as object), zzUnknown: 1 }, r.method),
      );
      send(
        `${f.path} with __proto__`,
        JSON.stringify(setAt(base, schema, f.path, '__x__', r.method)).replace(
          '"__x__"',
          '{"__proto__":{"polluted":true}}',
        ),
        { status: 400 },
      );
    }
  }

  // Missing required fields, one at a time and all at once.
  for (const key of schema.required ?? []) {
    const { [key]: _drop, ...rest } = base;
    sendJson(`without ${key}`, rest, { status: 400, code: 'validation_failed', errorPath: `/${key}` });
  }
  sendJson('{}', {}, schema.required?.length ? { status: 400, code: 'validation_failed' } : undefined);

  // The body as a whole.
  sendJson(
    'base body with an unknown top-level key',
    { ...base, zzUnknown: 1 },
    { status: 400, code: 'validation_failed', errorPath: '/zzUnknown' },
  );
  for (const [name, text] of [
    ['null', 'null'],
    ['an array', '[]'],
    ['an array of the body', JSON.stringify([base])],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['true', 'true'],
  ])
    send(`body is ${name}`, text!, { status: 400, code: 'validation_failed' });
  for (const [name, text] of [
    ['truncated JSON', '{"title": "a'],
    ['unquoted keys', '{title: 1}'],
    ['single quotes', "{'title': 'a'}"],
    ['a trailing comma', JSON.stringify(base).replace(/}$/, ',}')],
    ['two documents', JSON.stringify(base) + JSON.stringify(base)],
    ['NaN', '{"n": NaN}'],
    ['a comment', '/* hi */ {}'],
    ['garbage', 'not json at all'],
    ['only whitespace', '   '],
    ['a raw NUL byte', '{"title": "a\u0000b"}'],
    ['invalid UTF-8', Buffer.concat([Buffer.from('{"title": "'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')])],
  ] as const)
    send(`bad JSON: ${name}`, text, { status: 400, code: 'validation_failed' });
  send('empty body with content-type json', '', { status: 400, code: 'validation_failed' });
  send('body over 1 MiB', JSON.stringify({ ...base, zzPad: 'x'.repeat(1024 * 1024 + 10) }), {
    status: 413,
    code: 'payload_too_large',
  });
  send(
    'streamed body over 1 MiB without content-length',
    Readable.from([Buffer.alloc(600 * KB, 0x20), Buffer.alloc(600 * KB, 0x20)]),
    { status: 413, code: 'payload_too_large' },
  );
  send('top-level 10k nested arrays', deep(10_000, 'array'), { status: 400, code: 'validation_failed' });
  send('top-level 10k nested objects', deep(10_000, 'object'), { status: 400, code: 'validation_failed' });
  send('200 KB unknown key', JSON.stringify({ ...base, [HUGE]: 1 }), { status: 400, code: 'validation_failed' });
  send('__proto__ at the top', JSON.stringify(base).replace(/^{/, '{"__proto__":{"polluted":true},'), {
    status: 400,
    code: 'validation_failed',
  });
  send(
    'constructor.prototype at the top',
    JSON.stringify(base).replace(/^{/, '{"constructor":{"prototype":{"polluted":true}},'),
    { status: 400, code: 'validation_failed' },
  );
  send('escaped \\u005f_proto__', JSON.stringify(base).replace(/^{/, '{"\\u005f_proto__":{"polluted":true},'), {
    status: 400,
    code: 'validation_failed',
  });
  sendJson('key "constructor" (no prototype)', { ...base, constructor: 1 }, { status: 400 });
  sendJson(
    'key "prototype"',
    { ...base, prototype: { polluted: true } },
    { status: 400, code: 'validation_failed', errorPath: '/prototype' },
  );

  // Content types other than JSON.
  for (const ct of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/xml',
    'application/octet-stream',
  ]) {
    send(
      `content-type ${ct}`,
      ct.startsWith('application/x-www') ? 'title=a&accountId=b' : JSON.stringify(base),
      { status: 415, code: 'unsupported_media_type' },
      { ...bearer(acme.key), 'content-type': ct },
    );
  }
  send(
    'no content-type',
    JSON.stringify(base),
    { status: 415, code: 'unsupported_media_type' },
    { ...bearer(acme.key) },
  );
  for (const charset of ['klingon', 'utf-16', 'UTF-16LE', 'iso-8859-1']) {
    send(
      `content-type json; charset=${charset}`,
      JSON.stringify(base),
      { status: 415, code: 'unsupported_media_type' },
      json(acme.key, { 'content-type': `application/json; charset=${charset}` }),
    );
  }

  // Bytes that are not UTF-8 are refused, not replaced with U+FFFD.
  const text = JSON.stringify(base);
  const value = text.indexOf('":"');
  const cut = value >= 0 ? value + 3 : text.length;
  for (const [name, bytes] of Object.entries(NOT_UTF8)) {
    send(
      `${name} in the first string`,
      Buffer.concat([Buffer.from(text.slice(0, cut)), bytes, Buffer.from(text.slice(cut))]),
      { status: 400, code: 'validation_failed', errorPath: '/' },
    );
  }
  return cases;
}

/** Byte sequences a strict UTF-8 decoder refuses. */
const NOT_UTF8: Record<string, Buffer> = {
  'a lone continuation byte': Buffer.from([0x80]),
  'bytes 0xff 0xfe': Buffer.from([0xff, 0xfe]),
  'an overlong "/"': Buffer.from([0xc0, 0xaf]),
  'an encoded surrogate': Buffer.from([0xed, 0xa0, 0x80]),
  'a code point above U+10FFFF': Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  'a sequence cut short': Buffer.from([0xe2, 0x82]),
};

function queryCases(r: Route): Case[] {
  const base = baseQuery(r);
  const cases: Case[] = [];
  const hdr = r.body ? json(acme.key) : bearer(acme.key);
  const payload = r.body ? JSON.stringify(baseBody(r)) : undefined;
  const get = (name: string, query: [string, string][] | string, e?: Case['expect']) =>
    cases.push({
      name,
      req: {
        method: r.method,
        url: typeof query === 'string' ? `${r.path}?${query}` : url(r.path, query),
        headers: hdr,
        payload,
      },
      expect: e,
    });

  get('base query', base);
  for (const p of r.query) {
    const others = base.filter(([k]) => k !== p.name);
    const value = String(sample(p.schema, p.name, r.method));
    const k = kinds(p.schema);
    if (p.required && p.schema.default === undefined)
      get(`without ${p.name}`, others, { status: 400, code: 'validation_failed', errorPath: `query:/${p.name}` });
    get(
      `${p.name} twice`,
      [...others, [p.name, 'a'], [p.name, 'b']],
      k !== 'any' && !k.has('array') ? { status: 400, code: 'validation_failed' } : undefined,
    );
    get(`${p.name} with [] syntax`, [...others, [`${p.name}[]`, value]], { status: 400, code: 'validation_failed' });
    get(`${p.name} as an object`, [...others, [`${p.name}[a]`, value]], { status: 400, code: 'validation_failed' });
    get(`${p.name} empty`, [...others, [p.name, '']]);
    get(
      `${p.name} overlong (10 KB)`,
      [...others, [p.name, 'x'.repeat(10 * KB)]],
      p.schema.maxLength !== undefined ? { status: 400, code: 'validation_failed' } : undefined,
    );
    for (const s of ODD_STRINGS.filter((x) => x !== HUGE)) {
      const nul = s.includes('\u0000') && k !== 'any' && k.has('string') && !k.has('number');
      get(
        `${p.name} = ${JSON.stringify(s)}`,
        [...others, [p.name, s]],
        nul ? { status: 400, code: 'validation_failed', errorPath: `query:/${p.name}` } : undefined,
      );
    }
    get(`${p.name} raw bad percent-encoding`, `${url('', others).slice(1)}&${p.name}=%E0%A4%A`);
    get(`${p.name} raw %00`, `${url('', others).slice(1)}&${p.name}=a%00b`);
    if (k !== 'any' && k.has('number')) {
      for (const v of ['abc', '1.5', '-1', '1e400', '0x10', '99999999999999999999', 'NaN', 'Infinity'])
        get(`${p.name} = ${v}`, [...others, [p.name, v]]);
    }
  }
  get(
    'unknown parameter',
    [...base, ['zzUnknown', '1']],
    r.query.length ? { status: 400, code: 'validation_failed', errorPath: 'query:/zzUnknown' } : undefined,
  );
  get('__proto__ parameter', `${url('', base).slice(1)}&__proto__=x`);
  get('__proto__[polluted] parameter', `${url('', base).slice(1)}&__proto__[polluted]=1`);
  get('__proto__.polluted parameter', `${url('', base).slice(1)}&__proto__.polluted=1`);
  get('constructor[prototype][polluted] parameter', `${url('', base).slice(1)}&constructor[prototype][polluted]=1`);
  get('constructor parameter', `${url('', base).slice(1)}&constructor=1`);
  get('hasOwnProperty parameter', `${url('', base).slice(1)}&hasOwnProperty=1`);
  get(
    '1000 parameters',
    [...base, ...Array.from({ length: 1000 }, (_, i): [string, string] => [`p${i}`, 'x'])],
    r.query.length ? { status: 400, code: 'validation_failed' } : undefined,
  );
  return cases;
}

// ---------------------------------------------------------------------------------------------
// The contract every answer keeps

function contractIssues(c: Case, res: LightMyRequestResponse): string[] {
  const issues: string[] = [];
  const status = res.statusCode;
  if (status >= 500) issues.push(`answered ${status}: ${res.body.slice(0, 300)}`);
  if (c.expect?.status !== undefined && status !== c.expect.status)
    issues.push(`expected ${c.expect.status}, got ${status}: ${res.body.slice(0, 300)}`);
  if (status < 400) return issues;
  if (!String(res.headers['content-type']).startsWith('application/problem+json'))
    issues.push(`content-type ${String(res.headers['content-type'])}`);
  let body: Record<string, unknown>;
  try {
    body = res.json();
  } catch {
    return [...issues, `body is not JSON: ${res.body.slice(0, 100)}`];
  }
  for (const f of ['type', 'title', 'detail', 'code'])
    if (typeof body[f] !== 'string' || !body[f]) issues.push(`problem field ${f} missing`);
  if (body.status !== status) issues.push(`problem status ${String(body.status)} ≠ ${status}`);
  if (c.expect?.code && body.code !== c.expect.code)
    issues.push(`expected code ${c.expect.code}, got ${String(body.code)}`);
  if (status === 400) {
    const errors = body.errors as { path?: unknown; message?: unknown }[] | undefined;
    if (!Array.isArray(errors) || errors.length === 0) issues.push('400 without errors[]');
    else {
      if (errors.some((e) => typeof e.path !== 'string' || typeof e.message !== 'string'))
        issues.push(`errors[] entry without path/message: ${JSON.stringify(errors).slice(0, 200)}`);
      const want = c.expect?.errorPath;
      if (want && !errors.some((e) => e.path === want))
        issues.push(`no error for ${want}: ${JSON.stringify(errors.map((e) => e.path)).slice(0, 300)}`);
    }
  }
  return issues;
}

async function run(cases: Case[]): Promise<string[]> {
  const failures: string[] = [];
  for (const c of cases) {
    const res = await h.app.inject(c.req);
    for (const issue of contractIssues(c, res))
      failures.push(`${c.req.method} ${c.req.url.slice(0, 80)} — ${c.name}: ${issue}`);
  }
  return failures;
}

// ---------------------------------------------------------------------------------------------

/**
 * One account with a visible poll, a slide, a dry-run preview, a webhook with a (test event)
 * delivery and a member with a key to aim at; the routes from the document.
 */
async function setup(): Promise<void> {
  h = await harness();
  acme = await h.account();
  const poll = await h.app.inject({
    method: 'POST',
    url: '/poll',
    headers: bearer(acme.key),
    payload: { accountId: acme.accountId, title: 'Target' },
  });
  const pollId = poll.json().data.id as string;
  const slide = await h.app.inject({
    method: 'POST',
    url: '/slide',
    headers: bearer(acme.key),
    payload: { pollId, type: 'question', title: 'Q', answers: [{ title: 'x' }] },
  });
  await h.app.inject({
    method: 'POST',
    url: '/poll/update',
    headers: bearer(acme.key),
    payload: { pollId, isVisible: true },
  });
  const preview = await h.app.inject({
    method: 'POST',
    url: '/poll',
    headers: bearer(acme.key),
    payload: { accountId: acme.accountId, title: 'Preview', dryRun: true },
  });
  const hook = await h.app.inject({
    method: 'POST',
    url: '/webhooks',
    headers: bearer(acme.key),
    payload: { pollId, url: 'https://hooks.example.com/malformed', deliveryRule: 'partial' },
  });
  const webhookId = hook.json().data.id as string;
  const delivery = await h.app.inject({
    method: 'POST',
    url: '/webhooks/test',
    headers: bearer(acme.key),
    payload: { webhookId },
  });
  const memberEmail = 'malformed-member@example.com';
  const memberKey = await h.member(acme.accountId, 'editor', memberEmail);
  const found = await h.deps.store.keys.findByHash(hashApiKey(memberKey));
  ids = {
    pollId,
    slideId: slide.json().data.id,
    previewId: preview.json().data.id,
    webhookId,
    deliveryId: delivery.json().data.id,
    keyId: found!.keyId,
    memberEmail,
  };

  const doc = (await h.app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, Operation>>;
  };
  routes = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      routes.push(route(method.toUpperCase() as InjectMethod, path.replace(/\{[^}]+\}/g, 'x'), op));
    }
  }
  // The respondent route answers without a key; cover it even if it is left out of the document.
  if (
    h.app.hasRoute({ method: RESPONDENT.method, url: RESPONDENT.path }) &&
    !routes.some((r) => r.path === RESPONDENT.path && r.method === RESPONDENT.method)
  ) {
    const answers = {
      type: 'object',
      required: ['slideId', 'value'],
      properties: { slideId: { type: 'string' }, value: { type: 'string' } },
    };
    routes.push(
      route(RESPONDENT.method, RESPONDENT.path, {
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['pollId', 'answers'],
                properties: { pollId: { type: 'string' }, answers: { type: 'array', minItems: 1, items: answers } },
              },
            },
          },
        },
        security: [],
      }),
    );
  }
}

// At collection time, so that each route gets tests of its own.
await setup();
afterAll(() => h?.close());

function route(method: InjectMethod, path: string, op: Operation): Route {
  return {
    method,
    path,
    op,
    body: op.requestBody?.content?.['application/json']?.schema,
    query: (op.parameters ?? []).filter((p) => p.in === 'query'),
    isPublic:
      (Array.isArray(op.security) && op.security.length === 0) ||
      (path === RESPONDENT.path && method === RESPONDENT.method),
  };
}

describe('the route table', () => {
  it('comes from /openapi.json and holds the poll, slide, account, webhook and key routes', () => {
    const names = routes.map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      'POST /poll',
      'POST /survey',
      'POST /commit',
      'GET /poll',
      'GET /polls',
      'POST /poll/update',
      'DELETE /poll',
      'POST /research/start',
      'GET /poll/translations',
      'POST /poll/translations/update',
      'POST /slide',
      'GET /slides',
      'POST /slide/update',
      'DELETE /slide',
      'GET /accounts',
      'GET /account/settings',
      'PATCH /account/settings',
      'POST /webhooks/update',
      'POST /webhooks/delivery/resend',
      'POST /webhooks/recover',
      'POST /webhooks/test',
      'GET /webhooks/deliveries',
      'GET /keys',
      'POST /keys',
      'DELETE /keys',
      'DELETE /members',
    ]) {
      expect(names).toContain(expected);
    }
  });

  it('generates a base request for every route that gets past validation, alone and with each optional parameter', async () => {
    // Past validation: state may still answer (a missing id 404, a delivery on its way 409).
    const failures: string[] = [];
    for (const r of routes) {
      const base = baseQuery(r);
      const optional = r.query.filter((p) => !base.some(([k]) => k === p.name));
      for (const query of [
        base,
        ...optional.map((p): [string, string][] => [...base, [p.name, String(sample(p.schema, p.name, r.method))]]),
      ]) {
        const u = url(r.path, query);
        const res = await h.app.inject(
          r.body
            ? { method: r.method, url: u, headers: json(acme.key), payload: JSON.stringify(baseBody(r)) }
            : { method: r.method, url: u, headers: bearer(acme.key) },
        );
        if (res.statusCode >= 500 || [400, 401, 413, 415].includes(res.statusCode))
          failures.push(`${r.method} ${u}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

const SLOW = 120_000;

describe('no input produces a 500', () => {
  for (const r of routes) {
    describe(`${r.method} ${r.path}`, () => {
      if (r.body) {
        it(
          'bodies: wrong types, missing fields, huge and odd strings, deep nesting, unknown keys, bad JSON, sizes, content types',
          async () => {
            expect(await run(bodyCases(r))).toEqual([]);
          },
          SLOW,
        );
      } else {
        it(
          'bodies it does not take',
          async () => {
            const u = url(r.path, baseQuery(r));
            const cases: Case[] = [];
            for (const [ct, payload] of [
              ['application/json', '{"a":'],
              ['application/json', deep(10_000, 'array')],
              ['application/json', JSON.stringify({ x: 'x'.repeat(1024 * 1024 + 1) })],
              ['text/plain', 'hello'],
              ['application/x-www-form-urlencoded', 'a=b'],
            ])
              cases.push({
                name: `${ct} body`,
                req: {
                  method: r.method,
                  url: u,
                  headers: { ...bearer(acme.key), 'content-type': ct! },
                  payload: payload!,
                },
              });
            expect(await run(cases)).toEqual([]);
          },
          SLOW,
        );
      }
      it(
        'query strings: repeated, bracketed, overlong, unicode and NUL values, prototype keys',
        async () => {
          expect(await run(queryCases(r))).toEqual([]);
        },
        SLOW,
      );
    });
  }

  it('leaves Object.prototype alone', () => {
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('the request path', () => {
  it('a path that is not valid percent-encoding is a 400 problem that does not echo it', async () => {
    for (const url of ['/polls%E0%A4%A?accountId=x', '/participant/responses%FF', '/app/%E0%A4%A', '/poll%2']) {
      const res = await h.app.inject({ method: 'GET', url, headers: bearer(acme.key) });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ path: 'url' }] });
      expect(res.body).not.toContain('%E0');
    }
  });
});

describe('body encoding', () => {
  const post = (payload: Buffer | string, contentType = 'application/json') =>
    h.app.inject({
      method: 'POST',
      url: '/poll',
      headers: { ...bearer(acme.key), 'content-type': contentType },
      payload,
    });
  const body = (title: string) => JSON.stringify({ accountId: acme.accountId, title });

  it('a route that takes no body ignores an empty one sent as JSON, as clients that always send the header do', async () => {
    const json = { ...bearer(acme.key), 'content-type': 'application/json' };
    const listed = await h.app.inject({ method: 'GET', url: `/polls?accountId=${acme.accountId}`, headers: json });
    expect(listed.statusCode, listed.body).toBe(200);
    const made = await post(body('To delete'));
    expect(made.statusCode, made.body).toBe(201);
    const pollId = made.json().data.id as string;
    const gone = await h.app.inject({ method: 'DELETE', url: `/poll?pollId=${pollId}`, headers: json, payload: '' });
    expect(gone.statusCode, gone.body).toBe(200);
    expect(gone.json().data).toMatchObject({ id: pollId, deleted: true });
    // A route that takes a body still refuses an empty one.
    const empty = await post('');
    expect(empty.statusCode, empty.body).toBe(400);
    expect(empty.json().code).toBe('validation_failed');
  });

  it('a title with bytes that are not UTF-8 is a 400 naming the body, and nothing is stored', async () => {
    const before = (
      await h.app.inject({ url: `/polls?accountId=${acme.accountId}&limit=100`, headers: bearer(acme.key) })
    ).json().data.length;
    for (const [name, bytes] of Object.entries(NOT_UTF8)) {
      const res = await post(
        Buffer.concat([Buffer.from(`{"accountId":"${acme.accountId}","title":"a`), bytes, Buffer.from('b"}')]),
      );
      expect(
        contractIssues(
          {
            name,
            req: { method: 'POST', url: '/poll' },
            expect: { status: 400, code: 'validation_failed', errorPath: '/' },
          },
          res,
        ),
      ).toEqual([]);
      expect(res.json().detail).toMatch(/UTF-8/);
    }
    const after = (
      await h.app.inject({ url: `/polls?accountId=${acme.accountId}&limit=100`, headers: bearer(acme.key) })
    ).json().data.length;
    expect(after).toBe(before);
  });

  it('a charset other than UTF-8 is a 415, whatever its case or quoting', async () => {
    for (const ct of [
      'application/json; charset=utf-16',
      'application/json; charset=UTF-16BE',
      'application/json;charset="latin1"',
      'application/json; charset=us-ascii',
      'application/json; charset=',
    ]) {
      const res = await post(body('x'), ct);
      expect(
        contractIssues(
          { name: ct, req: { method: 'POST', url: '/poll' }, expect: { status: 415, code: 'unsupported_media_type' } },
          res,
        ),
      ).toEqual([]);
    }
  });

  it('UTF-8 under any spelling, or no charset, is accepted', async () => {
    for (const ct of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'Application/JSON; Charset=UTF8',
      'application/json; charset="utf-8"',
      'application/json;charset=utf-8; foo=bar',
    ]) {
      const res = await post(body('ok'), ct);
      expect(res.statusCode, `${ct}: ${res.body}`).toBe(201);
    }
  });

  it('multi-byte UTF-8 is accepted and stored as sent', async () => {
    const title = 'Grüße, 日本語, 😀🏳️‍🌈';
    const res = await post(Buffer.from(body(title), 'utf8'));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.title).toBe(title);
  });

  it('a leading UTF-8 byte-order mark is skipped', async () => {
    const res = await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body('with a BOM'))]));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.title).toBe('with a BOM');
  });

  it('size, emptiness, bad JSON and prototype keys are answered as before', async () => {
    const cases: [Buffer | string, number, string][] = [
      [Buffer.concat([Buffer.from(body('x'.repeat(1024 * 1024))), Buffer.from([0xff])]), 413, 'payload_too_large'],
      ['', 400, 'validation_failed'],
      ['{"title": "a', 400, 'validation_failed'],
      [body('x').replace(/^{/, '{"__proto__":{"polluted":true},'), 400, 'validation_failed'],
      [body('x').replace(/^{/, '{"constructor":{"prototype":{"polluted":true}},'), 400, 'validation_failed'],
    ];
    for (const [payload, status, code] of cases) {
      const res = await post(payload);
      expect(
        contractIssues(
          { name: String(payload).slice(0, 40), req: { method: 'POST', url: '/poll' }, expect: { status, code } },
          res,
        ),
      ).toEqual([]);
    }
    expect(Object.prototype).not.toHaveProperty('polluted');
  });
});

describe('authentication comes first', () => {
  it(
    'answers 401 problems to every non-public route without a usable key',
    async () => {
      const cases: Case[] = [];
      const headersList: [string, Record<string, string>][] = [
        ['no key', {}],
        ['unknown key', bearer('cvk_' + 'A'.repeat(32))],
        ['malformed key', bearer('not-a-key')],
        ['Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
        ['empty Bearer', { authorization: 'Bearer ' }],
        ['10 KB key', bearer('cvk_' + 'A'.repeat(10 * KB))],
        ['unicode key', { authorization: 'Bearer cvk_\u00e9\u00e9' }],
      ];
      for (const r of routes.filter((x) => !x.isPublic)) {
        for (const [name, headers] of headersList) {
          // Bad bodies too: authentication answers before the body is looked at.
          for (const payload of r.body
            ? [JSON.stringify(baseBody(r)), '{"bad json', JSON.stringify({ x: 'x'.repeat(1024 * 1024 + 1) })]
            : [undefined]) {
            const req: Req = {
              method: r.method,
              url: url(r.path, baseQuery(r)),
              headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
            };
            if (payload) req.payload = payload;
            cases.push({ name, req, expect: { status: 401, code: 'unauthenticated' } });
          }
        }
      }
      expect(await run(cases)).toEqual([]);
    },
    SLOW,
  );

  it('a key of a plan below premium gets 403 plan_required, as a problem', async () => {
    const free = await h.account({ plan: 'free' });
    const res = await h.app.inject({
      method: 'GET',
      url: `/polls?accountId=${free.accountId}`,
      headers: bearer(free.key),
    });
    expect(
      contractIssues(
        { name: 'free', req: { method: 'GET', url: '/polls' }, expect: { status: 403, code: 'plan_required' } },
        res,
      ),
    ).toEqual([]);
  });

  it('unknown paths answer a 404 problem, with or without a key', async () => {
    for (const headers of [{}, bearer(acme.key)]) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/no/such/route?x=%00',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(
        contractIssues(
          { name: '404', req: { method: 'POST', url: '/no/such/route' }, expect: { status: 404, code: 'not_found' } },
          res,
        ),
      ).toEqual([]);
      // Fastify parses the body before it finds no route: a bad one is a 400 problem, never a 500.
      const bad = await h.app.inject({
        method: 'POST',
        url: '/no/such/route',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: '{"bad',
      });
      expect(contractIssues({ name: '404 bad body', req: { method: 'POST', url: '/no/such/route' } }, bad)).toEqual([]);
    }
  });
});
