import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, testApp, type Harness } from '../support/app.js';

/**
 * 503 answers (docs/operations.md, Logs): a request that reaches a closing server (on a
 * connection kept alive from before) is refused with a problem like any outage, and 503s are logged once a second by cause, not one line each.
 */

type Line = { level: number; msg: string; refused?: number };
function capturedLogger() {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h?.close());

/**
 * Every byte the server sends on one connection, until it closes it: `first` at once, `then`
 * on the same (kept-alive) connection once the first answer is in.
 */
function exchange(port: number, first: string, then: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let answered = false;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(first));
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (!answered && Buffer.concat(chunks).includes('{"ok":true}')) {
        answered = true;
        socket.write(then);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/**
 * What a server answers, once it has begun to close, to `path` asked on a connection kept alive
 * from a request that was in flight when the close began (with `ready` as its readiness).
 */
async function askedWhileClosing(path: string, ready?: (closing: boolean) => boolean): Promise<string> {
  let closing = false;
  const app = await testApp({ deps: h.deps, logger: false, ...(ready ? { ready: async () => ready(closing) } : {}) });
  let entered!: () => void;
  const inFlight = new Promise<void>((r) => (entered = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  app.get('/test-gate', async () => {
    entered();
    await gate;
    return { ok: true };
  });
  let closingSeen!: () => void;
  const seen = new Promise<void>((r) => (closingSeen = r));
  // Registered after the app's own, so it runs once the app knows it is closing.
  app.addHook('preClose', (done) => {
    closing = true;
    closingSeen();
    done();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as net.AddressInfo).port;
  const answer = exchange(
    port,
    'GET /test-gate HTTP/1.1\r\nHost: t\r\n\r\n',
    `GET ${path} HTTP/1.1\r\nHost: t\r\n\r\n`,
  );
  await inFlight;
  const closed = app.close();
  await seen;
  release();
  const raw = await answer;
  await closed;
  const [first, second] = raw.split(/(?=HTTP\/1\.1 )/);
  expect(first).toMatch(/^HTTP\/1\.1 200 /);
  return second!;
}

const bodyOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

describe('a closing server', () => {
  it('answers a request on a kept-alive connection with a 503 problem and Retry-After, then closes the connection', async () => {
    const second = await askedWhileClosing('/polls?accountId=acc_x');
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(second).toMatch(/\r\ncontent-type: application\/problem\+json/i);
    expect(second).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(second).toMatch(/\r\nconnection: close\r\n/i);
    expect(bodyOf(second)).toMatchObject({ status: 503, code: 'unavailable', type: '/problems/unavailable' });
  });
});

describe('the probes of a closing server', () => {
  it('answer for themselves: /readyz with its own document, not the refusal', async () => {
    const second = await askedWhileClosing('/readyz', (closing) => !closing);
    expect(second).toMatch(/^HTTP\/1\.1 503 /);
    expect(bodyOf(second)).toEqual({ status: 'unavailable' });
  });
});

describe('503 answers in the log', () => {
  it('a storage outage is a warning at most once a second with the count refused, and no error line per request', async () => {
    const log = capturedLogger();
    const outage = new Error('connection terminated unexpectedly');
    const app = await testApp({ deps: h.deps, logger: log.logger, isUnavailable: (e) => e === outage });
    app.get('/test-outage', async () => {
      throw outage;
    });
    const started = Date.now();
    try {
      for (let i = 0; i < 30; i++) {
        const res = await app.inject({ url: '/test-outage' });
        expect(res.statusCode).toBe(503);
        expect(res.headers['retry-after']).toBe('5');
        expect(res.json()).toMatchObject({ code: 'unavailable' });
      }
    } finally {
      await app.close();
    }
    const seconds = Math.ceil((Date.now() - started) / 1000);
    const warned = log.lines.filter((l) => l.msg === 'storage unavailable');
    expect(warned.length).toBeGreaterThanOrEqual(1);
    expect(warned.length).toBeLessThanOrEqual(seconds + 1);
    expect(warned.every((l) => l.level === 40)).toBe(true);
    expect(warned[0]!.refused).toBe(1);
    expect(log.lines.filter((l) => l.msg === 'request failed')).toEqual([]);
  });

  it('an answer of 500 is still an error line of its own', async () => {
    const log = capturedLogger();
    const app = await testApp({ deps: h.deps, logger: log.logger });
    app.get('/test-bug', async () => {
      throw new Error('a bug');
    });
    try {
      for (let i = 0; i < 3; i++) expect((await app.inject({ url: '/test-bug' })).statusCode).toBe(500);
    } finally {
      await app.close();
    }
    expect(log.lines.filter((l) => l.msg === 'request failed' && l.level === 50)).toHaveLength(3);
  });
});
