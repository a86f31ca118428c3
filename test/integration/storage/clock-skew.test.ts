import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../../src/infra/db/database.js';
import { clockSkew } from '../../../src/infra/db/clock-skew.js';
import { testDatabase } from '../../support/db.js';

let database: Database;
beforeAll(async () => {
  database = await testDatabase();
});
afterAll(() => database?.close());

// The database and this process run on one host, on one clock: the skew read is within the
// round trip that read it, in milliseconds (not seconds, nor microseconds).
it("reads this process's clock against the database's, in milliseconds", async () => {
  const { skewMs, roundTripMs } = await clockSkew(database.db);
  expect(roundTripMs).toBeGreaterThanOrEqual(0);
  expect(Math.abs(skewMs)).toBeLessThanOrEqual(roundTripMs / 2 + 5);
});
