import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOKUPS_PER_ADDRESS } from '../../src/http/auth.js';
import { type App } from '../../src/http/app.js';
import { bearer, harness, type Harness, type TestAccount, testApp } from '../support/app.js';

/**
 * Failed authentications count per client address against the per-minute budget, and a client
 * past it is answered 429 before its key is looked up: guessing keys costs no database work.
 */

const BUDGET = 3;
const GUESS = 'cvk_' + 'A'.repeat(32);

let h: Harness;
let acme: TestAccount;
let app: App;
let lookups = 0;
/** Lookups under way now, and the most seen at once. */
let under = 0;
let most = 0;

/** The harness's store, its key lookups counted (lookups, under, most). */
function watchedStore() {
  const keys = h.deps.store.keys;
  return {
    ...h.deps.store,
    keys: {
      ...keys,
      findByHash: async (hash: string) => {
        lookups++;
        most = Math.max(most, ++under);
        try {
          return await keys.findByHash(hash);
        } finally {
          under--;
        }
      },
    },
  };
}

beforeAll(async () => {
  h = await harness();
  acme = await h.account();
  app = await testApp({ deps: { ...h.deps, store: watchedStore() }, logger: false, rateLimitPerMinute: BUDGET });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await h?.close();
});

const get = (key: string | undefined, remoteAddress: string) =>
  app.inject({ url: `/polls?accountId=${acme.accountId}`, headers: key ? bearer(key) : {}, remoteAddress });

describe('failed authentications are rate-limited per address', () => {
  it('answers 401 to the first bad keys, then 429 with Retry-After and no lookup; other addresses and good keys elsewhere are unaffected', async () => {
    for (let i = 0; i < BUDGET; i++) {
      const res = await get(`${GUESS}${i}`, '203.0.113.7');
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json().code).toBe('unauthenticated');
    }
    lookups = 0;
    const over = await get(`${GUESS}x`, '203.0.113.7');
    expect(over.statusCode, over.body).toBe(429);
    expect(over.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(over.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Refused before the key is looked up, whether the key is good or not.
    expect((await get(acme.key, '203.0.113.7')).statusCode).toBe(429);
    expect(lookups).toBe(0);

    // Another address has its own budget.
    const elsewhere = await get(`${GUESS}y`, '198.51.100.9');
    expect(elsewhere.statusCode, elsewhere.body).toBe(401);
    // A valid key from another address is counted per key, as always.
    const good = await get(acme.key, '192.0.2.44');
    expect(good.statusCode, good.body).toBe(200);
  });

  it('counts a public route’s keyed calls per address too, at 16 times the budget: many keys are no larger one', async () => {
    const other = await h.account();
    // Enough keys for the address to run out before they do.
    const keys = await Promise.all(Array.from({ length: 17 }, () => h.member(acme.accountId, 'editor')));
    const poll = (
      await h.app.inject({
        method: 'POST',
        url: '/poll',
        headers: bearer(other.key),
        payload: { accountId: other.accountId, title: 'Public' },
      })
    ).json().data;
    const submit = (key: string, remoteAddress = '203.0.113.9') =>
      app.inject({
        method: 'POST',
        url: '/participant/responses',
        headers: bearer(key),
        payload: { pollId: poll.id, answers: [] },
        remoteAddress,
      });
    const codes = [];
    for (let i = 0; i < 16 * BUDGET; i++) codes.push((await submit(keys[i % 16]!)).statusCode);
    expect(codes).not.toContain(429);
    // A key with its whole budget left is refused from that address, and spends none of it there.
    const fresh = keys[16]!;
    expect((await submit(fresh)).statusCode).toBe(429);
    for (let i = 0; i < BUDGET; i++)
      expect((await submit(fresh, '198.51.100.77')).statusCode, `call ${i}`).not.toBe(429);
  });

  it('counts requests without any key too', async () => {
    for (let i = 0; i < BUDGET; i++) expect((await get(undefined, '203.0.113.8')).statusCode).toBe(401);
    const over = await get(undefined, '203.0.113.8');
    expect(over.statusCode).toBe(429);
    expect(over.json().code).toBe('rate_limited');
  });

  it('counts public calls (no key) from IPv6 by their /64: a new address in the same block is no new budget', async () => {
    const answer = (remoteAddress: string) =>
      app.inject({
        method: 'POST',
        url: '/participant/responses',
        payload: { pollId: 'poll_0000000000000000000000', answers: [] },
        remoteAddress,
      });
    for (let i = 0; i < BUDGET; i++)
      expect((await answer(`2001:db8:7:1::${(i + 1).toString(16)}`)).statusCode).toBe(404);
    const sameBlock = await answer('2001:db8:7:1:ffff:ffff:ffff:ffff');
    expect(sameBlock.statusCode, sameBlock.body).toBe(429);
    expect((await answer('2001:db8:7:2::1')).statusCode).toBe(404);
  });

  it('counts failed authentications by the full address: a neighbour in the same /64 keeps its budget', async () => {
    for (let i = 0; i < BUDGET; i++) expect((await get(`${GUESS}v${i}`, '2001:db8:8:1::1')).statusCode).toBe(401);
    expect((await get(`${GUESS}w`, '2001:db8:8:1::1')).statusCode).toBe(429);
    const neighbour = await get(acme.key, '2001:db8:8:1::2');
    expect(neighbour.statusCode, neighbour.body).toBe(200);
  });

  it('counts failed authentications by the /64 too, with 16 times the budget: rotated addresses still run out', async () => {
    for (let i = 0; i < 16 * BUDGET; i++)
      expect((await get(`${GUESS}r${i}`, `2001:db8:9:1::${(i + 1).toString(16)}`)).statusCode).toBe(401);
    lookups = 0;
    expect((await get(`${GUESS}r`, '2001:db8:9:1::ffff')).statusCode).toBe(429);
    expect(lookups).toBe(0);
    expect((await get(`${GUESS}r`, '2001:db8:9:2::1')).statusCode).toBe(401);
  });

  it('successful authentications do not spend the address budget', async () => {
    const key = await h.member(acme.accountId, 'read_only');
    for (let i = 0; i < BUDGET; i++) expect((await get(key, '203.0.113.9')).statusCode).toBe(200);
    // The key is now at its own budget; the address may still fail as often as the budget allows.
    for (let i = 0; i < BUDGET; i++) expect((await get(`${GUESS}z${i}`, '203.0.113.9')).statusCode).toBe(401);
  });

  it('looks up guesses sent at once a few at a time, so a burst passes the budget by LOOKUPS_PER_ADDRESS at most', async () => {
    lookups = 0;
    most = 0;
    const codes = (await Promise.all(Array.from({ length: 200 }, (_, i) => get(`${GUESS}b${i}`, '203.0.113.60')))).map(
      (r) => r.statusCode,
    );
    expect(most).toBeLessThanOrEqual(LOOKUPS_PER_ADDRESS);
    expect(lookups).toBeLessThanOrEqual(BUDGET + LOOKUPS_PER_ADDRESS);
    expect(codes.filter((c) => c === 401)).toHaveLength(lookups);
    expect(codes.filter((c) => c === 429)).toHaveLength(200 - lookups);
  });
});

describe('keys sent at once from one address', () => {
  let roomy: App;
  beforeAll(async () => {
    roomy = await testApp({ deps: { ...h.deps, store: watchedStore() }, logger: false, rateLimitPerMinute: 100_000 });
    await roomy.ready();
  });
  afterAll(() => roomy?.close());

  it('are all answered, LOOKUPS_PER_ADDRESS looked up at a time (a proxy’s clients share one address)', async () => {
    most = 0;
    const all = await Promise.all(
      Array.from({ length: 150 }, () =>
        roomy.inject({
          url: `/polls?accountId=${acme.accountId}`,
          headers: bearer(acme.key),
          remoteAddress: '198.51.100.80',
        }),
      ),
    );
    expect(all.map((r) => r.statusCode)).toEqual(all.map(() => 200));
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(LOOKUPS_PER_ADDRESS);
  });

  it('past 1,024 waiting for their turn, are refused at once with 429 and Retry-After: 1; those waiting are answered', async () => {
    // Lookups held until the gate opens: LOOKUPS_PER_ADDRESS under way, the rest waiting their turn.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const keys = h.deps.store.keys;
    let held = 0;
    const gated = await testApp({
      deps: {
        ...h.deps,
        store: {
          ...h.deps.store,
          keys: { ...keys, findByHash: async (hash: string) => (held++, await gate, keys.findByHash(hash)) },
        },
      },
      logger: false,
      rateLimitPerMinute: 100_000,
    });
    try {
      await gated.ready();
      const over = 10;
      const sent = Array.from({ length: LOOKUPS_PER_ADDRESS + 1_024 + over }, () =>
        gated.inject({
          url: `/polls?accountId=${acme.accountId}`,
          headers: bearer(acme.key),
          remoteAddress: '198.51.100.81',
        }),
      );
      const refused: { statusCode: number; headers: Record<string, unknown> }[] = [];
      for (const p of sent) void p.then((r) => r.statusCode === 429 && refused.push(r));
      await expect.poll(() => refused.length, { timeout: 10_000 }).toBe(over);
      expect(held).toBe(LOOKUPS_PER_ADDRESS);
      for (const r of refused) expect(r.headers['retry-after']).toBe('1');
      open();
      const all = await Promise.all(sent);
      expect(all.filter((r) => r.statusCode === 200)).toHaveLength(LOOKUPS_PER_ADDRESS + 1_024);
      expect(all.filter((r) => r.statusCode === 429)).toHaveLength(over);
    } finally {
      open();
      await gated.close();
    }
  });
});
