import { describe, expect, it } from 'vitest';
import { OriginQueue, type EndpointLoad } from '../../src/infra/http-sender/origin-queue.js';

type A = { load: EndpointLoad; settled: boolean; name: string };
const endpoint = (): EndpointLoad => ({ waiting: 0, held: 0, answeredAt: 0 });
const at = (load: EndpointLoad, name: string): A => ({ load, settled: false, name });

/** The sender's queue for one origin (h1-sender.ts): first come first served, half the connections per endpoint while others wait. */
describe('OriginQueue', () => {
  /** Takes the next attempt for a free connection, and puts it on the wire. */
  const taking = (q: OriginQueue<A>, maxConns: number) => () => {
    const a = q.take(maxConns)!;
    a.load.held++;
    return a.name;
  };

  it('serves one endpoint alone in order, on every connection', () => {
    const q = new OriginQueue<A>();
    const only = endpoint();
    for (let i = 0; i < 5; i++) q.push(at(only, `a${i}`));
    const take = taking(q, 4);
    expect([take(), take(), take(), take(), take()]).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    expect(q.take(4)).toBeUndefined();
    expect(only).toMatchObject({ waiting: 0, held: 5 });
  });

  it('lets an endpoint holding half the connections give way to another endpoint that waits', () => {
    const q = new OriginQueue<A>();
    const hung = endpoint();
    const other = endpoint();
    for (let i = 0; i < 6; i++) q.push(at(hung, `hung${i}`));
    q.push(at(other, 'other0'));
    const take = taking(q, 4);
    // Two connections for the hung endpoint, then the other passes the rest of its queue.
    expect([take(), take(), take()]).toEqual(['hung0', 'hung1', 'other0']);
    // Nothing else waits: the hung endpoint takes the next even past half.
    expect(take()).toBe('hung2');
    // One of its requests ends: still at half, it gives way again to another that waits.
    hung.held--;
    q.push(at(other, 'other1'));
    expect(take()).toBe('other1');
    expect(take()).toBe('hung3');
    expect(hung.waiting).toBe(2);
  });

  it('skips attempts settled while they waited, and takes all that wait at once', () => {
    const q = new OriginQueue<A>();
    const a = endpoint();
    const b = endpoint();
    const first = at(a, 'a0');
    q.push(first);
    q.push(at(a, 'a1'));
    first.settled = true;
    expect(q.any()).toBe(true);
    expect(q.length).toBe(1);
    q.unshift(at(b, 'b0'));
    expect(q.takeAll().map((x) => x.name)).toEqual(['b0', 'a1']);
    expect(q.any()).toBe(false);
    expect([a.waiting, b.waiting]).toEqual([0, 0]);
  });
});
