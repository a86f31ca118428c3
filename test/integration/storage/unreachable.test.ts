import { expect, it } from 'vitest';
import { openDatabase } from '../../../src/infra/db/database.js';
import { isStorageUnavailable } from '../../../src/infra/db/unavailable.js';

// PostgreSQL that cannot be reached when storage opens (docs/operations.md, "Database outages"):
// the start-up error says where it looked and what sets it, never the password, and is still
// storage unavailable; also for `canvass migrate`, which opens it with schema 'none'. Port 1 on loopback refuses every connection.
it.each(['check', 'none'] as const)(
  'names the database it could not reach and the variables that set it, without the password (schema %s)',
  async (schema) => {
    const err = await openDatabase({
      databaseUrl: 'postgres://canvass:s3cr3t-pw@127.0.0.1:1/canvass',
      dataDir: '',
      schema,
    }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/^PostgreSQL at 127\.0\.0\.1:1\/canvass could not be used: .*ECONNREFUSED/);
    expect(err?.message).toContain('DATABASE_URL');
    expect(err?.message).toContain('CANVASS_DB_CONNECT_TIMEOUT_MS');
    expect(err?.message).not.toContain('s3cr3t-pw');
    expect(isStorageUnavailable(err)).toBe(true);
    expect((err as { code?: string }).code).toBe('ECONNREFUSED');
  },
);
