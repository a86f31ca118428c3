import { describe, expect, it } from 'vitest';
import { inFlight } from '../../src/http/in-flight.js';

describe('inFlight', () => {
  it('gives each key its turns at once, then the next in order as turns come back; past its waiting bound, refuses', async () => {
    const turns = inFlight(2, 2);
    const a1 = await turns.take('a');
    const a2 = await turns.take('a');
    const order: string[] = [];
    const w1 = turns.take('a').then((r) => (order.push('w1'), r));
    const w2 = turns.take('a').then((r) => (order.push('w2'), r));
    await expect(turns.take('a')).rejects.toMatchObject({ code: 'rate_limited', retryAfter: 1 });
    // Another key has turns of its own.
    const b = await turns.take('b');
    a1();
    a1(); // given back once only
    const r1 = await w1;
    expect(order).toEqual(['w1']);
    a2();
    const r2 = await w2;
    expect(order).toEqual(['w1', 'w2']);
    r1();
    r2();
    b();
    expect(turns.size()).toBe(0);
  });
});
