import { describe, expect, it } from 'vitest';
import { logged } from '../support/logged.js';
import { FAILURE_LOG_EVERY_MS, failureLog } from '../../src/worker/failure-log.js';

/** A failure a loop retries, during an outage (docs/operations.md, "Health and logs"). */
describe('failureLog', () => {
  it('logs the first failure, then at most one line every 30 s counting those not logged', () => {
    const { lines, logger } = logged();
    let t = 1_000_000;
    const log = failureLog(logger, 'claiming deliveries failed', { now: () => t });
    log.failed(new Error('down'));
    for (let i = 0; i < 29; i++) {
      t += 1_000;
      log.failed(new Error('down'));
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'claiming deliveries failed', suppressedSinceLast: 0 });
    t += 1_000;
    log.failed(new Error('still down'), { deliveryId: 'dlv_1' });
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ suppressedSinceLast: 29, deliveryId: 'dlv_1', err: { message: 'still down' } });
    expect(t - 1_000_000).toBe(FAILURE_LOG_EVERY_MS);
  });

  it('says once that the work succeeds again, with the failures and how long they lasted', () => {
    const { lines, logger } = logged();
    let t = 0;
    const log = failureLog(logger, 'claiming deliveries failed', {
      now: () => t,
      recovered: 'claiming deliveries again',
    });
    log.succeeded();
    expect(lines).toEqual([]);
    for (let i = 0; i < 5; i++) {
      log.failed(new Error('down'));
      t += 1_000;
    }
    log.succeeded();
    log.succeeded();
    expect(lines.map((l) => l.msg)).toEqual(['claiming deliveries failed', 'claiming deliveries again']);
    expect(lines[1]).toMatchObject({ level: 30, failures: 5, ms: 5_000 });
    // A failure soon after is within the same 30 s: counted, not logged; a new streak after it.
    log.failed(new Error('down again'));
    expect(lines).toHaveLength(2);
    t += 1_000;
    log.succeeded();
    expect(lines[2]).toMatchObject({ msg: 'claiming deliveries again', failures: 1, ms: 1_000 });
  });

  it('keeps each key to itself', () => {
    const { lines, logger } = logged();
    const t = 0;
    const log = failureLog(logger, 'scheduler task failed', { now: () => t });
    log.failed(new Error('a'), { task: 'alerts' }, 'alerts');
    log.failed(new Error('b'), { task: 'recover' }, 'recover');
    log.failed(new Error('a'), { task: 'alerts' }, 'alerts');
    expect(lines.map((l) => l.task)).toEqual(['alerts', 'recover']);
  });
});
