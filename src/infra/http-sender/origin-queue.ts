/**
 * One endpoint's attempts at an origin: queued, and on the wire (one per connection); and when a
 * status line of its last arrived (performance.now()).
 */
export type EndpointLoad = { waiting: number; held: number; answeredAt: number };

type Queued = { load: EndpointLoad; settled: boolean };

/**
 * One origin's attempts waiting for a connection, first come first served, except that an
 * endpoint (a path and query of the origin) whose requests hold half the origin's connections or
 * more gives way to the first attempt of another endpoint that waits: the endpoints of one host
 * (a shared webhook service) share its connections, and one that hangs or answers slowly gets
 * no further connection while it holds half of them and another waits (those it holds are kept
 * until answered or timed out). One endpoint alone uses them all; with one connection per
 * origin the order is arrival's. The counts live with each endpoint's parsed target (one object
 * its attempts share: a few increments per attempt, docs/performance.md).
 */
export class OriginQueue<A extends Queued> {
  private items: A[] = [];
  /** Endpoints with attempts queued (settled ones included until they leave the queue). */
  private endpoints = 0;

  get length(): number {
    return this.items.length;
  }

  [Symbol.iterator](): Iterator<A> {
    return this.items[Symbol.iterator]();
  }

  push(a: A): void {
    this.items.push(a);
    if (a.load.waiting++ === 0) this.endpoints++;
  }

  /** Back at the front (a request sent once more on a new connection). */
  unshift(a: A): void {
    this.items.unshift(a);
    if (a.load.waiting++ === 0) this.endpoints++;
  }

  /** Every attempt waiting, taken off the queue. */
  takeAll(): A[] {
    for (const a of this.items) a.load.waiting = 0;
    this.endpoints = 0;
    return this.items.splice(0);
  }

  /** Drops the settled attempts at the front; whether any attempt is left. */
  any(): boolean {
    while (this.items.length && this.items[0]!.settled) this.remove(0);
    return this.items.length > 0;
  }

  /** The next attempt for a free connection of an origin kept to `maxConns`, taken off the queue. */
  take(maxConns: number): A | undefined {
    if (!this.any()) return undefined;
    const head = this.items[0]!;
    const cap = maxConns >> 1 || 1;
    if (this.endpoints > 1 && head.load.held >= cap) {
      for (let i = 1; i < this.items.length; i++) {
        const a = this.items[i]!;
        if (!a.settled && a.load !== head.load && a.load.held < cap) return this.remove(i);
      }
    }
    return this.remove(0);
  }

  private remove(i: number): A {
    const a = i === 0 ? this.items.shift()! : this.items.splice(i, 1)[0]!;
    if (--a.load.waiting === 0) this.endpoints--;
    return a;
  }
}
