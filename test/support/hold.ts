import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../src/infra/db/schema.js';

/**
 * A transaction that takes what `take` locks and holds it until released: a database that does
 * not answer in time, or a change under way. On the embedded database it holds the one
 * connection too. Resolves once `take` has run.
 */
export async function holdTransaction(
  db: Kysely<DB>,
  take: (trx: Transaction<DB>) => Promise<unknown>,
): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held!: () => void;
  let failed!: (e: unknown) => void;
  const holding = new Promise<void>((resolve, reject) => ((held = resolve), (failed = reject)));
  const tx = db
    .transaction()
    .execute(async (trx) => {
      await take(trx);
      held();
      await gate;
    })
    .catch((e: unknown) => failed(e));
  await holding;
  return {
    async release() {
      release();
      await tx;
    },
  };
}
