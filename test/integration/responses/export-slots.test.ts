import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORTS_PER_ACCOUNT } from '../../../src/app/responses/export-slots.js';
import { idsMadeBefore } from '../../../src/domain/ids.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { answer, visiblePoll } from '../../support/fixtures.js';
import { until } from '../../support/e2e.js';
import { holdTransaction } from '../../support/hold.js';

/**
 * An account runs at most EXPORTS_PER_ACCOUNT CSV exports at once (src/app/responses/export-slots.ts):
 * one more is 429 rate_limited with Retry-After, another account's are not counted, and a slot
 * comes back when an export ends, finished or abandoned by its client.
 */

let h: Harness;
let acme: TestAccount;
let other: TestAccount;
let port: number;
let big: string;
let small: string;

beforeAll(async () => {
  h = await harness();
  acme = await h.account({ name: 'Exports' });
  other = await h.account({ name: 'Other' });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.app.server.address() as AddressInfo).port;
  // Enough CSV (about 24 MB) that a client that stops reading holds its export open: the
  // server's writes wait on the socket once its buffers are full.
  const poll = await visiblePoll(h, acme);
  big = poll.pollId;
  await answer(h, { pollId: big, participantId: 'p0', answers: [{ slideId: poll.q1, value: 'first' }] });
  // Made at the clock's time, ids included: an export holds the answers created by its start.
  const at = h.clock.now();
  const idHead = `${idsMadeBefore('rsp', at.getTime())}Bulk`;
  await sql`INSERT INTO responses (id, account_id, poll_id, participant_id, slide_id, value, metadata, synthetic, created_at)
    SELECT ${idHead} || lpad(k::text, 10, '0'), ${acme.accountId}, ${big}, 'p0', ${poll.q1}, to_jsonb(repeat('x', 8000)), '{}'::jsonb, false, ${at}
    FROM generate_series(1, 3000) k`.execute(h.database.db);
  small = (await visiblePoll(h, other)).pollId;
});
afterAll(() => h?.close());

type Open = { status: number; headers: http.IncomingHttpHeaders; req: http.ClientRequest; res: http.IncomingMessage };

/** Starts an export and reads its head and first chunk, then stops reading. */
function start(pollId: string, key: string): Promise<Open> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      {
        host: '127.0.0.1',
        port,
        path: `/responses/export?pollId=${pollId}`,
        headers: { authorization: `Bearer ${key}` },
      },
      (res) => {
        res.once('data', () => {
          res.pause();
          resolve({ status: res.statusCode!, headers: res.headers, req, res });
        });
        res.once('error', () => {});
      },
    );
    req.on('error', reject);
  });
}

const status = async (pollId: string, key: string) =>
  (
    await h.app.inject({
      method: 'GET',
      url: `/responses/export?pollId=${pollId}`,
      headers: { authorization: `Bearer ${key}` },
    })
  ).statusCode;

describe('CSV exports at once', () => {
  it(`are at most ${EXPORTS_PER_ACCOUNT} per account; a slot comes back when its client goes away`, async () => {
    const held = await Promise.all(Array.from({ length: EXPORTS_PER_ACCOUNT }, () => start(big, acme.key)));
    expect(held.map((o) => o.status)).toEqual(held.map(() => 200));
    const refused = await h.app.inject({
      method: 'GET',
      url: `/responses/export?pollId=${big}`,
      headers: { authorization: `Bearer ${acme.key}` },
    });
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'rate_limited' });
    expect(refused.headers['retry-after']).toBe('5');
    // Another account's exports are counted apart.
    expect(await status(small, other.key)).toBe(200);
    // One client goes away mid-export: its slot comes back.
    held[0]!.req.destroy();
    await until('the abandoned export to give its slot back', () => h.exports.count(acme.accountId) === 1, 20_000);
    expect(await probe()).toBe(200);
    held.slice(1).forEach((o) => o.req.destroy());
    await until('every slot back', () => h.exports.count(acme.accountId) === 0, 20_000);
  });

  it('gives a slot back when its client goes away before the first chunk', async () => {
    // The export waits on its slides, locked by a change under way, while its client leaves.
    const change = await holdTransaction(h.database.db, (trx) =>
      sql`LOCK TABLE slides IN ACCESS EXCLUSIVE MODE`.execute(trx),
    );
    const startedBefore = h.exports.started;
    const arrived = new Promise((r) => h.app.server.once('request', r));
    const req = http.get({
      host: '127.0.0.1',
      port,
      path: `/responses/export?pollId=${big}`,
      headers: { authorization: `Bearer ${acme.key}` },
    });
    req.on('error', () => {});
    await arrived;
    req.destroy();
    await change.release();
    await until(
      'the export to start and end',
      () => h.exports.started === startedBefore + 1 && h.exports.count(acme.accountId) === 0,
      20_000,
    );
    // Both slots are free: two exports at once are taken.
    const both = await Promise.all([start(big, acme.key), start(big, acme.key)]);
    expect(both.map((o) => o.status)).toEqual([200, 200]);
    both.forEach((o) => o.req.destroy());
    await until('every slot back', () => h.exports.count(acme.accountId) === 0, 20_000);
  });

  it('gives a slot back when an export finishes', async () => {
    for (let i = 0; i < EXPORTS_PER_ACCOUNT + 2; i++) expect(await status(small, other.key)).toBe(200);
  });
});

/** An export of acme's small poll: 200 when a slot is free. */
let acmeSmall: string | undefined;
async function probe(): Promise<number> {
  acmeSmall ??= (await visiblePoll(h, acme)).pollId;
  return status(acmeSmall, acme.key);
}
