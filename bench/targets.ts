/**
 * The benchmark's targets (docs/performance.md), each checked against this run's results:
 * printed as PASS or FAIL, and kept in bench/results.json. A section not run is not judged.
 */
type Row = Record<string, unknown>;
export type Verdict = { target: string; value: string; pass: boolean };

const num = (v: unknown) => (typeof v === 'number' ? v : NaN);
const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? String(Math.round(n * 10 ** digits) / 10 ** digits) : '—');

export function judge(results: Record<string, unknown>): Verdict[] {
  const out: Verdict[] = [];
  const add = (target: string, value: string, pass: boolean) => out.push({ target, value, pass });

  const delivery = results.delivery as Row[] | undefined;
  if (delivery) {
    const of = (storage: string) => delivery.filter((r) => r.storage === storage);
    const pgRounds = of('postgres').flatMap((r) => r.roundRatios as number[]);
    if (pgRounds.length) {
      add(
        'PostgreSQL, one worker: ≥ 0.6× the raw baseline in every round',
        pgRounds.map((x) => fmt(x)).join(' '),
        pgRounds.every((x) => x >= 0.6),
      );
      const rates = of('postgres').map((r) => num(r.perSecond));
      add(
        'PostgreSQL, one worker: ≥ 7,000 deliveries/s',
        rates.map((x) => fmt(x, 0)).join(' / '),
        rates.every((x) => x >= 7_000),
      );
    }
    const lite = of('pglite').map((r) => num(r.ratio));
    if (lite.length)
      add(
        'PGlite: deliveries/s ≥ 0.5× the raw baseline (median round)',
        lite.map((x) => fmt(x)).join(' / '),
        lite.every((x) => x >= 0.5),
      );
  }

  for (const p of (results.paced as Row[] | undefined) ?? [])
    add(
      `${String(p.storage)}, paced 1,000/s: p99 ≤ 50 ms from due to 2xx`,
      `${fmt(num(p.p99Ms), 0)} ms`,
      num(p.p99Ms) <= 50,
    );

  const workers = results.workers as (Row & { perWorker: Row[] })[] | undefined;
  for (const w of workers ?? []) {
    if (w.workers === 1) continue;
    add(
      `${String(w.workers)} workers: ≥ 0.9× one worker's deliveries/s (median round)`,
      fmt(num(w.ratio)),
      num(w.ratio) >= 0.9,
    );
    const gap = Math.max(...w.perWorker.map((p) => num(p.longestGapMs)));
    const early = Math.max(...w.perWorker.map((p) => num(p.doneBeforeEndMs)));
    add(
      `${String(w.workers)} workers: none idle while another holds a backlog (no pause, nor an early finish, over 200 ms)`,
      `longest pause ${fmt(gap, 0)} ms, earliest finish ${fmt(early, 0)} ms before the end`,
      gap <= 200 && early <= 200,
    );
  }

  const claim = results.claim as Row[] | undefined;
  if (claim?.length === 3) {
    const ratio = num(claim[2]!.medianMs) / num(claim[0]!.medianMs);
    add('claim at 1M pending ≤ 1.5× at 10k', fmt(ratio), ratio <= 1.5);
  }

  const api = results.api as Row[] | undefined;
  if (api) {
    const sub = (storage: string, c: number) =>
      api.find((r) => r.storage === storage && r.route === '/participant/responses' && r.connections === c);
    const pg128 = sub('postgres', 128);
    if (pg128)
      add(
        'PostgreSQL: POST /participant/responses ≥ 2,000/s',
        `${fmt(num(pg128.requestsPerSecond), 0)}/s`,
        num(pg128.requestsPerSecond) >= 2_000,
      );
    const l32 = sub('pglite', 32);
    const l128 = sub('pglite', 128);
    if (l128) {
      const slowest = num(l128.maxMs);
      const lost = num(l128.errors) + num(l128.non2xx);
      add(
        'PGlite, 128 connections: no submission over 1 s (nor timed out)',
        `max ${fmt(slowest, 0)} ms, ${lost} errors`,
        slowest <= 1_000 && lost === 0,
      );
    }
    if (l32 && l128)
      add(
        'PGlite: submissions/s at 128 connections ≥ at 32',
        `${fmt(num(l128.requestsPerSecond), 0)} vs ${fmt(num(l32.requestsPerSecond), 0)}`,
        num(l128.requestsPerSecond) >= num(l32.requestsPerSecond),
      );
  }

  const pipeline = results.pipeline as { target: Row } | undefined;
  if (pipeline) {
    const t = pipeline.target;
    add(
      `pipeline at ${String(t.rate)} submissions/s: no backlog growth`,
      `${fmt(num(t.backlogGrowthPerSecond), 1)}/s`,
      Boolean(t.steady),
    );
    const p99 = Math.max(num(t.completeP99Ms), num(t.partialP99Ms));
    add(
      `pipeline at ${String(t.rate)} submissions/s: p99 ≤ 100 ms from 201 to 2xx (less the batch window)`,
      `${fmt(p99, 0)} ms`,
      p99 <= 100,
    );
  }
  return out;
}
