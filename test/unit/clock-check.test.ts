import { describe, expect, it } from 'vitest';
import { logged } from '../support/logged.js';
import type { Deps } from '../../src/app/ports/index.js';
import { CLOCK_SKEW_TOLERANCE_MS, clockCheckTask } from '../../src/worker/clock-check.js';

/** A worker's clock against the database's (docs/operations.md, "Clocks"). */
describe('clockCheckTask', () => {
  it('warns of a clock off by more than the tolerance, once a minute at most checked and every ten minutes warned', async () => {
    const { lines, logger } = logged();
    let t = 1_000_000;
    let skewMs = CLOCK_SKEW_TOLERANCE_MS;
    let measured = 0;
    const task = clockCheckTask(
      async () => (measured++, { skewMs, roundTripMs: 2 }),
      () => t,
    );
    const pass = () => task.run({} as Deps, { logger });
    await pass();
    expect(lines).toEqual([]);
    skewMs = -(CLOCK_SKEW_TOLERANCE_MS + 500);
    await pass(); // within the minute: not measured again
    expect(measured).toBe(1);
    t += 60_000;
    await pass();
    expect(measured).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, skewMs: -(CLOCK_SKEW_TOLERANCE_MS + 500) });
    expect(lines[0]!.msg).toMatch(/synchronise the hosts' clocks/);
    for (let i = 0; i < 10; i++) {
      t += 60_000;
      await pass();
    }
    expect(measured).toBe(12);
    expect(lines).toHaveLength(2);
  });

  it('tells nothing from a round trip slower than the tolerance', async () => {
    const { lines, logger } = logged();
    const task = clockCheckTask(async () => ({ skewMs: 5_000, roundTripMs: CLOCK_SKEW_TOLERANCE_MS + 1 }));
    await task.run({} as Deps, { logger });
    expect(lines).toEqual([]);
  });
});
