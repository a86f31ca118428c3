import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { connectionShare, startConnectionSharing } from '../../src/worker/connection-share.js';

const until = async (pred: () => boolean, what: string) => {
  const end = Date.now() + 5_000;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
};

/** A logger whose lines are kept, parsed. */
function capturedLogger() {
  const lines: { msg: string; workers?: number; connectionsPerOrigin?: number }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as (typeof lines)[number]);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('connectionShare: one worker’s part of the connections all workers may hold to one origin', () => {
  it('divides the bound equally, rounding down, so the parts never add up past it; never below one', () => {
    expect([1, 2, 3, 4, 5, 8, 32].map((n) => connectionShare(32, n))).toEqual([32, 16, 10, 8, 6, 4, 1]);
    for (let n = 1; n <= 32; n++) expect(n * connectionShare(32, n)).toBeLessThanOrEqual(32);
    expect(connectionShare(32, 33)).toBe(1);
    expect(connectionShare(32, 0)).toBe(32);
  });
});

describe('startConnectionSharing', () => {
  it('applies the share at start and on recount; a failed count keeps the share and is logged once per outage', async () => {
    const counts: (number | Error)[] = [2, 4, new Error('down'), new Error('still down'), 1];
    let calls = 0;
    const applied: number[] = [];
    const observed: [number, number][] = [];
    const { logger, lines } = capturedLogger();
    const controller = new AbortController();
    const sharing = startConnectionSharing({
      total: 32,
      countWorkers: async () => {
        const next = counts[Math.min(calls++, counts.length - 1)]!;
        if (next instanceof Error) throw next;
        return next;
      },
      apply: (n) => applied.push(n),
      observe: (workers, perOrigin) => observed.push([workers, perOrigin]),
      intervalMs: 60_000,
      signal: controller.signal,
      logger,
    });
    // Counted at once: two workers.
    await until(() => applied.length === 1, 'the first count');
    expect(applied).toEqual([16]);
    sharing.recount();
    await until(() => applied.length === 2, 'a recount');
    expect(applied).toEqual([16, 8]);
    expect(lines.filter((l) => l.msg === 'endpoint connections shared among workers')).toMatchObject([
      { workers: 2, connectionsPerOrigin: 16 },
      { workers: 4, connectionsPerOrigin: 8 },
    ]);
    // Two failed counts: the share stays, one warning.
    sharing.recount();
    await until(() => calls === 3, 'the first failed count');
    sharing.recount();
    await until(() => calls === 4, 'the second failed count');
    expect(applied).toEqual([16, 8]);
    expect(lines.filter((l) => l.msg === 'counting workers failed; keeping the share')).toHaveLength(1);
    sharing.recount();
    await until(() => applied.length === 3, 'the count after the outage');
    expect(applied).toEqual([16, 8, 32]);
    // Every successful count is observed (the metrics' gauges), failed ones are not.
    expect(observed).toEqual([
      [2, 16],
      [4, 8],
      [1, 32],
    ]);
    controller.abort();
    await sharing.done;
  });

  it('counts again on its interval without being asked, and its first count settles firstCount', async () => {
    const counts = [1, 1, 3];
    let calls = 0;
    const applied: number[] = [];
    const controller = new AbortController();
    let release: (() => void) | undefined;
    const sharing = startConnectionSharing({
      total: 32,
      countWorkers: async () => {
        if (calls === 0) await new Promise<void>((r) => (release = r));
        return counts[Math.min(calls++, counts.length - 1)]!;
      },
      apply: (n) => applied.push(n),
      intervalMs: 5,
      signal: controller.signal,
      logger: pino({ level: 'silent' }),
    });
    let settled = false;
    void sharing.firstCount.then(() => (settled = true));
    await until(() => release !== undefined, 'the first count to start');
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    release!();
    await sharing.firstCount;
    await until(() => applied.length === 1, 'a count on the interval');
    expect(applied).toEqual([10]);
    expect(calls).toBeGreaterThanOrEqual(3);
    controller.abort();
    await sharing.done;
  });

  it('a recount asked for while a count is under way is not lost', async () => {
    let release: (() => void) | undefined;
    let calls = 0;
    const applied: number[] = [];
    const controller = new AbortController();
    const sharing = startConnectionSharing({
      total: 32,
      countWorkers: () => {
        calls++;
        if (calls === 1) return new Promise<number>((r) => (release = () => r(2)));
        return Promise.resolve(3);
      },
      apply: (n) => applied.push(n),
      intervalMs: 60_000,
      signal: controller.signal,
      logger: pino({ level: 'silent' }),
    });
    await until(() => release !== undefined, 'the first count to start');
    sharing.recount();
    release!();
    await until(() => applied.length === 2, 'the recount asked for meanwhile');
    expect(applied).toEqual([16, 10]);
    controller.abort();
    await sharing.done;
  });
});
