import type { LookupAddress } from 'node:dns';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createH1Sender } from '../../src/infra/http-sender/h1-sender.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import { answer, visiblePoll } from '../support/fixtures.js';
import { startReceiver } from '../support/receiver.js';
import { startTestWorker } from '../support/worker.js';

/**
 * SSRF (invalid_url when saved, blocked_address when delivered): a webhook or logic URL must reach a public address.
 * Every notation of loopback, private, link-local, metadata, unspecified, multicast and reserved
 * addresses is refused when the URL is saved, through every route that saves one; a name that
 * resolves to such an address (a test resolver stands in for DNS) is refused too; and a name
 * that resolves late, or rebinds after it was saved, is refused at delivery, on the address the
 * connection would use, before a single byte is sent.
 */

// ---------------------------------------------------------------------------------------------
// The corpus: literal forms, refused by syntax and address alone

const LITERALS: [why: string, url: string][] = [
  // IPv4 loopback, every notation WHATWG parsing accepts
  ['loopback', 'https://127.0.0.1/'],
  ['loopback, odd port', 'https://127.0.0.1:8443/hook'],
  ['loopback, last of 127/8, port 1', 'https://127.255.255.254:1/'],
  ['loopback short a.b', 'https://127.1/'],
  ['loopback short a.b.c', 'https://127.0.1/'],
  ['loopback decimal', 'https://2130706433/'],
  ['loopback hex', 'https://0x7f000001/'],
  ['loopback hex parts, upper case', 'https://0X7F.0.0.1/'],
  ['loopback octal parts', 'https://0177.0.0.1/'],
  ['loopback octal whole', 'https://017700000001/'],
  ['loopback octal short', 'https://0177.1/'],
  ['loopback zero-padded parts', 'https://127.000.000.001/'],
  ['loopback with a trailing dot', 'https://127.0.0.1./'],
  ['loopback percent-encoded', 'https://%31%32%37.0.0.1/'],
  ['loopback fullwidth digits', 'https://１２７.０.０.１/'],
  ['loopback, upper-case scheme, port 443', 'HTTPS://127.0.0.1:443/'],
  ['loopback behind spaces and a tab', ' https://127.0.0.\t1/ '],
  // IPv6 loopback
  ['v6 loopback', 'https://[::1]/'],
  ['v6 loopback, odd port', 'https://[::1]:8443/'],
  ['v6 loopback, full form', 'https://[0:0:0:0:0:0:0:1]/'],
  ['v6 loopback, zero-padded', 'https://[0000:0000:0000:0000:0000:0000:0000:0001]/'],
  ['v4-mapped loopback', 'https://[::ffff:127.0.0.1]/'],
  ['v4-mapped loopback in hex', 'https://[::ffff:7f00:1]/'],
  ['v4-compatible loopback', 'https://[::127.0.0.1]/'],
  ['NAT64 loopback', 'https://[64:ff9b::127.0.0.1]/'],
  ['6to4 loopback', 'https://[2002:7f00:1::]/'],
  // unspecified
  ['unspecified', 'https://0.0.0.0/'],
  ['unspecified, bare 0', 'https://0/'],
  ['unspecified hex', 'https://0x0/'],
  ['v6 unspecified', 'https://[::]/'],
  ['v6 unspecified, port', 'https://[::]:8443/'],
  ['v4-mapped unspecified', 'https://[::ffff:0.0.0.0]/'],
  // private
  ['10/8', 'https://10.0.0.1/'],
  ['10/8 short', 'https://10.1/'],
  ['10/8 hex', 'https://0xa000001/'],
  ['172.16/12', 'https://172.16.0.1/'],
  ['172.16/12 top, port 65535', 'https://172.31.255.254:65535/'],
  ['192.168/16', 'https://192.168.0.1/'],
  ['192.168/16 decimal', 'https://3232235777/'],
  ['carrier-grade NAT', 'https://100.64.0.1/'],
  ['v4-mapped 10/8', 'https://[::ffff:10.0.0.1]/'],
  ['v4-mapped 192.168 in hex', 'https://[::ffff:c0a8:101]/'],
  ['v6 unique local fc', 'https://[fc00::1]/'],
  ['v6 unique local fd', 'https://[fd12:3456:789a::1]/'],
  ['v6 unique local, upper case', 'https://[FD00::1]/'],
  // link-local and cloud metadata
  ['metadata', 'https://169.254.169.254/latest/meta-data/'],
  ['metadata, port 80', 'https://169.254.169.254:80/'],
  ['metadata decimal', 'https://2852039166/'],
  ['metadata hex', 'https://0xA9FEA9FE/'],
  ['metadata hex parts', 'https://0xa9.0xfe.0xa9.0xfe/'],
  ['metadata octal parts', 'https://0251.0376.0251.0376/'],
  ['metadata a.b.c form', 'https://169.254.43518/'],
  ['v4-mapped metadata', 'https://[::ffff:169.254.169.254]/'],
  ['v4-mapped metadata in hex', 'https://[::ffff:a9fe:a9fe]/'],
  ['6to4 metadata', 'https://[2002:a9fe:a9fe::1]/'],
  ['NAT64 metadata', 'https://[64:ff9b::a9fe:a9fe]/'],
  ['AWS v6 metadata', 'https://[fd00:ec2::254]/'],
  ['Alibaba metadata', 'https://100.100.100.200/'],
  ['v6 link-local', 'https://[fe80::1]/'],
  ['v6 link-local, upper case', 'https://[FE80::A9FE:A9FE]/'],
  ['v6 site-local (deprecated)', 'https://[fec0::1]/'],
  // multicast, broadcast, reserved, documentation
  ['multicast', 'https://224.0.0.1/'],
  ['broadcast', 'https://255.255.255.255/'],
  ['reserved 240/4', 'https://240.0.0.1/'],
  ['v6 multicast', 'https://[ff02::1]/'],
  ['TEST-NET-1', 'https://192.0.2.1/'],
  ['v6 documentation', 'https://[2001:db8::1]/'],
  ['v6 documentation 3fff::/20', 'https://[3fff::1]/'],
  ['v6 documentation 3fff::/20, last address', 'https://[3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff]/'],
  ['v6 discard-only', 'https://[100::1]/'],
  ['v6 local-use NAT64 of a public address', 'https://[64:ff9b:1::808:808]/'],
  ['v6 SRv6 SIDs', 'https://[5f00::1]/'],
  ['benchmarking 198.18/15', 'https://198.18.0.1/'],
  ['Teredo', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/'],
  // names that are loopback or internal by themselves
  ['localhost', 'https://localhost/'],
  ['localhost, upper case, odd port', 'https://LOCALHOST:8443/'],
  ['localhost with a trailing dot, mixed case', 'https://LocalHost./'],
  ['*.localhost', 'https://api.localhost/'],
  ['localhost in circled letters (IDNA maps it)', 'https://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/'],
  ['localhost percent-encoded', 'https://loc%61lhost/'],
  ['localhost.localdomain', 'https://localhost.localdomain/'],
  ['GCP metadata name', 'https://metadata.google.internal/computeMetadata/v1/'],
  ['GCP metadata name, trailing dot', 'https://metadata.google.internal./'],
  ['mDNS *.local', 'https://printer.local/'],
  ['home.arpa', 'https://router.home.arpa/'],
  ['single label', 'https://intranet/'],
  // parser confusion
  ['userinfo before a private host', 'https://hooks.example.com@127.0.0.1/'],
  ['backslash after a private host', 'https://127.0.0.1\\@hooks.example.com/'],
  ['fragment after a private host', 'https://127.0.0.1#@hooks.example.com/'],
  ['plain http to metadata', 'http://169.254.169.254/'],
  // a port nothing can connect to
  ['port 0 on a public name', 'https://hooks.example.com:0/'],
  ['port 0 on a public address', 'https://8.8.8.8:0/'],
  ['port 0 on a public v6 address', 'https://[2606:4700:4700::1111]:0/'],
];

/** Public targets: accepted, so the refusals above come from the address and not from the route. */
const PUBLIC = [
  'https://hooks.example.com/ok',
  'https://8.8.8.8/ok',
  'https://93.184.216.34:8443/ok',
  'https://[2606:4700:4700::1111]/ok',
  'https://[::ffff:8.8.8.8]/ok',
];

// ---------------------------------------------------------------------------------------------
// Names, through a test resolver

/** What the test "DNS" answers at save time; a name not listed does not resolve. */
const SAVE_TIME: Record<string, string[]> = {
  'loopback.example.com': ['127.0.0.1'],
  'loopback-other.example.com': ['127.53.0.1'],
  'v6-loopback.example.com': ['::1'],
  'metadata.example.com': ['169.254.169.254'],
  'metadata-v6.example.com': ['fd00:ec2::254'],
  'ten.example.com': ['10.0.0.1'],
  'one-seven-two.example.com': ['172.16.5.4'],
  'one-nine-two.example.com': ['192.168.1.1'],
  'cgnat.example.com': ['100.64.0.1'],
  'unspecified.example.com': ['0.0.0.0'],
  'unspecified-v6.example.com': ['::'],
  'link-local-v6.example.com': ['fe80::1'],
  'ula.example.com': ['fc00::1'],
  'mapped.example.com': ['::ffff:127.0.0.1'],
  'mapped-hex.example.com': ['::ffff:a9fe:a9fe'],
  'nat64.example.com': ['64:ff9b::7f00:1'],
  'multicast.example.com': ['224.0.0.1'],
  'broadcast.example.com': ['255.255.255.255'],
  'v6-documentation.example.com': ['3fff::1'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.1'],
  'mixed-v6.example.com': ['2606:4700::1', '::1'],
  '127.0.0.1.nip.io': ['127.0.0.1'],
  'xn--bcher-kva.example': ['127.0.0.1'],
  'public.example.com': ['93.184.216.34'],
  'public-v6.example.com': ['2606:4700:4700::1111'],
  // Delivery-time cases: public (or nothing) when saved, private when delivered.
  'rebind.test': ['93.184.216.34'],
  'rebind-dot.test': ['93.184.216.34'],
  'v6.rebind.test': ['93.184.216.34'],
  'meta.rebind.test': ['93.184.216.34'],
  'ten.rebind.test': ['93.184.216.34'],
  'mapped.rebind.test': ['93.184.216.34'],
  'zero.rebind.test': ['93.184.216.34'],
  'mixed.rebind.test': ['93.184.216.34'],
  'doc-v6.rebind.test': ['93.184.216.34'],
};

const NAMES: [why: string, url: string][] = [
  ['name → loopback', 'https://loopback.example.com/'],
  ['name → loopback, upper case', 'https://LOOPBACK.Example.COM/hook'],
  ['name → loopback, trailing dot', 'https://loopback.example.com./'],
  ['name → loopback, trailing dot, mixed case, odd port', 'https://Loopback.Example.Com.:8443/'],
  ['name → other address in 127/8', 'https://loopback-other.example.com/'],
  ['name → ::1', 'https://v6-loopback.example.com/'],
  ['name → metadata', 'https://metadata.example.com/latest/meta-data/'],
  ['name → metadata, port 80', 'https://metadata.example.com:80/'],
  ['name → AWS v6 metadata', 'https://metadata-v6.example.com/'],
  ['name → 10/8', 'https://ten.example.com/'],
  ['name → 172.16/12', 'https://one-seven-two.example.com/'],
  ['name → 192.168/16', 'https://one-nine-two.example.com/'],
  ['name → carrier-grade NAT', 'https://cgnat.example.com/'],
  ['name → 0.0.0.0', 'https://unspecified.example.com/'],
  ['name → ::', 'https://unspecified-v6.example.com/'],
  ['name → fe80::1', 'https://link-local-v6.example.com/'],
  ['name → unique local', 'https://ula.example.com/'],
  ['name → v4-mapped loopback', 'https://mapped.example.com/'],
  ['name → v4-mapped metadata in hex', 'https://mapped-hex.example.com/'],
  ['name → NAT64 loopback', 'https://nat64.example.com/'],
  ['name → multicast', 'https://multicast.example.com/'],
  ['name → broadcast', 'https://broadcast.example.com/'],
  ['name → v6 documentation 3fff::/20', 'https://v6-documentation.example.com/'],
  ['name → one public and one private address', 'https://mixed.example.com/'],
  ['name → one public and one private v6 address', 'https://mixed-v6.example.com/'],
  ['a nip.io-style name', 'https://127.0.0.1.nip.io/'],
  ['an IDN whose punycode → loopback', 'https://bücher.example/'],
];

/** Accepted: a public answer, or no answer yet (checked again at delivery). */
const NAMES_OK = [
  'https://public.example.com/ok',
  'https://Public.Example.Com./ok',
  'https://public-v6.example.com/ok',
  'https://nowhere.example.com/ok',
];

const norm = (host: string) => host.toLowerCase().replace(/\.$/, '');

function saveTimeResolver(host: string): Promise<string[]> {
  const found = SAVE_TIME[norm(host.replace(/^\[|\]$/g, ''))];
  if (found) return Promise.resolve(found);
  return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
}

// ---------------------------------------------------------------------------------------------

let h: Harness;
let acme: TestAccount;
let pollId: string;
let slidePoll: { pollId: string; q1: string };
const resolved: string[] = [];

type Entry = { name: string; send(url: string): Promise<LightMyRequestResponse>; path: string };
let entries: Entry[];

beforeAll(async () => {
  h = await harness({ delivery: { batchWindowMs: 0 } });
  h.deps.resolveHost = async (host) => {
    resolved.push(host);
    return saveTimeResolver(host);
  };
  acme = await h.account();
  const key = bearer(acme.key);
  pollId = (
    await h.app.inject({
      method: 'POST',
      url: '/poll',
      headers: key,
      payload: { accountId: acme.accountId, title: 'SSRF' },
    })
  ).json().data.id;
  slidePoll = await visiblePoll(h, acme, { title: 'SSRF slides' });
  const rule = (url: string) => ({
    match: 'all',
    conditions: [{ op: 'answered' }],
    action: { type: 'trigger-webhook', url },
  });
  const surveyRule = (url: string) => ({ on: 'complete', action: { type: 'trigger-webhook', url } });
  const post = (method: 'POST', url: string, payload: unknown) =>
    h.app.inject({ method, url, headers: key, payload: payload as Record<string, unknown> });
  entries = [
    {
      name: 'POST /webhooks',
      path: '/url',
      send: (url) => post('POST', '/webhooks', { pollId, url, deliveryRule: 'partial' }),
    },
    {
      name: 'POST /slide (question logic)',
      path: '/logic/0/action/url',
      send: (url) => post('POST', '/slide', { pollId, type: 'short-answer', title: 'Q', logic: [rule(url)] }),
    },
    {
      name: 'POST /slide/update (question logic)',
      path: '/logic/0/action/url',
      send: (url) => post('POST', '/slide/update', { slideId: slidePoll.q1, logic: [rule(url)] }),
    },
    {
      name: 'POST /poll (survey action logic)',
      path: '/actionLogic/0/action/url',
      send: (url) => post('POST', '/poll', { accountId: acme.accountId, title: 'P', actionLogic: [surveyRule(url)] }),
    },
    {
      name: 'POST /poll/update (survey action logic)',
      path: '/actionLogic/0/action/url',
      send: (url) => post('POST', '/poll/update', { pollId: slidePoll.pollId, actionLogic: [surveyRule(url)] }),
    },
  ];
});
afterAll(() => h?.close());

/** Why a refused answer is not the expected 400 invalid_url problem naming the field. */
function refusalIssue(res: LightMyRequestResponse, path: string): string | undefined {
  if (res.statusCode !== 400) return `${res.statusCode}: ${res.body.slice(0, 200)}`;
  const body = res.json() as { code?: string; errors?: { path: string }[] };
  if (!String(res.headers['content-type']).startsWith('application/problem+json'))
    return `content-type ${String(res.headers['content-type'])}`;
  if (body.code !== 'invalid_url') return `code ${String(body.code)}: ${res.body.slice(0, 200)}`;
  if (body.errors?.[0]?.path !== path) return `error path ${JSON.stringify(body.errors)}`;
  return undefined;
}

async function stored(): Promise<string> {
  const key = bearer(acme.key);
  const hooks = (await h.app.inject({ url: `/webhooks?pollId=${pollId}&limit=100`, headers: key })).json();
  const slides = (await h.app.inject({ url: `/slides?pollId=${pollId}`, headers: key })).json();
  const polls = (await h.app.inject({ url: `/polls?accountId=${acme.accountId}&limit=100`, headers: key })).json();
  const slidePollNow = (await h.app.inject({ url: `/poll?pollId=${slidePoll.pollId}`, headers: key })).json();
  return JSON.stringify([hooks, slides, polls, slidePollNow]);
}

describe('at creation: literal forms', () => {
  it(`the corpus holds at least 40 distinct forms (${LITERALS.length} literals, ${NAMES.length} names)`, () => {
    expect(new Set(LITERALS.map(([, u]) => u)).size).toBe(LITERALS.length);
    expect(LITERALS.length).toBeGreaterThanOrEqual(40);
    expect(NAMES.length).toBeGreaterThanOrEqual(20);
  });

  it('every form is refused with 400 invalid_url by every route that saves a URL, and nothing is saved', async () => {
    const before = await stored();
    const failures: string[] = [];
    for (const e of entries) {
      for (const [why, url] of LITERALS) {
        const issue = refusalIssue(await e.send(url), e.path);
        if (issue) failures.push(`${e.name} ${why} ${JSON.stringify(url)}: ${issue}`);
      }
    }
    expect(failures).toEqual([]);
    expect(await stored()).toBe(before);
  });

  it('public targets are accepted by the same routes (the refusals come from the address)', async () => {
    for (const e of entries) {
      for (const url of PUBLIC) {
        const res = await e.send(url);
        expect(res.statusCode, `${e.name} ${url}: ${res.body}`).toBeLessThan(300);
      }
    }
  });
});

describe('at creation: names, through the test resolver', () => {
  it('a name that resolves to a non-public address is refused with 400 invalid_url by every route, without the address', async () => {
    const before = await stored();
    const failures: string[] = [];
    for (const e of entries) {
      for (const [why, url] of NAMES) {
        resolved.length = 0;
        const res = await e.send(url);
        const issue = refusalIssue(res, e.path);
        if (issue) failures.push(`${e.name} ${why} ${url}: ${issue}`);
        else if (!resolved.length) failures.push(`${e.name} ${why}: refused without asking the resolver`);
        else {
          // The resolver's answer would map internal names for whoever may save a URL.
          const host = norm(new URL(url).hostname);
          // (A nip.io-style name spells its address: the name itself may be quoted.)
          const told = SAVE_TIME[host]!.find((a) => res.body.split(host).join('').includes(a));
          if (told) failures.push(`${e.name} ${why}: the problem tells the address ${told}: ${res.body.slice(0, 200)}`);
          else if (!res.body.includes('non-public address'))
            failures.push(`${e.name} ${why}: the problem does not say why: ${res.body.slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(await stored()).toBe(before);
  });

  it('a name that resolves to public addresses only, or not yet at all, is accepted', async () => {
    for (const e of entries) {
      for (const url of NAMES_OK) {
        resolved.length = 0;
        const res = await e.send(url);
        expect(res.statusCode, `${e.name} ${url}: ${res.body}`).toBeLessThan(300);
        expect(resolved.map(norm)).toContain(norm(new URL(url).hostname));
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Delivery time: the name resolves to somewhere else than when it was saved

/** What the test "DNS" answers at delivery time. */
const DELIVERY_TIME: Record<string, LookupAddress[]> = {
  // The one name the test certificate holds: were it let through, the receiver would answer 200.
  'receiver.test': [{ address: '127.0.0.1', family: 4 }],
  'late.test': [{ address: '127.0.0.1', family: 4 }],
  'late-logic.test': [{ address: '127.0.0.1', family: 4 }],
  'rebind.test': [{ address: '127.0.0.1', family: 4 }],
  'rebind-dot.test': [{ address: '127.0.0.1', family: 4 }],
  'v6.rebind.test': [{ address: '::1', family: 6 }],
  'meta.rebind.test': [{ address: '169.254.169.254', family: 4 }],
  'ten.rebind.test': [{ address: '10.0.0.1', family: 4 }],
  'mapped.rebind.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'zero.rebind.test': [{ address: '0.0.0.0', family: 4 }],
  'mixed.rebind.test': [
    { address: '10.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ],
  'doc-v6.rebind.test': [{ address: '3fff::1', family: 6 }],
};

describe('at delivery: names that resolve late or rebind', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const lookups: string[] = [];
  const resolver = async (hostname: string): Promise<LookupAddress[]> => {
    lookups.push(hostname);
    const found = DELIVERY_TIME[norm(hostname)];
    if (found) return found;
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  };

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver?.close());

  it('the sender alone: with private targets allowed the rebound name reaches the receiver; without, it is blocked before connecting', async () => {
    const url = `https://receiver.test:${receiver.port}/direct`;
    const req = { url, body: '{}', headers: { 'content-type': 'application/json' }, timeoutMs: 5_000 };
    const open = createH1Sender({ allowPrivateTargets: true, resolver });
    const guarded = createH1Sender({ allowPrivateTargets: false, resolver });
    try {
      expect((await open.send(req)).outcome).toEqual({ kind: 'response', statusCode: 200 });
      expect(receiver.received.filter((r) => r.path === '/direct')).toHaveLength(1);
      for (const host of Object.keys(DELIVERY_TIME)) {
        lookups.length = 0;
        const sent = await guarded.send({ ...req, url: `https://${host}:${receiver.port}/direct` });
        expect(sent.outcome, host).toEqual({ kind: 'error', error: 'blocked_address' });
        expect(lookups, host).toEqual([host]);
      }
      expect(receiver.received.filter((r) => r.path === '/direct')).toHaveLength(1);
    } finally {
      await open.close();
      await guarded.close();
    }
  });

  it('the sender alone: a private literal address is blocked without a lookup, and an unparsable URL is an attempt error in either mode', async () => {
    const req = { url: '', body: '{}', headers: { 'content-type': 'application/json' }, timeoutMs: 5_000 };
    const open = createH1Sender({ allowPrivateTargets: true, resolver });
    const guarded = createH1Sender({ allowPrivateTargets: false, resolver });
    try {
      lookups.length = 0;
      expect((await guarded.send({ ...req, url: 'https://10.1.2.3/x' })).outcome).toEqual({
        kind: 'error',
        error: 'blocked_address',
      });
      expect((await guarded.send({ ...req, url: 'https://[::1]/x' })).outcome).toEqual({
        kind: 'error',
        error: 'blocked_address',
      });
      expect((await guarded.send({ ...req, url: 'https://[3fff::1]/x' })).outcome).toEqual({
        kind: 'error',
        error: 'blocked_address',
      });
      // Port 0 can never be connected to, whatever the address and in either mode.
      for (const sender of [open, guarded]) {
        for (const url of ['https://receiver.test:0/x', 'https://8.8.8.8:0/x', 'https://[2606:4700:4700::1111]:0/x']) {
          expect((await sender.send({ ...req, url })).outcome, url).toEqual({
            kind: 'error',
            error: 'blocked_address',
          });
        }
      }
      expect(lookups).toEqual([]);
      for (const sender of [open, guarded]) {
        const sent = sender.send({ ...req, url: 'not a url' });
        expect(sent).toBeInstanceOf(Promise);
        expect((await sent).outcome).toEqual({ kind: 'error', error: 'network' });
      }
    } finally {
      await open.close();
      await guarded.close();
    }
  });

  it('saved webhooks and a logic URL whose names now resolve privately: one attempt, error blocked_address, status rejected, nothing received', async () => {
    // A real clock: the worker's lease and due times must line up with wall time.
    h.deps.clock = { now: () => new Date() };
    const key = bearer(acme.key);
    const port = receiver.port;
    const poll = await visiblePoll(h, acme, { title: 'Rebinding' });
    // receiver.test does not resolve when the first webhook is saved, and resolves publicly for the second.
    const hosts = [
      'receiver.test',
      'RECEIVER.test',
      'late.test',
      'rebind.test',
      'Rebind-Dot.TEST.',
      'v6.rebind.test',
      'meta.rebind.test',
      'ten.rebind.test',
      'mapped.rebind.test',
      'zero.rebind.test',
      'mixed.rebind.test',
      'doc-v6.rebind.test',
    ];
    const hooks: string[] = [];
    for (const [i, host] of hosts.entries()) {
      if (i === 1) SAVE_TIME['receiver.test'] = ['93.184.216.34'];
      resolved.length = 0;
      const res = await h.app.inject({
        method: 'POST',
        url: '/webhooks',
        headers: key,
        payload: { pollId: poll.pollId, url: `https://${host}:${port}/late`, deliveryRule: 'partial' },
      });
      expect(res.statusCode, `${host}: ${res.body}`).toBe(201);
      // The save-time check did run, and saw a public address or none.
      expect(resolved.map(norm)).toEqual([norm(host)]);
      hooks.push(res.json().data.id);
    }
    const logic = await h.app.inject({
      method: 'POST',
      url: '/slide/update',
      headers: key,
      payload: {
        slideId: poll.q1,
        logic: [
          {
            match: 'all',
            conditions: [{ op: 'answered' }],
            action: { type: 'trigger-webhook', url: `https://late-logic.test:${port}/logic` },
          },
        ],
      },
    });
    expect(logic.statusCode, logic.body).toBe(200);

    const before = receiver.received.length;
    lookups.length = 0;
    const worker = startTestWorker(h.deps, { allowPrivateTargets: false, resolver });
    try {
      await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'rebinding' }] });
      const deadline = Date.now() + 20_000;
      let list: { id: string; status: string; webhookId: string | null; source: string }[] = [];
      while (Date.now() < deadline) {
        list = (
          await h.app.inject({ url: `/webhooks/deliveries?pollId=${poll.pollId}&limit=100`, headers: key })
        ).json().data;
        if (list.length === hosts.length + 1 && list.every((d) => d.status !== 'pending' && d.status !== 'in_flight'))
          break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(list).toHaveLength(hosts.length + 1);
      expect(list.filter((d) => d.source === 'question-logic')).toHaveLength(1);
      expect(new Set(list.filter((d) => d.webhookId).map((d) => d.webhookId))).toEqual(new Set(hooks));
      const outcomes = [];
      for (const d of list) {
        const detail = (await h.app.inject({ url: `/webhooks/delivery?deliveryId=${d.id}`, headers: key })).json().data;
        outcomes.push({
          url: detail.url as string,
          status: detail.status as string,
          attempts: detail.attempts.map((a: { error: string; statusCode: number | null }) => [a.error, a.statusCode]),
        });
      }
      expect(
        outcomes.filter((o) => o.status !== 'rejected' || JSON.stringify(o.attempts) !== '[["blocked_address",null]]'),
      ).toEqual([]);
      // The check ran on what the names resolve to now, once per delivery.
      expect(new Set(lookups.map(norm))).toEqual(new Set([...hosts.map(norm), 'late-logic.test']));
    } finally {
      await worker.stop();
    }
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received.length).toBe(before);
  });
});
