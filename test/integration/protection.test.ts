import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App } from '../../src/http/app.js';
import { retentionTask } from '../../src/worker/scheduler.js';
import { newId } from '../../src/domain/ids.js';
import { AbortedForAnotherError } from '../../src/app/ports/aborted-for-another.js';
import { isStorageUnavailable } from '../../src/infra/db/unavailable.js';
import { bearer, harness, type Harness, type TestAccount, testApp } from '../support/app.js';
import { onPostgres } from '../support/db.js';
import { seedDelivery, untilSettledOrWaiting } from '../support/races.js';

let h: Harness;
let acme: TestAccount;
let limited: App;

beforeAll(async () => {
  h = await harness();
  acme = await h.account();
  limited = await testApp({ deps: h.deps, logger: false, rateLimitPerMinute: 3 });
  await limited.ready();
});
afterAll(async () => {
  await limited?.close();
  await h?.close();
});

describe('rate limiting', () => {
  it('answers 429 with Retry-After once a key passes its per-minute budget, per key', async () => {
    const get = (key: string) => limited.inject({ url: `/polls?accountId=${acme.accountId}`, headers: bearer(key) });
    for (let i = 0; i < 3; i++) expect((await get(acme.key)).statusCode).toBe(200);
    const over = await get(acme.key);
    expect(over.statusCode).toBe(429);
    expect(over.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(over.json().code).toBe('rate_limited');
    expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const other = await h.member(acme.accountId, 'read_only');
    expect((await get(other)).statusCode).toBe(200);
  });
});

describe('retention', () => {
  it('purges finished deliveries (and their attempts) older than the retention period, keeping pending ones', async () => {
    const db = h.database.db;
    const old = new Date(h.clock.ms - 40 * 86_400_000);
    const base = {
      account_id: acme.accountId,
      poll_id: 'poll_x',
      webhook_id: null,
      endpoint_id: 'e',
      source: 'webhook',
      url: 'https://a.example/',
      participant_id: 'p',
      type: 'submitted-responses',
      body: '{}',
      created_at: old,
    };
    // Ids made at their creation time, as the product makes them: the purge walks ids in time order.
    const [oldDone, newDone, oldPending] = [
      newId('dlv', old.getTime()),
      newId('dlv', old.getTime() + 1),
      newId('dlv', old.getTime() + 2),
    ];
    await db
      .insertInto('deliveries')
      .values([
        { ...base, id: oldDone, status: 'delivered', finished_at: old },
        { ...base, id: newDone, status: 'delivered', finished_at: h.clock.now() },
        { ...base, id: oldPending, status: 'pending' },
      ])
      .execute();
    await db.insertInto('delivery_queue').values({ delivery_id: oldPending, next_attempt_at: old }).execute();
    const attempt = { number: 1, sent_at: old, status_code: 200, error: null, duration_ms: 5, response_excerpt: null };
    await db
      .insertInto('attempts')
      .values([
        { ...attempt, id: 'att_1', delivery_id: oldDone },
        { ...attempt, id: 'att_2', delivery_id: newDone },
      ])
      .execute();
    const purged = await retentionTask(30 * 86_400_000).run(h.deps);
    expect(purged).toBe(1);
    const left = (await db.selectFrom('deliveries').select('id').orderBy('id').execute()).map((r) => r.id);
    expect(left).toEqual([newDone, oldPending]);
    expect((await db.selectFrom('attempts').select('id').execute()).map((r) => r.id)).toEqual(['att_2']);
  });
  // A resend reopens a finished delivery by updating its row; a purge that read the row as
  // finished before that commit must check it again once it gets the row, not delete it (and,
  // by the queue's cascade, the resend with it). Needs two connections: PostgreSQL only.
  it.skipIf(!onPostgres)('keeps a delivery that a resend reopened while the purge waited for it', async () => {
    const db = h.database.db;
    const old = new Date(h.clock.ms - 40 * 86_400_000);
    const { deliveryId: id } = await seedDelivery(db, acme.accountId, old, { finished: true });
    let purge: Promise<number> | undefined;
    const next = await h.deps.store.transaction(async (store) => {
      const n = await store.deliveries.reopen(id, h.clock.now());
      purge = h.deps.store.deliveries.purgeFinishedBefore(new Date(h.clock.ms - 30 * 86_400_000), 1000);
      // The purge waits on the row this transaction updated, until it commits.
      await untilSettledOrWaiting(db, purge, 'DELETE FROM deliveries');
      return n;
    });
    expect(next).toBe(2);
    expect(await purge).toBe(0);
    const row = await db
      .selectFrom('deliveries')
      .select(['status', 'finished_at'])
      .where('id', '=', id)
      .executeTakeFirst();
    expect(row).toEqual({ status: 'pending', finished_at: null });
    const queued = await db.selectFrom('delivery_queue').select('delivery_id').where('delivery_id', '=', id).execute();
    expect(queued).toHaveLength(1);
  });
});

describe('storage outage', () => {
  it('answers 503 with Retry-After, not 500, when the database cannot be reached', async () => {
    const down = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const store = { ...h.deps.store, keys: { ...h.deps.store.keys, findByHash: async () => Promise.reject(down) } };
    const app = await testApp({ deps: { ...h.deps, store }, logger: false, isUnavailable: isStorageUnavailable });
    const res = await app.inject({ url: `/polls?accountId=${acme.accountId}`, headers: bearer(acme.key) });
    await app.close();
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 503, code: 'unavailable' });
    expect(res.headers['retry-after']).toBe('5');
  });

  it('tells connection failures from other errors', () => {
    expect(
      isStorageUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
    ).toBe(true);
    expect(isStorageUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isStorageUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isStorageUnavailable(new TypeError('x is undefined'))).toBe(false);
  });

  it('a transaction PostgreSQL aborts for another (a deadlock) comes out typed, and still answers 503', async () => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const failing = await h.deps.store
      .transaction(async () => {
        throw deadlock;
      })
      .catch((e: unknown) => e);
    expect(failing).toBeInstanceOf(AbortedForAnotherError);
    expect((failing as Error).cause).toBe(deadlock);
    expect(isStorageUnavailable(failing)).toBe(true);
    const other = await h.deps.store
      .transaction(async () => {
        throw new TypeError('x is undefined');
      })
      .catch((e: unknown) => e);
    expect(other).toBeInstanceOf(TypeError);
  });
});

describe('request timeouts', () => {
  it('cuts off a client that never finishes sending its request', async () => {
    const app = await testApp({ deps: h.deps, logger: false, requestTimeoutMs: 500 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as net.AddressInfo;
    const started = Date.now();
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        // Headers promise a body that never comes.
        socket.write(
          `POST /poll HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nAuthorization: Bearer ${acme.key}\r\n\r\n{"acc`,
        );
      });
      let got = '';
      socket.on('data', (d) => (got += d.toString()));
      socket.on('close', () => resolve(got));
    });
    const waited = Date.now() - started;
    await app.close();
    expect(waited).toBeLessThan(10_000);
    // Node answers 408 (or just closes) once requestTimeout passes.
    expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
  });
});
