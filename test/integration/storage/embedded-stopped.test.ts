import { describe, expect, it } from 'vitest';
import { EmbeddedDatabaseStopped, openEmbedded } from '../../../src/infra/db/embedded-client.js';

/**
 * The embedded database's thread stopping on its own (docs/operations.md, "Health and logs"):
 * said once, kept as the database's failure, and every statement after it refused as storage
 * unavailable (08006); a close is no such failure.
 */
describe('the embedded database thread', () => {
  it('stopping on its own is told once and kept; statements after it are refused as unavailable', async () => {
    const stopped: Error[] = [];
    const db = await openEmbedded(null, { onStopped: (e) => stopped.push(e) });
    expect((await db.query('SELECT 1 AS one', [])).rows).toEqual([{ one: 1 }]);
    expect(db.failure()).toBeUndefined();
    await db.thread.terminate();
    await expect(db.query('SELECT 1', [])).rejects.toMatchObject({ code: '08006' });
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toBeInstanceOf(EmbeddedDatabaseStopped);
    expect(db.failure()).toBe(stopped[0]);
    await db.close();
    expect(stopped).toHaveLength(1);
  });

  it('closed, it has no failure and tells nothing', async () => {
    const stopped: Error[] = [];
    const db = await openEmbedded(null, { onStopped: (e) => stopped.push(e) });
    await db.close();
    await expect(db.query('SELECT 1', [])).rejects.toMatchObject({ code: '08006' });
    expect(db.failure()).toBeUndefined();
    expect(stopped).toEqual([]);
  });
});
