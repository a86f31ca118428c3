import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deadline, readChunks } from '../../web/src/ui/deadline.js';

/**
 * The dashboard's deadline on a call (web/src/ui/deadline.ts): it fires once its seconds pass
 * with no progress, and a body that keeps arriving moves it on chunk by chunk. The clock is
 * vitest's; the dashboard test (test/e2e/dashboard.test.ts) shows the messages in Chromium.
 */

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A body whose chunks the test sends one by one. */
function trickle() {
  let control!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (control = c) });
  return { body, send: (text: string) => control.enqueue(new TextEncoder().encode(text)), end: () => control.close() };
}

describe('the dashboard call deadline', () => {
  it('fires after its seconds without progress, and not before', async () => {
    const limit = deadline(30);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(limit.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(limit.signal.aborted).toBe(true);
  });

  it('starts again from each chunk a body delivers, so a slow export that keeps arriving is read whole', async () => {
    const limit = deadline(30);
    const { body, send, end } = trickle();
    const read = readChunks(body, () => limit.progress());
    // Four chunks 20 s apart: 80 s in all, never 30 s without one.
    for (const part of ['id,answer\n', 'r1,yes\n', 'r2,no\n', 'r3,yes\n']) {
      await vi.advanceTimersByTimeAsync(20_000);
      send(part);
      await vi.advanceTimersByTimeAsync(0);
    }
    end();
    const chunks = await read;
    limit.clear();
    expect(limit.signal.aborted).toBe(false);
    expect(chunks.map((c) => new TextDecoder().decode(c)).join('')).toBe('id,answer\nr1,yes\nr2,no\nr3,yes\n');
  });

  it('fires 30 s after the last chunk of a body that stops arriving', async () => {
    const limit = deadline(30);
    const { body, send } = trickle();
    void readChunks(body, () => limit.progress()).catch(() => undefined);
    await vi.advanceTimersByTimeAsync(25_000);
    send('id,answer\n');
    await vi.advanceTimersByTimeAsync(29_000);
    expect(limit.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(limit.signal.aborted).toBe(true);
  });

  it('never fires once cleared', async () => {
    const limit = deadline(30);
    limit.clear();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(limit.signal.aborted).toBe(false);
  });
});
