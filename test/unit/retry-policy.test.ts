import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import {
  classify,
  decide,
  describeOutcome,
  type AttemptOutcome,
  type Decision,
  type DeliveryError,
  type Ladders,
} from '../../src/domain/retry-policy.js';
import { FakeClock } from '../support/app.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** The retry ladders of docs/receiving-webhooks.md, written out here rather than imported so a wrong constant fails. */
const SPEC: Ladders = {
  retryLadderMs: [1 * MIN, 5 * MIN, 30 * MIN, 2 * HOUR, 6 * HOUR],
  dnsRetryLadderMs: [60_000, 180_000],
};

const status = (statusCode: number): AttemptOutcome => ({ kind: 'response', statusCode });
const error = (e: DeliveryError): AttemptOutcome => ({ kind: 'error', error: e });

type Life = { attemptTimes: number[]; decisions: Decision[]; final: Decision['next'] };

/**
 * One delivery's whole life: attempt at clock time, ask the policy, advance the fake clock by
 * the returned delay, attempt again, until the policy says anything but retry.
 */
function live(outcomeOf: (attempt: number) => AttemptOutcome, ladders: Ladders = SPEC): Life {
  const clock = new FakeClock();
  const start = clock.now().getTime();
  const attemptTimes: number[] = [];
  const decisions: Decision[] = [];
  for (let attempt = 1; attempt <= 50; attempt++) {
    attemptTimes.push(clock.now().getTime() - start);
    const d = decide(outcomeOf(attempt), attempt, ladders);
    decisions.push(d);
    if (d.next !== 'retry') return { attemptTimes, decisions, final: d.next };
    expect(d.delayMs).toBeGreaterThan(0);
    clock.advance(d.delayMs);
  }
  throw new Error('the policy never stopped retrying');
}

describe('the spec defaults', () => {
  it('the configuration defaults are the documented ladders', () => {
    const config = loadConfig({});
    expect([...config.retryLadderMs]).toEqual(SPEC.retryLadderMs);
    expect([...config.dnsRetryLadderMs]).toEqual(SPEC.dnsRetryLadderMs);
    expect(config.deliveryTimeoutMs).toBe(10_000);
  });
});

describe('classify', () => {
  it.each([200, 201, 202, 204, 226, 299])('%i is success', (s) => expect(classify(status(s))).toBe('success'));
  it.each([408, 429, 500, 501, 502, 503, 504, 599])('%i is temporary', (s) =>
    expect(classify(status(s))).toBe('temporary'),
  );
  it.each([300, 301, 302, 303, 304, 307, 308])('%i (redirects are never followed) is temporary', (s) =>
    expect(classify(status(s))).toBe('temporary'),
  );
  it.each([400, 401, 402, 403, 404, 405, 409, 410, 413, 415, 422, 451, 499])('%i is permanent', (s) =>
    expect(classify(status(s))).toBe('permanent'),
  );
  it.each(['timeout', 'refused', 'reset', 'tls', 'network'] as const)('error %s is temporary', (e) =>
    expect(classify(error(e))).toBe('temporary'),
  );
  it('error dns is its own class', () => expect(classify(error('dns'))).toBe('dns'));
  it('error blocked_address is permanent', () => expect(classify(error('blocked_address'))).toBe('permanent'));
});

describe('decide: one attempt', () => {
  it.each([200, 201, 204, 299])('%i → delivered, whatever the attempt number', (s) => {
    for (const n of [1, 3, 6]) expect(decide(status(s), n, SPEC)).toEqual({ next: 'delivered' });
  });

  it.each([400, 401, 403, 404, 410, 422])('%i → rejected at once, no retry', (s) => {
    for (const n of [1, 2, 5]) expect(decide(status(s), n, SPEC)).toEqual({ next: 'rejected' });
  });

  it('blocked_address → rejected at once, no retry', () => {
    for (const n of [1, 2, 5]) expect(decide(error('blocked_address'), n, SPEC)).toEqual({ next: 'rejected' });
  });

  it('retries use the ladder step of the attempt that just ended', () => {
    expect(SPEC.retryLadderMs.map((_, i) => decide(status(500), i + 1, SPEC))).toEqual([
      { next: 'retry', delayMs: 60_000 },
      { next: 'retry', delayMs: 300_000 },
      { next: 'retry', delayMs: 1_800_000 },
      { next: 'retry', delayMs: 7_200_000 },
      { next: 'retry', delayMs: 21_600_000 },
    ]);
    expect(decide(status(500), 6, SPEC)).toEqual({ next: 'given_up' });
    expect(decide(status(500), 7, SPEC)).toEqual({ next: 'given_up' });
  });

  it('DNS retries use the DNS ladder and stop after the third attempt', () => {
    expect(decide(error('dns'), 1, SPEC)).toEqual({ next: 'retry', delayMs: 60_000 });
    expect(decide(error('dns'), 2, SPEC)).toEqual({ next: 'retry', delayMs: 180_000 });
    expect(decide(error('dns'), 3, SPEC)).toEqual({ next: 'given_up' });
  });

  it('follows a configured (fast) ladder rather than constants', () => {
    const fast: Ladders = { retryLadderMs: [10, 20], dnsRetryLadderMs: [5] };
    expect(decide(status(503), 1, fast)).toEqual({ next: 'retry', delayMs: 10 });
    expect(decide(status(503), 2, fast)).toEqual({ next: 'retry', delayMs: 20 });
    expect(decide(status(503), 3, fast)).toEqual({ next: 'given_up' });
    expect(decide(error('dns'), 1, fast)).toEqual({ next: 'retry', delayMs: 5 });
    expect(decide(error('dns'), 2, fast)).toEqual({ next: 'given_up' });
  });
});

/** Attempt times of a delivery that keeps failing: 0, +1m, +6m, +36m, +2h36m, +8h36m. */
const LADDER_TIMES = [0, 1 * MIN, 6 * MIN, 36 * MIN, 2 * HOUR + 36 * MIN, 8 * HOUR + 36 * MIN];

describe('a delivery’s whole life on a fake clock', () => {
  const temporary: [string, AttemptOutcome][] = [
    ['408', status(408)],
    ['429', status(429)],
    ['500', status(500)],
    ['503', status(503)],
    ['timeout', error('timeout')],
    ['refused', error('refused')],
    ['reset', error('reset')],
    ['tls', error('tls')],
    ['302 (redirect not followed)', status(302)],
  ];

  it.each(temporary)(
    '%s every time → 6 attempts at 0, +1m, +6m, +36m, +2h36m, +8h36m, then given_up',
    (_name, outcome) => {
      const life = live(() => outcome);
      expect(life.attemptTimes).toEqual(LADDER_TIMES);
      expect(life.decisions.slice(0, 5)).toEqual(SPEC.retryLadderMs.map((delayMs) => ({ next: 'retry', delayMs })));
      expect(life.final).toBe('given_up');
    },
  );

  it('2xx on the first attempt → delivered, one attempt', () => {
    const life = live(() => status(200));
    expect(life).toEqual({ attemptTimes: [0], decisions: [{ next: 'delivered' }], final: 'delivered' });
  });

  it('failures then 2xx → delivered at the time of the succeeding attempt', () => {
    const life = live((n) => (n < 4 ? status(503) : status(204)));
    expect(life.attemptTimes).toEqual(LADDER_TIMES.slice(0, 4));
    expect(life.final).toBe('delivered');
  });

  it('2xx on the 6th (last) attempt still counts as delivered', () => {
    const life = live((n) => (n < 6 ? error('timeout') : status(200)));
    expect(life.attemptTimes).toEqual(LADDER_TIMES);
    expect(life.final).toBe('delivered');
  });

  it.each([400, 401, 403, 404, 410, 422])('%i → rejected after one attempt', (s) => {
    const life = live(() => status(s));
    expect(life.attemptTimes).toEqual([0]);
    expect(life.final).toBe('rejected');
  });

  it('a 5xx, then a permanent 4xx → rejected on the second attempt, no further retries', () => {
    const life = live((n) => (n === 1 ? status(500) : status(410)));
    expect(life.attemptTimes).toEqual([0, 1 * MIN]);
    expect(life.final).toBe('rejected');
  });

  it('blocked_address → rejected after one attempt', () => {
    const life = live(() => error('blocked_address'));
    expect(life.attemptTimes).toEqual([0]);
    expect(life.final).toBe('rejected');
  });

  it('dns every time → 3 attempts at 0, +60s, +4m, then given_up', () => {
    const life = live(() => error('dns'));
    expect(life.attemptTimes).toEqual([0, 60_000, 240_000]);
    expect(life.decisions).toEqual([
      { next: 'retry', delayMs: 60_000 },
      { next: 'retry', delayMs: 180_000 },
      { next: 'given_up' },
    ]);
    expect(life.final).toBe('given_up');
  });

  it('dns failures, then the name resolves and the endpoint answers 2xx → delivered', () => {
    const life = live((n) => (n < 3 ? error('dns') : status(200)));
    expect(life.attemptTimes).toEqual([0, 60_000, 240_000]);
    expect(life.final).toBe('delivered');
  });
});

describe('describeOutcome', () => {
  it('names the status code of an answer', () => {
    expect(describeOutcome(status(404))).toBe('HTTP 404');
    expect(describeOutcome(status(503))).toBe('HTTP 503');
  });
  it.each(['timeout', 'refused', 'reset', 'tls', 'dns', 'blocked_address', 'network'] as const)(
    'describes error %s in words',
    (e) => {
      const text = describeOutcome(error(e));
      expect(text).toEqual(expect.any(String));
      expect(text.length).toBeGreaterThan(5);
      expect(text).not.toMatch(/undefined/);
    },
  );
  it('gives each error its own wording', () => {
    const all = (['timeout', 'refused', 'reset', 'tls', 'dns', 'blocked_address', 'network'] as const).map((e) =>
      describeOutcome(error(e)),
    );
    expect(new Set(all).size).toBe(all.length);
  });
});
