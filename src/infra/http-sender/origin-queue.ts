type Queued = { path: string; settled: boolean };

/**
 * One origin's attempts waiting for a connection, first come first served, except that an
 * endpoint (a path and query of the origin) whose requests hold half the origin's connections or
 * more gives way to the first attempt of another endpoint that waits: the endpoints of one host
 * (a shared webhook service) share its connections, and one that hangs or answers slowly holds
 * at most half of them while the others wait. One endpoint alone keeps them all.
 */
export class OriginQueue<A extends Queued> {
  private items: A[] = [];
  /** Attempts queued per path (settled ones included until they leave the queue). */
  private waiting = new Map<string, number>();
  /** Connections carrying a request per path. */
  private held = new Map<string, number>();

  get length(): number {
    return this.items.length;
  }

  [Symbol.iterator](): Iterator<A> {
    return this.items[Symbol.iterator]();
  }

  push(a: A): void {
    this.items.push(a);
    add(this.waiting, a.path, 1);
  }

  /** Back at the front (a request sent once more on a new connection). */
  unshift(a: A): void {
    this.items.unshift(a);
    add(this.waiting, a.path, 1);
  }

  /** Every attempt waiting, taken off the queue. */
  takeAll(): A[] {
    this.waiting.clear();
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
    const cap = Math.max(1, Math.floor(maxConns / 2));
    if (this.waiting.size > 1 && (this.held.get(head.path) ?? 0) >= cap) {
      for (let i = 1; i < this.items.length; i++) {
        const a = this.items[i]!;
        if (!a.settled && a.path !== head.path && (this.held.get(a.path) ?? 0) < cap) return this.remove(i);
      }
    }
    return this.remove(0);
  }

  /** A connection began carrying a request of `path`, or ended it. */
  holding(path: string, n: 1 | -1): void {
    add(this.held, path, n);
  }

  private remove(i: number): A {
    const a = i === 0 ? this.items.shift()! : this.items.splice(i, 1)[0]!;
    add(this.waiting, a.path, -1);
    return a;
  }
}

function add(counts: Map<string, number>, key: string, n: number): void {
  const next = (counts.get(key) ?? 0) + n;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
