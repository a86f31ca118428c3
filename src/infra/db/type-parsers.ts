import pg from 'pg';

// Both storages read values with node-postgres's parsers: the pool on PostgreSQL (database.ts)
// and the embedded database's thread (embedded-wire.ts), each importing this once per isolate.
// timestamptz and jsonb already parse; int8 (counts) becomes a number rather than a string.
pg.types.setTypeParser(20, (v) => Number(v));

export const typeParsers = pg.types;
