import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimedDelivery } from '../../../src/domain/delivery.js';
import { newId } from '../../../src/domain/ids.js';
import { endedLog, ENDED_LINES_PER_MINUTE, type Ended } from '../../../src/worker/warn-ended.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';

/**
 * The worker's warn lines for deliveries rejected or given up (docs/operations.md, "Lines to
 * watch for"): one per delivery, naming its webhook, up to ENDED_LINES_PER_MINUTE per endpoint a
 * minute; past them one line says the rest are held back, and the endpoint's next line counts them.
 */

let h: Harness;
let acme: TestAccount;
let hooks: string[];

beforeAll(async () => {
  h = await harness();
  acme = await h.account();
  const poll = await visiblePoll(h, acme);
  hooks = [
    (await createWebhook(h, acme, poll.pollId, 'https://gone.example/hook?token=s3cret')).data.id,
    (await createWebhook(h, acme, poll.pollId, 'https://other.example/hook')).data.id,
  ];
});
afterAll(() => h?.close());

type Line = { msg: string; deliveryId?: string; webhookId?: string; endpoint?: string; heldBack?: number };

const rejected = (webhookId: string, url: string): Ended => ({
  status: 'rejected',
  sent: {
    delivery: {
      id: newId('dlv'),
      accountId: acme.accountId,
      endpointId: webhookId,
      url,
      attemptCount: 1,
    } as ClaimedDelivery,
    sentAt: new Date(),
    sent: { outcome: { kind: 'response', statusCode: 410 }, durationMs: 1, excerpt: null },
  } as Ended['sent'],
});

describe('warn lines for deliveries that ended badly', () => {
  it('are bounded per endpoint a minute, say so once, and count what they held back on the next', async () => {
    const lines: Line[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Line);
        done();
      },
    });
    let t = Date.parse('2026-12-07T08:00:00Z');
    const log = endedLog(h.deps, pino({ level: 'warn' }, sink), () => t);
    const gone = () => rejected(hooks[0]!, 'https://gone.example/hook?token=s3cret');
    await log(Array.from({ length: 25 }, gone));
    await log([rejected(hooks[1]!, 'https://other.example/hook')]);
    await log(Array.from({ length: 5 }, gone));

    const one = lines.filter((l) => l.msg === 'delivery rejected' && l.webhookId === hooks[0]);
    expect(one).toHaveLength(ENDED_LINES_PER_MINUTE);
    expect(one[0]).toMatchObject({ endpoint: 'https://gone.example' });
    const held = lines.filter((l) => l.msg.startsWith('more deliveries of this endpoint'));
    expect(held).toEqual([expect.objectContaining({ webhookId: hooks[0], until: '2026-12-07T08:01:00.000Z' })]);
    // Another endpoint has a budget of its own.
    expect(lines.filter((l) => l.webhookId === hooks[1])).toHaveLength(1);

    // The next minute: its first line counts the 20 held back, and the budget starts again.
    t += 60_000;
    lines.length = 0;
    await log([gone(), gone()]);
    expect(lines.map((l) => l.heldBack)).toEqual([20, undefined]);
    expect(JSON.stringify(lines)).not.toContain('s3cret');
  });
});
