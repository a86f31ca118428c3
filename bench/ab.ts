import type { Build } from './build.js';
import { rawBaseline, throughput } from './delivery.js';
import type { CpuSplit, Receiver, Storage } from './lib.js';

export type AbSide = { build: string; perSecond: number[]; ratios: number[]; cpu: CpuSplit[] };
export type AbResult = {
  storage: Storage;
  endpoints: number;
  deliveries: number;
  sides: [AbSide, AbSide];
  /** Per round, the second build's ratio over the first's. */
  quotients: number[];
};

/** The middle value, or the mean of the two middle ones. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Two builds' workers in this one process, alternating within each round (A then B, then B then
 * A), each run against the mean of the raw baselines just before and just after it. On a shared
 * host whose speed drifts within minutes, this resolved a 5% change where separate runs of the
 * two builds did not (docs/performance.md, "The benchmark").
 */
export async function abDelivery(
  receiver: Receiver,
  builds: [Build, Build],
  storage: Storage,
  endpoints: number,
  count: number,
  rounds: number,
  log: (line: string) => void,
): Promise<AbResult> {
  // Unmeasured warm-up of the raw side and of each build (JIT, TLS sessions, pools).
  await rawBaseline(receiver, endpoints, 5_000);
  for (const build of builds) await throughput(storage, receiver, endpoints, 5_000, build);
  const side = (b: Build): AbSide => ({ build: b.name, perSecond: [], ratios: [], cpu: [] });
  const sides: [AbSide, AbSide] = [side(builds[0]), side(builds[1])];
  let before = await rawBaseline(receiver, endpoints, count);
  for (let r = 0; r < rounds; r++) {
    for (const i of r % 2 ? [1, 0] : [0, 1]) {
      const t = await throughput(storage, receiver, endpoints, count, builds[i]);
      const after = await rawBaseline(receiver, endpoints, count);
      const raw = (before.perSecond + after.perSecond) / 2;
      before = after;
      const s = sides[i]!;
      s.perSecond.push(t.perSecond);
      s.ratios.push(t.perSecond / raw);
      s.cpu.push(t.cpu);
      log(
        `ab ${storage} round ${r + 1} ${i ? 'B' : 'A'}: ${Math.round(t.perSecond)}/s (raw ${Math.round(raw)}/s, ratio ${(t.perSecond / raw).toFixed(3)}), CPU µs worker / receiver / PostgreSQL ${Math.round(t.cpu.selfUs)} / ${Math.round(t.cpu.otherUs)} / ${Math.round(t.cpu.postgresUs)}, dup ${t.duplicates}, bad sig ${t.badSignatures}`,
      );
    }
  }
  return {
    storage,
    endpoints,
    deliveries: count,
    sides,
    quotients: sides[1].ratios.map((b, r) => b / sides[0].ratios[r]!),
  };
}
