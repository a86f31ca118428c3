import { sql } from 'kysely';
import pino from 'pino';
import { expect, it } from 'vitest';
import type { Deps } from '../../../src/app/ports/index.js';
import { flushSomeBatches } from '../../../src/app/delivery/flush-batches.js';
import { PARKED_UNTIL } from '../../../src/domain/delivery.js';
import { createH1Sender } from '../../../src/infra/http-sender/h1-sender.js';
import { hostKey } from '../../../src/worker/account-share.js';
import { leaveOutCursor, RESWEEP_MS } from '../../../src/worker/leave-out-cursor.js';
import { startDeliveryRunner } from '../../../src/worker/delivery-runner.js';
import { harness, type Harness } from '../../support/app.js';
import { onPostgres } from '../../support/db.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import { startReceiver } from '../../support/receiver.js';
import { queueDue, startTestWorker } from '../../support/worker.js';

/**
 * Accounts share a worker's sending slots (src/worker/account-share.ts): an account whose
 * endpoints hold every request open keeps at most its share of them, its other deliveries stay
 * queued (claimed or handed over, uncounted), and another account's deliveries go out through
 * the slots kept back while the first account's attempts are all still open. Within an account,
 * its endpoints on one host share one cap.
 *
 * Hosts named `h<n>.hosts.test` resolve to the loopback (`loopback`), so one receiver serves
 * many hosts (its certificate covers *.hosts.test).
 *
 * Each test has storage of its own, so no other test's retries fall due in it, and a deadline
 * longer than the test, so the held attempts end only when their receiver closes.
 */

const WINDOW_MS = 300;

const loopback = async () => [{ address: '127.0.0.1', family: 4 }];

/** `n` queued deliveries of an account, to `url` for `endpointId`, the i-th due at `dueAt(i)`. */
const dueRows = (accountId: string, n: number, o: { endpointId: string; url: string; dueAt: (i: number) => Date }) =>
  Array.from({ length: n }, (_, i) => ({
    id: `dlv_${accountId}_${o.endpointId}_${o.dueAt(i).getTime()}_${i}`,
    accountId,
    pollId: 'poll_due',
    webhookId: null,
    endpointId: o.endpointId,
    source: 'question-logic' as const,
    url: o.url,
    participantId: `prt_${i}`,
    type: 'submitted-responses' as const,
    body: '{}',
    createdAt: o.dueAt(i),
    nextAttemptAt: o.dueAt(i),
  }));

/**
 * Claims of `size` (two by default) that leave `accountId` out, made as the runner makes them
 * (delivery-runner.ts): a claim that leased fewer moves the start to its window's end, when that
 * window was full. At most `tries`, until `want` are leased: the ids and accounts of those
 * leased, and each window's end. `nowMs` is the runner's clock, as the cursor reads it.
 */
async function claimsPast(
  h: Harness,
  accountId: string,
  want: number,
  tries: number,
  o: { cursor?: ReturnType<typeof leaveOutCursor>; nowMs?: number; size?: number } = {},
) {
  const cursor = o.cursor ?? leaveOutCursor();
  const size = o.size ?? 2;
  const found: string[] = [];
  const ids: string[] = [];
  const windowEnds: (string | null)[] = [];
  for (let n = 0; n < tries && found.length < want; n++) {
    const nowMs = o.nowMs ?? Date.now();
    const claimed = await h.deps.store.deliveries.claim(
      new Date(),
      size,
      new Date(Date.now() + 60_000),
      'lease-cursor',
      new Date(0),
      cursor.from({ accounts: [accountId], hosts: [] }, nowMs),
    );
    found.push(...claimed.map((d) => d.accountId));
    ids.push(...claimed.map((d) => d.id));
    windowEnds.push(claimed.windowEnd ?? null);
    if (claimed.length < size) cursor.passed(claimed.windowEnd ?? null, nowMs);
  }
  return { found, ids, windowEnds };
}

async function setUp() {
  const h = await harness({ allowPrivateTargets: true, delivery: { batchWindowMs: WINDOW_MS } });
  h.deps.clock = { now: () => new Date() };
  const holding = await startReceiver();
  holding.script('/hold', [{ status: 200, delayMs: 600_000 }]);
  const answering = await startReceiver();
  const deps: Deps = { ...h.deps, delivery: { ...h.deps.delivery, deliveryTimeoutMs: 600_000 } };
  return {
    h,
    deps,
    holding,
    answering,
    held: () => holding.received.filter((x) => x.path === '/hold').length,
    /** The holding receiver under a host name of its own. */
    holdingAt: (host: string) => `https://${host}.hosts.test:${holding.port}/hold`,
    async close() {
      await holding.close();
      await answering.close();
      await h.close();
    },
  };
}

it("delivers another account's deliveries while one account's endpoints hold its share of the slots open", async () => {
  const { h, deps, holding, answering, held, holdingAt, close } = await setUp();
  const CONCURRENCY = 32;
  const SHARE = CONCURRENCY - CONCURRENCY / 16;
  const stalled = await h.account({ name: 'Stalled' });
  const other = await h.account({ name: 'Answered' });
  // The stalled account's deliveries go to hosts of one each (under the reserve's size), so its
  // share binds, not a host's cap. One delivery amid them goes to an endpoint that
  // answers, after the account has reached its share: one answer must not let it back into
  // ordinary claims, nor make the worker wait for half its slots to free before claiming.
  const toHold = async (from: number, n: number) => {
    const ids: string[] = [];
    for (let i = from; i < from + n; i++) ids.push(...(await queueDue(h, stalled.accountId, holdingAt(`h${i}`), 1)));
    return ids;
  };
  const queued = await toHold(0, 20);
  await queueDue(h, stalled.accountId, answering.url('/fast'), 1);
  queued.push(...(await toHold(20, 2 * SHARE - 20)));
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const worker = startTestWorker(deps, { concurrency: CONCURRENCY, logger, resolver: loopback });
  try {
    await holding.waitFor(() => held() >= SHARE - 1, 20_000);
    await answering.waitFor((r) => r.some((x) => x.path === '/fast'), 20_000);
    // Queued after every one of the stalled account's, so due after them.
    const ids = await queueDue(h, other.accountId, answering.url('/ok'), 10);
    await answering.waitFor((r) => r.filter((x) => x.path === '/ok').length >= ids.length, 20_000);
    const ok = answering.received.filter((x) => x.path === '/ok');
    expect(new Set(ok.map((x) => x.headers['x-service-delivery-id']))).toEqual(new Set(ids));
    // An operator is told which account was held back, once.
    const warned = lines.filter((l) => String(l.msg).includes('left out of a claim'));
    expect(warned.map((l) => [l.accountIds, l.hosts])).toEqual([[[stalled.accountId], []]]);
    // The stalled account never went past its share; its other deliveries were left queued.
    expect(held()).toBe(SHARE - 1);
    const sent = new Set(holding.received.map((x) => x.headers['x-service-delivery-id']));
    const waiting = await Promise.all(
      queued.filter((id) => !sent.has(id)).map((id) => h.deps.store.deliveries.get(id)),
    );
    expect(waiting.map((d) => [d?.status, d?.attemptCount])).toEqual(Array(SHARE + 1).fill(['pending', 0]));
  } finally {
    await holding.close();
    await worker.stop();
    await close();
  }
});

it("delivers to an account's other hosts while its endpoints on one host hold that host's cap of the slots open", async () => {
  const { h, deps, holding, answering, held, close } = await setUp();
  const CONCURRENCY = 32;
  const RESERVE = CONCURRENCY / 16;
  // The account's share (30) less the reserve.
  const CAP = CONCURRENCY - 2 * RESERVE;
  const acct = await h.account({ name: 'OneStalled' });
  // Eight endpoints on the stalled host: together they hold its cap, not eight caps.
  const queued: string[] = [];
  for (let e = 0; e < 8; e++)
    queued.push(...(await queueDue(h, acct.accountId, holding.url(`/hold?e=${e}`), (2 * CAP) / 8)));
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const worker = startTestWorker(deps, { concurrency: CONCURRENCY, logger });
  try {
    await holding.waitFor(() => held() >= CAP, 20_000);
    // The same account's deliveries to another host, due after all of the stalled host's.
    const ids = await queueDue(h, acct.accountId, answering.url('/ok'), 10);
    await answering.waitFor((r) => r.length >= ids.length, 20_000);
    expect(new Set(answering.received.map((x) => x.headers['x-service-delivery-id']))).toEqual(new Set(ids));
    // The operator is told the host (its origin, no path nor query), not the account.
    const warned = lines.filter((l) => String(l.msg).includes('left out of a claim'));
    expect(warned.map((l) => [l.accountIds, l.hosts])).toEqual([
      [[], [{ accountId: acct.accountId, origin: `https://127.0.0.1:${holding.port}` }]],
    ]);
    // The stalled host never went past its cap, though every claim found nothing else due
    // ahead of its deliveries; its other deliveries were left queued, their attempt uncounted.
    expect(held()).toBe(CAP);
    const sent = new Set(holding.received.map((x) => x.headers['x-service-delivery-id']));
    const waiting = await Promise.all(
      queued.filter((id) => !sent.has(id)).map((id) => h.deps.store.deliveries.get(id)),
    );
    expect(waiting.map((d) => [d?.status, d?.attemptCount])).toEqual(Array(CAP).fill(['pending', 0]));
  } finally {
    await holding.close();
    await worker.stop();
    await close();
  }
});

it("delivers to an account's third host while two of its hosts stall, once their first attempts end", async () => {
  const { h, deps, holding, answering, holdingAt, close } = await setUp();
  const CONCURRENCY = 32;
  const BACKLOG = 200;
  try {
    const acct = await h.account({ name: 'TwoStalled' });
    // Each stalled host has more due than it can hold in many deadlines; x's first, then y's.
    const base = Date.now() - 60_000;
    for (const [n, host] of ['x', 'y'].entries())
      await h.deps.store.deliveries.insert(
        dueRows(acct.accountId, BACKLOG, {
          endpointId: `end_${host}`,
          url: holdingAt(host),
          dueAt: (i) => new Date(base + n * BACKLOG + i),
        }),
      );
    // A deadline of 1.5 s: x first holds its cap (28), y the rest of the share (2), which alone
    // would leave the account's other hosts nothing for as long as both have due deliveries.
    const short: Deps = { ...deps, delivery: { ...deps.delivery, deliveryTimeoutMs: 1_500 } };
    const worker = startTestWorker(short, { concurrency: CONCURRENCY, resolver: loopback });
    try {
      await holding.waitFor((r) => r.length >= CONCURRENCY - 2, 20_000);
      const ids = await queueDue(h, acct.accountId, answering.url('/ok'), 10);
      await answering.waitFor((r) => r.length >= ids.length, 20_000);
      // Once the first attempts ended, x and y split the cap (14 each) and the third host had
      // the rest: it was served while both stalled hosts still had deliveries due. Without the
      // split, x refilled to 28 and y to 2 at each deadline, and the third host was served only
      // once x had sent all 200, which is what tells the two apart.
      const sentTo = (host: string) =>
        new Set(
          holding.received
            .filter((x) => x.headers.host?.startsWith(`${host}.`))
            .map((x) => x.headers['x-service-delivery-id']),
        ).size;
      expect(sentTo('x')).toBeLessThan(BACKLOG);
      expect(sentTo('y')).toBeLessThan(BACKLOG);
      expect(new Set(answering.received.map((x) => x.headers['x-service-delivery-id']))).toEqual(new Set(ids));
    } finally {
      await holding.close();
      await worker.stop();
    }
  } finally {
    await close();
  }
});

it('backs off claims that leave out the only busy host, and makes one at once when new deliveries are queued', async () => {
  const { h, deps, holding, answering, held, close } = await setUp();
  const controller = new AbortController();
  const sender = createH1Sender({ allowPrivateTargets: true });
  // Every claim that leaves something out: when it was made and how many it leased.
  const claims: { at: number; found: string[] }[] = [];
  const store = deps.store;
  const counted: Deps = {
    ...deps,
    sender,
    store: {
      ...store,
      deliveries: {
        ...store.deliveries,
        claim: async (...args) => {
          const at = Date.now();
          const leased = await store.deliveries.claim(...args);
          const exclude = args[5];
          if (exclude && (exclude.accounts.length || exclude.hosts.length))
            claims.push({ at, found: leased.map((d) => d.id) });
          return leased;
        },
      },
    },
  };
  try {
    const acct = await h.account({ name: 'BackedOff' });
    // Cap 28 of 32 slots; the rest of the stalled host's deliveries stay due.
    await queueDue(h, acct.accountId, holding.url('/hold'), 56);
    const runner = startDeliveryRunner(counted, controller.signal, {
      concurrency: 32,
      claimBatch: 16,
      idleMs: 20,
      drainMs: 0,
      logger: pino({ level: 'silent' }),
    });
    await holding.waitFor(() => held() >= 28, 20_000);
    // Nothing else is due, so each such claim finds nothing and the next waits twice as long:
    // after 50, 100, … 1,600 ms, the next is 3,200 ms away.
    while (claims.length < 6) await new Promise((r) => setTimeout(r, 20));
    expect(claims.every((c) => c.found.length === 0)).toBe(true);
    const gaps = claims.slice(1).map((c, i) => c.at - claims[i]!.at);
    expect(gaps.every((g, i) => g >= 100 * 2 ** i - 5)).toBe(true);
    // New deliveries to another host, and the wake their queuing sends: one claim at once,
    // not at the backed-off time.
    const before = claims.length;
    const ids = await queueDue(h, acct.accountId, answering.url('/ok'), 5);
    runner.wake();
    await answering.waitFor((r) => r.length >= ids.length, 20_000);
    const finder = claims.findIndex((c) => c.found.length > 0);
    expect(finder).toBe(before);
    expect(claims[finder]!.at - claims[finder - 1]!.at).toBeLessThan(3_200);
    controller.abort();
    await runner.done;
  } finally {
    controller.abort();
    await holding.close();
    await sender.close();
    await close();
  }
});

it('gives back, uncounted, what a flush hands over for an account at its share, and sends it once the account is below', async () => {
  const { h, deps, holding, answering, held, holdingAt, close } = await setUp();
  const controller = new AbortController();
  const sender = createH1Sender({ allowPrivateTargets: true, resolver: loopback });
  try {
    const acct = await h.account({ name: 'Handed' });
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, answering.url('/handed'));
    for (let i = 0; i < 2; i++)
      await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: `r${i}` }] });
    const windowsEnd = Date.now() + WINDOW_MS;
    // Thirty of the account's attempts held open, on hosts of one each: its share of 32 slots,
    // reached by claims of 4 (one host alone stops at its cap, 28).
    for (let i = 0; i < 30; i++) await queueDue(h, acct.accountId, holdingAt(`h${i}`), 1);
    const withSender = { ...deps, sender };
    const runner = startDeliveryRunner(withSender, controller.signal, {
      concurrency: 32,
      claimBatch: 4,
      idleMs: 20,
      drainMs: 5_000,
      logger: pino({ level: 'silent' }),
    });
    await holding.waitFor(() => held() >= 30, 20_000);
    while (Date.now() <= windowsEnd) await new Promise((r) => setTimeout(r, 50));
    // The reserve's two slots are free, so both are handed over; the account may take neither.
    expect(await flushSomeBatches(withSender, 500, runner)).toEqual({ deliveries: 2, batches: 2, leased: 2 });
    const deliveries = async () =>
      (await h.deps.store.deliveries.list({ accountIds: [acct.accountId], webhookId: hook.data.id }, { limit: 10 }))
        .data;
    for (let i = 0; !(await deliveries()).every((d) => d.status === 'pending' && d.attemptCount === 0); i++) {
      if (i > 400) throw new Error(`not given back: ${JSON.stringify(await deliveries())}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(answering.received).toHaveLength(0);
    expect(held()).toBe(30);
    // The held attempts end (their connections close): both go out, each as its first attempt.
    await holding.close();
    const sent = await answering.waitFor((r) => r.length >= 2, 20_000);
    expect(sent.map((x) => x.headers['x-service-attempt'])).toEqual(['1', '1']);
    controller.abort();
    await runner.done;
  } finally {
    controller.abort();
    await sender.close();
    await close();
  }
});

it('a claim that leaves accounts or hosts out passes over their deliveries, tied due times included, within the first 2,048 due', async () => {
  const { h, close } = await setUp();
  try {
    const left = await h.account({ name: 'LeftOut' });
    const other = await h.account({ name: 'Other' });
    const due = new Date(Date.now() - 60_000);
    const rows = (
      accountId: string,
      n: number,
      at: Date,
      endpointId = 'end_due',
      url = 'https://hooks.example.com/x',
    ) => dueRows(accountId, n, { endpointId, url, dueAt: () => at });
    const claim = (accounts: string[], hosts: string[] = []) =>
      h.deps.store.deliveries.claim(new Date(), 50, new Date(Date.now() + 60_000), 'lease-window', new Date(0), {
        accounts,
        hosts,
      });
    // 100 of the left-out account's and 5 of another's, all due at the same moment.
    await h.deps.store.deliveries.insert(rows(left.accountId, 100, due));
    await h.deps.store.deliveries.insert(rows(other.accountId, 5, due));
    const first = await claim([left.accountId]);
    expect(first.map((d) => d.accountId)).toEqual(Array(5).fill(other.accountId));
    // The left-out host's are passed over, those of another endpoint on it too; the account's
    // other host's are claimed, and so are another account's on the left-out host.
    await h.deps.store.deliveries.insert(
      rows(left.accountId, 5, due, 'end_same_host', 'https://hooks.example.com/y?z=1'),
    );
    await h.deps.store.deliveries.insert(
      rows(left.accountId, 3, due, 'end_other_port', 'https://hooks.example.com:8443/x'),
    );
    await h.deps.store.deliveries.insert(rows(other.accountId, 2, due, 'end_other_account'));
    const second = await claim([], [hostKey(left.accountId, 'https://hooks.example.com/')]);
    expect(second.map((d) => [d.accountId, d.endpointId]).sort()).toEqual(
      [
        ...Array(3).fill([left.accountId, 'end_other_port']),
        ...Array(2).fill([other.accountId, 'end_other_account']),
      ].sort(),
    );
    // 2,053 of the left-out account's due now, and 10 of the other's due a second later: past
    // the window, until fewer of the left-out account's are due ahead of them.
    await h.deps.store.deliveries.insert(
      rows(left.accountId, 1_948, due).map((r, i) => ({ ...r, id: `${r.id}_more${i}` })),
    );
    await h.deps.store.deliveries.insert(rows(other.accountId, 10, new Date(due.getTime() + 1_000)));
    expect(await claim([left.accountId])).toHaveLength(0);
    expect(await claim([])).toHaveLength(50);
    expect(await claim([left.accountId])).toHaveLength(10);
    const queued = await h.deps.store.deliveries.list({ accountIds: [left.accountId] }, { limit: 2_100 });
    // The left-out host's 2,053 (of two endpoints) less the 50 the ordinary claim took.
    const onHost = queued.data.filter((d) => d.endpointId === 'end_due' || d.endpointId === 'end_same_host');
    expect(onHost.filter((d) => d.attemptCount === 0)).toHaveLength(2_053 - 50);
  } finally {
    await close();
  }
});

it('claims that leave some out read on from where each full window ended, past a backlog longer than a window, and pass over none of the others', async () => {
  const { h, close } = await setUp();
  try {
    const left = await h.account({ name: 'Backlog' });
    const other = await h.account({ name: 'Behind' });
    const base = Date.now() - 60_000;
    const url = 'https://hooks.example.com/x';
    // 5,000 of the left-out account's, due 2 ms apart; 6 of another's due between them (odd
    // milliseconds): two in the first window, one past its end, three past the backlog.
    await h.deps.store.deliveries.insert(
      dueRows(left.accountId, 5_000, { endpointId: 'end_left', url, dueAt: (i) => new Date(base + 2 * i) }),
    );
    const between = [101, 4_001, 4_097, 10_001, 10_003, 10_005];
    await h.deps.store.deliveries.insert(
      dueRows(other.accountId, between.length, {
        endpointId: 'end_other',
        url,
        dueAt: (i) => new Date(base + between[i]!),
      }),
    );
    const { found, windowEnds } = await claimsPast(h, left.accountId, between.length, 12);
    expect(found).toEqual(Array(between.length).fill(other.accountId));
    // The first window holds the others' first two: the claim of two took them, so it answers
    // the due time of the second, past which it tried nothing.
    expect(new Date(windowEnds[0]!).getTime()).toBe(base + between[1]!);
    // The next found none of the others in its window: it ends at the left-out account's
    // 2,048th row from the start.
    expect(new Date(windowEnds[1]!).getTime()).toBe(base + 2 * 2_047);
    // The last window, past the backlog, was not full.
    expect(windowEnds.at(-1)).toBeNull();
    const queued = await h.deps.store.deliveries.list({ accountIds: [left.accountId] }, { limit: 10 });
    expect(queued.data.every((d) => d.attemptCount === 0)).toBe(true);
  } finally {
    await close();
  }
});

it('a claim that leaves some out and finds more than it asks for answers the due time of the last it took: the next reads on from there, past none it did not try', async () => {
  const { h, close } = await setUp();
  try {
    const left = await h.account({ name: 'Ahead' });
    const other = await h.account({ name: 'Among' });
    const base = Date.now() - 60_000;
    const url = 'https://hooks.example.com/x';
    // A full window: 2,040 of the left-out account's due 2 ms apart, and 20 of another's among
    // the first of them (odd milliseconds).
    await h.deps.store.deliveries.insert(
      dueRows(left.accountId, 2_040, { endpointId: 'end_ahead', url, dueAt: (i) => new Date(base + 2 * i) }),
    );
    await h.deps.store.deliveries.insert(
      dueRows(other.accountId, 20, { endpointId: 'end_among', url, dueAt: (i) => new Date(base + 2 * i + 1) }),
    );
    const cursor = leaveOutCursor();
    const claim = (limit: number) =>
      h.deps.store.deliveries.claim(
        new Date(),
        limit,
        new Date(Date.now() + 60_000),
        'lease-among',
        new Date(0),
        cursor.from({ accounts: [left.accountId], hosts: [] }, Date.now()),
      );
    const first = await claim(5);
    expect(first.map((d) => d.accountId)).toEqual(Array(5).fill(other.accountId));
    // The fifth it took is due at base + 9 ms: the rows past it were never tried.
    expect(new Date(first.windowEnd!).getTime()).toBe(base + 9);
    if (onPostgres) {
      // Two more locked by another claim under way: this one skips them and leases three of the
      // five it tried, so its start moves, but only as far as the last it tried.
      const locked = (i: number) => `dlv_${other.accountId}_end_among_${base + 2 * i + 1}_${i}`;
      await h.database.db.transaction().execute(async (trx) => {
        await sql`SELECT 1 FROM delivery_queue WHERE delivery_id IN (${locked(5)}, ${locked(6)}) FOR UPDATE`.execute(
          trx,
        );
        const second = await claim(5);
        expect(second).toHaveLength(3);
        expect(new Date(second.windowEnd!).getTime()).toBe(base + 2 * 9 + 1);
        expect(cursor.passed(second.windowEnd!, Date.now())).toBe(true);
      });
    }
    // Claims that leave the account out, as the runner makes them, find all the others left,
    // none of them passed over.
    const left10 = onPostgres ? 10 : 15;
    const { found } = await claimsPast(h, left.accountId, left10, 12, { cursor, size: 5 });
    expect(found).toEqual(Array(left10).fill(other.accountId));
  } finally {
    await close();
  }
});

it('claims that leave some out go back to the first due once they have rested, and find what committed behind where they read on from', async () => {
  const { h, close } = await setUp();
  try {
    const left = await h.account({ name: 'Walked' });
    const other = await h.account({ name: 'Late' });
    const base = Date.now() - 60_000;
    const url = 'https://hooks.example.com/x';
    await h.deps.store.deliveries.insert(
      dueRows(left.accountId, 5_000, { endpointId: 'end_walked', url, dueAt: (i) => new Date(base + 2 * i) }),
    );
    const cursor = leaveOutCursor();
    const t0 = Date.now();
    // The walk past the backlog: full windows, then one that is not.
    const walk = await claimsPast(h, left.accountId, 1, 4, { cursor, nowMs: t0 });
    expect(walk.found).toEqual([]);
    expect(walk.windowEnds.at(-1)).toBeNull();
    // Three of another account's that commit due behind the start, as a transaction that read the
    // clock before the walk and committed after it would queue them.
    await h.deps.store.deliveries.insert(
      dueRows(other.accountId, 3, { endpointId: 'end_late', url, dueAt: (i) => new Date(base + 2 * i + 1) }),
    );
    const resting = await claimsPast(h, left.accountId, 3, 2, { cursor, nowMs: t0 + RESWEEP_MS - 1 });
    expect(resting.found).toEqual([]);
    const back = await claimsPast(h, left.accountId, 3, 4, { cursor, nowMs: t0 + RESWEEP_MS, size: 5 });
    expect(back.found).toEqual(Array(3).fill(other.accountId));
  } finally {
    await close();
  }
});

it("a resumed webhook's backlog, longer than a claim window, falls due a microsecond apart, and claims that leave its host out read past it", async () => {
  const { h, close } = await setUp();
  try {
    const left = await h.account({ name: 'Resumed' });
    const other = await h.account({ name: 'BehindIt' });
    const url = 'https://hooks.example.com/x';
    // 3,000 parked while their webhook was paused.
    await h.deps.store.deliveries.insert(
      dueRows(left.accountId, 3_000, { endpointId: 'whk_resumed', url, dueAt: () => PARKED_UNTIL }).map((r) => ({
        ...r,
        webhookId: 'whk_resumed',
      })),
    );
    const resumedAt = new Date(Date.now() - 60_000);
    expect(await h.deps.store.deliveries.unparkWebhook('whk_resumed', resumedAt)).toBe(3_000);
    const { rows } = await sql<{ n: number; first: Date; span: number }>`
      SELECT count(DISTINCT q.next_attempt_at)::int AS n, min(q.next_attempt_at) AS first,
        (extract(epoch FROM max(q.next_attempt_at) - min(q.next_attempt_at)) * 1000000)::int AS span
      FROM delivery_queue q JOIN deliveries d ON d.id = q.delivery_id WHERE d.account_id = ${left.accountId}`.execute(
      h.database.db,
    );
    expect(rows[0]!.n).toBe(3_000);
    expect(new Date(rows[0]!.first).getTime()).toBe(resumedAt.getTime());
    expect(rows[0]!.span).toBe(2_999);
    // Oldest first: in the order of their ids, which begin with the time they were made.
    const order = async (by: 'due' | 'id') =>
      (
        await sql<{ id: string }>`SELECT q.delivery_id AS id FROM delivery_queue q
          WHERE q.delivery_id LIKE ${`dlv_${left.accountId}_%`}
          ORDER BY ${by === 'due' ? sql`q.next_attempt_at` : sql`q.delivery_id`}`.execute(h.database.db)
      ).rows.map((r) => r.id);
    expect(await order('due')).toEqual(await order('id'));
    // 5 of another account's due a second after the resume: claims that leave the resumed
    // account out reach them, a window at a time, as the runner makes them.
    await h.deps.store.deliveries.insert(
      dueRows(other.accountId, 5, {
        endpointId: 'end_behind',
        url,
        dueAt: () => new Date(resumedAt.getTime() + 1_000),
      }),
    );
    const { found } = await claimsPast(h, left.accountId, 5, 8);
    expect(found).toEqual(Array(5).fill(other.accountId));
  } finally {
    await close();
  }
});

it("delivers another account's deliveries queued behind more of a stalled account's than one claim window reads", async () => {
  const { h, deps, holding, answering, held, close } = await setUp();
  const CONCURRENCY = 32;
  const CAP = CONCURRENCY - 2 * (CONCURRENCY / 16);
  try {
    const stalled = await h.account({ name: 'LongBacklog' });
    const other = await h.account({ name: 'Waiting' });
    // 3,000 due to the stalled host, a millisecond apart, all due before the other account's.
    const base = Date.now() - 60_000;
    await h.deps.store.deliveries.insert(
      dueRows(stalled.accountId, 3_000, {
        endpointId: 'end_backlog',
        url: holding.url('/hold'),
        dueAt: (i) => new Date(base + i),
      }),
    );
    const worker = startTestWorker(deps, { concurrency: CONCURRENCY });
    try {
      await holding.waitFor(() => held() >= CAP, 20_000);
      const ids = await queueDue(h, other.accountId, answering.url('/ok'), 10);
      // The stalled attempts stay open for the whole test (deadline 600 s): these go out past them.
      await answering.waitFor((r) => r.length >= ids.length, 20_000);
      expect(new Set(answering.received.map((x) => x.headers['x-service-delivery-id']))).toEqual(new Set(ids));
      expect(held()).toBe(CAP);
    } finally {
      await holding.close();
      await worker.stop();
    }
  } finally {
    await close();
  }
});
