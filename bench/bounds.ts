import { randomUUID } from 'node:crypto';
import type { ClaimedDelivery } from '../src/domain/delivery.js';
import type { Deps } from '../src/app/ports/index.js';
import { rawBaseline, throughput, type StoreStandIn } from './delivery.js';
import type { CpuSplit, Receiver, Waits } from './lib.js';

export type BoundVariant = 'postgres' | 'claim in memory' | 'record in memory' | 'both in memory';
const VARIANTS: BoundVariant[] = ['postgres', 'claim in memory', 'record in memory', 'both in memory'];

/**
 * The worker's claim, its batch record, or both, answered from memory instead of PostgreSQL:
 * what the worker delivers when that statement costs nothing, a bound on what making it
 * cheaper can gain. The claim in memory hands out deliveries leased beforehand by one real
 * claim (so a real record still matches their lease tokens); the record in memory reports
 * every result applied.
 */
function inMemory(variant: BoundVariant): StoreStandIn | undefined {
  if (variant === 'postgres') return undefined;
  let started = false;
  return {
    start: () => {
      started = true;
    },
    wrap(deps: Deps): Deps {
      const real = deps.store.deliveries;
      const deliveries = Object.create(real) as typeof real;
      if (variant !== 'record in memory') {
        // The bench's deliveries fall due a minute after they are made: lease them all now.
        const far = Date.now() + 120_000;
        const pool: Promise<ClaimedDelivery[]> = real.claim(
          new Date(far),
          1_000_000,
          new Date(far + 600_000),
          randomUUID(),
          new Date(0),
        );
        // Nothing is due before the measured run starts, as with the real claim.
        deliveries.claim = async (_now, limit) => (started ? (await pool).splice(0, limit) : []);
      }
      if (variant !== 'claim in memory')
        deliveries.recordResults = async (items) => new Set(items.map((i) => i.attempt.deliveryId));
      return { ...deps, store: { ...deps.store, deliveries } };
    },
  };
}

export type BoundRow = {
  variant: BoundVariant;
  perSecond: number[];
  ratios: number[];
  cpu: CpuSplit[];
  waits: Waits[];
  /** The same, for the raw run just after each of this variant's runs. */
  rawWaits: Waits[];
};

/**
 * Each variant in turn on PostgreSQL, the order rotated each round, each run set against the
 * mean of the raw baselines just before and after it (as the delivery section does).
 */
export async function deliveryBounds(
  receiver: Receiver,
  endpoints: number,
  count: number,
  rounds: number,
  log: (line: string) => void,
): Promise<BoundRow[]> {
  await rawBaseline(receiver, endpoints, 5_000);
  await throughput('postgres', receiver, endpoints, 5_000); // warm-up, unmeasured
  const rows = VARIANTS.map((variant): BoundRow => ({
    variant,
    perSecond: [],
    ratios: [],
    cpu: [],
    waits: [],
    rawWaits: [],
  }));
  let before = await rawBaseline(receiver, endpoints, count);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < rows.length; k++) {
      const row = rows[(k + r) % rows.length]!;
      const t = await throughput('postgres', receiver, endpoints, count, undefined, inMemory(row.variant));
      const after = await rawBaseline(receiver, endpoints, count);
      const raw = (before.perSecond + after.perSecond) / 2;
      before = after;
      row.perSecond.push(t.perSecond);
      row.ratios.push(t.perSecond / raw);
      row.cpu.push(t.cpu);
      row.waits.push(t.waits);
      row.rawWaits.push(after.waits);
      log(
        `bounds round ${r + 1} ${row.variant}: ${Math.round(t.perSecond)}/s (raw ${Math.round(raw)}/s, ratio ${(t.perSecond / raw).toFixed(3)}), CPU µs worker / receiver / PostgreSQL ${Math.round(t.cpu.selfUs)} / ${Math.round(t.cpu.otherUs)} / ${Math.round(t.cpu.postgresUs)}, run-queue wait worker ${pct(t.waits.self)} receiver ${pct(t.waits.other)} (raw run: ${pct(after.waits.self)} / ${pct(after.waits.other)})`,
      );
    }
  }
  return rows;
}

export const pct = (x: number) => `${Math.round(x * 100)}%`;
