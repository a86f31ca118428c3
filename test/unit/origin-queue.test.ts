import { describe, expect, it } from 'vitest';
import { OriginQueue } from '../../src/infra/http-sender/origin-queue.js';

type A = { path: string; settled: boolean; n: number };
const at = (path: string, n: number): A => ({ path, settled: false, n });

/** The sender's queue for one origin (h1-sender.ts): first come first served, half the connections per endpoint while others wait. */
describe('OriginQueue', () => {
  it('serves one endpoint alone in order, on every connection', () => {
    const q = new OriginQueue<A>();
    for (let i = 0; i < 5; i++) q.push(at('/a', i));
    const taken: number[] = [];
    for (let i = 0; i < 5; i++) {
      const a = q.take(4)!;
      q.holding(a.path, 1);
      taken.push(a.n);
    }
    expect(taken).toEqual([0, 1, 2, 3, 4]);
    expect(q.take(4)).toBeUndefined();
  });

  it('lets an endpoint holding half the connections give way to another endpoint that waits', () => {
    const q = new OriginQueue<A>();
    for (let i = 0; i < 6; i++) q.push(at('/hung', i));
    q.push(at('/other', 100));
    const take = () => {
      const a = q.take(4)!;
      q.holding(a.path, 1);
      return `${a.path}#${a.n}`;
    };
    // Two connections for /hung, then /other passes the rest of /hung's queue.
    expect([take(), take(), take()]).toEqual(['/hung#0', '/hung#1', '/other#100']);
    // Nothing else waits: /hung takes the next even past half.
    expect(take()).toBe('/hung#2');
    // One of /hung's requests ends: it is under half again only once two have.
    q.holding('/hung', -1);
    q.push(at('/other', 101));
    expect(take()).toBe('/other#101');
    expect(take()).toBe('/hung#3');
  });

  it('skips attempts settled while they waited, and takes all that wait at once', () => {
    const q = new OriginQueue<A>();
    const first = at('/a', 0);
    q.push(first);
    q.push(at('/a', 1));
    first.settled = true;
    expect(q.any()).toBe(true);
    expect(q.length).toBe(1);
    q.unshift(at('/b', 2));
    expect(q.takeAll().map((a) => a.n)).toEqual([2, 1]);
    expect(q.any()).toBe(false);
  });
});
