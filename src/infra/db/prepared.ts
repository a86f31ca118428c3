import type pg from 'pg';

const NAMED = /^\/\* prepared:([a-z-]+) \*\//;

/** The name a statement's leading `prepared:NAME` comment gives it, if any. */
export const preparedName = (text: string): string | undefined => NAMED.exec(text)?.[1];

/**
 * Statements whose text starts with a `prepared:NAME` comment run as named prepared
 * statements on this connection: PostgreSQL parses and plans them once per connection instead
 * of on every call, a large share of a claim's and a batch record's database time otherwise
 * (docs/performance.md).
 * Only for statements of fixed text, i.e. whose batches travel as array parameters: a name
 * bound to two texts is an error. The embedded database's thread does the same (embedded-thread.ts).
 */
export function runNamedStatementsPrepared(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((config: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof config === 'string' ? preparedName(config) : undefined;
    if (name) return query({ name, text: config, values }, callback);
    return query(config, values, callback);
  }) as typeof client.query;
}
