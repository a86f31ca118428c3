import { describe, expect, it } from 'vitest';
import { ResponseError, ResponseParser, type ResponseHead } from '../../src/infra/http-sender/response-parser.js';

type Seen = { heads: ResponseHead[]; body: string; ends: boolean[] };

/** Feeds `text` in pieces of `step` bytes (1 = byte by byte, so every state is split mid-way). */
function parse(text: string, step = Infinity): { seen: Seen; parser: ResponseParser } {
  const seen: Seen = { heads: [], body: '', ends: [] };
  const parser = new ResponseParser({
    head: (h) => seen.heads.push(h),
    body: (c) => (seen.body += c.toString('latin1')),
    end: (reusable) => seen.ends.push(reusable),
  });
  const bytes = Buffer.from(text, 'latin1');
  for (let i = 0; i < bytes.length; i += Math.min(step, bytes.length))
    parser.feed(bytes.subarray(i, i + Math.min(step, bytes.length)));
  return { seen, parser };
}

const STEPS = [Infinity, 1, 3, 7];

describe('ResponseParser: framing', () => {
  it.each(STEPS)('Content-Length: the status, exactly that many body bytes, reusable (pieces of %s)', (step) => {
    const { seen } = parse('HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello', step);
    expect(seen).toEqual({ heads: [{ status: 201, keepAliveMs: null }], body: 'hello', ends: [true] });
  });

  it.each(STEPS)('chunked: sizes in hex with extensions, trailers, reusable (pieces of %s)', (step) => {
    const { seen } = parse(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: yes\r\n\r\n',
      step,
    );
    expect(seen).toEqual({ heads: [{ status: 200, keepAliveMs: null }], body: 'hello, world!!!', ends: [true] });
  });

  it('no length and no coding: the body runs to the close, and the connection is not reused', () => {
    const { seen, parser } = parse('HTTP/1.1 500 Internal Server Error\r\n\r\npartial answer', 4);
    expect(seen.ends).toEqual([]);
    expect(parser.eof()).toBe(true);
    expect(seen).toEqual({ heads: [{ status: 500, keepAliveMs: null }], body: 'partial answer', ends: [false] });
  });

  it('a close before the declared length is not a complete answer (the status stands; the sender keeps it)', () => {
    const { seen, parser } = parse('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    expect(parser.eof()).toBe(false);
    expect(seen.heads.map((h) => h.status)).toEqual([200]);
    expect(seen.ends).toEqual([]);
  });

  it.each([204, 304])('%s has no body whatever its headers say', (status) => {
    const { seen } = parse(`HTTP/1.1 ${status} X\r\nContent-Length: 12\r\n\r\n`);
    expect(seen).toEqual({ heads: [{ status, keepAliveMs: null }], body: '', ends: [true] });
  });

  it('Content-Length 0 ends at the head', () => {
    expect(parse('HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n').seen.ends).toEqual([true]);
  });

  it.each(STEPS)(
    'interim answers (100 Continue, 103 Early Hints) are skipped for the final one (pieces of %s)',
    (step) => {
      const { seen } = parse(
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 409 Conflict\r\nContent-Length: 2\r\n\r\nno',
        step,
      );
      expect(seen).toEqual({ heads: [{ status: 409, keepAliveMs: null }], body: 'no', ends: [true] });
    },
  );

  it('header names are matched whatever their case; values are trimmed', () => {
    const { seen } = parse('HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh:    3   \r\nKEEP-ALIVE: timeout=5, max=100\r\n\r\nabc');
    expect(seen).toEqual({ heads: [{ status: 200, keepAliveMs: 5000 }], body: 'abc', ends: [true] });
  });

  it('Connection: close, or HTTP/1.0, ends the connection after the answer', () => {
    expect(parse('HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n').seen.ends).toEqual([
      false,
    ]);
    expect(parse('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n').seen.ends).toEqual([false]);
  });

  it('repeated equal Content-Length values are one length', () => {
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok').seen).toMatchObject({
      body: 'ok',
      ends: [true],
    });
  });

  it('Transfer-Encoding with Content-Length: the coding frames the body, and the connection is not reused', () => {
    const { seen } = parse(
      'HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
    );
    expect(seen).toMatchObject({ body: 'ok', ends: [false] });
  });

  it('a coding other than chunked last: the body runs to the close', () => {
    const { seen, parser } = parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nxyz');
    expect(parser.eof()).toBe(true);
    expect(seen).toMatchObject({ body: 'xyz', ends: [false] });
  });

  it('started: false until the first byte of an answer, true from then on', () => {
    const parser = new ResponseParser({ head() {}, body() {}, end() {} });
    expect(parser.started).toBe(false);
    parser.feed(Buffer.from('HTT'));
    expect(parser.started).toBe(true);
  });

  it('started: true after a whole interim answer, while the final one is still awaited', () => {
    const { seen, parser } = parse('HTTP/1.1 100 Continue\r\n\r\n');
    expect(seen.heads).toEqual([]);
    expect(parser.started).toBe(true);
  });
});

describe('ResponseParser: refusals (the connection is dropped, the attempt fails unless a status was read)', () => {
  it.each([
    ['a malformed status line', 'HTTP/1.1 2000 OK\r\n\r\n'],
    ['a status below 100', 'HTTP/1.1 099 Odd\r\n\r\n'],
    ['not HTTP/1.x', 'HTTP/2 200\r\n\r\n'],
    ['garbage', 'hello there\r\n\r\n'],
    ['a header line without a colon', 'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n'],
    ['a space before the colon', 'HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\nx'],
    ['an obsolete folded header line', 'HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n'],
    ['conflicting Content-Length values', 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx'],
    ['a negative Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'],
    ['an unasked upgrade', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n'],
    ['a malformed chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
    ['chunk data longer than its size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokay\r\n'],
    ['bytes after a complete answer', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n'],
  ])('%s', (_why, text) => {
    expect(() => parse(text)).toThrow(ResponseError);
    expect(() => parse(text, 1)).toThrow(ResponseError);
  });

  it('a head that never ends is refused past 64 KiB', () => {
    const parser = new ResponseParser({ head() {}, body() {}, end() {} });
    parser.feed(Buffer.from('HTTP/1.1 200 OK\r\n'));
    const line = Buffer.from(`X-Pad: ${'a'.repeat(1000)}\r\n`);
    expect(() => {
      for (let i = 0; i < 100; i++) parser.feed(line);
    }).toThrow(/head too large/);
  });
});
