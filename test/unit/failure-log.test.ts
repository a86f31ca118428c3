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
    // A failure soon after starts a new run: logged at once, then its own recovery.
    log.failed(new Error('down again'));
    expect(lines[2]).toMatchObject({ level: 50, suppressedSinceLast: 0, err: { message: 'down again' } });
    t += 1_000;
    log.succeeded();
    expect(lines[3]).toMatchObject({ msg: 'claiming deliveries again', failures: 1, ms: 1_000 });
  });

  it('logs the first failure of a run that starts within 30 s of the last line, and throttles the rest of it', () => {
    const { lines, logger } = logged();
    let t = 0;
    const log = failureLog(logger, 'claiming deliveries failed', {
      now: () => t,
      recovered: 'claiming deliveries again',
    });
    log.failed(new Error('down'));
    t += 1_000;
    log.failed(new Error('down'));
    t += 1_000;
    log.succeeded();
    t += 1_000;
    log.failed(new Error('down again'));
    t += 1_000;
    log.failed(new Error('down again'));
    // The log's last word is the new run's failure, not "again".
    expect(lines.map((l) => [l.msg, l.suppressedSinceLast])).toEqual([
      ['claiming deliveries failed', 0],
      ['claiming deliveries again', undefined],
      ['claiming deliveries failed', 0],
    ]);
    t += FAILURE_LOG_EVERY_MS - 1_000;
    log.failed(new Error('still down'));
    expect(lines[3]).toMatchObject({ msg: 'claiming deliveries failed', suppressedSinceLast: 1 });
  });

  it('without a recovery line, keeps its 30 s across a success, counting what it left unlogged', () => {
    const { lines, logger } = logged();
    let t = 0;
    const log = failureLog(logger, 'attempt failed to record', { now: () => t });
    log.failed(new Error('a'));
    t += 1_000;
    log.failed(new Error('a'));
    log.succeeded();
    t += 1_000;
    // A result write that fails now and then would otherwise log a line for each failure.
    log.failed(new Error('a again'));
    expect(lines).toHaveLength(1);
    t += FAILURE_LOG_EVERY_MS;
    log.failed(new Error('a again'));
    expect(lines[1]).toMatchObject({ suppressedSinceLast: 2, err: { message: 'a again' } });
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
