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
    // One that declares a body may still send it: its connection is not reused.
    expect(seen).toEqual({ heads: [{ status, keepAliveMs: null }], body: '', ends: [false] });
  });

  it('a 204 that declares no body leaves its connection reusable', () => {
    expect(parse('HTTP/1.1 204 No Content\r\n\r\n').seen.ends).toEqual([true]);
    expect(parse('HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n').seen.ends).toEqual([true]);
    expect(parse('HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n').seen.ends).toEqual([false]);
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

  it('a coding other than chunked last: the body runs to the close', () => {
    const { seen, parser } = parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nxyz');
    expect(parser.eof()).toBe(true);
    expect(seen).toMatchObject({ body: 'xyz', ends: [false] });
  });

  // The framing headers are read as Node's parser (llhttp) reads them, whitespace included.
  it.each([
    ['chunked after other codings', 'gzip, chunked', true],
    ['chunked with spaces after it', 'chunked  ', true],
    ['chunked with a tab after it', 'chunked\t', false],
    ['chunked, then a comma', 'chunked,', false],
    ['chunked with a parameter', 'chunked;q=1', false],
  ])('Transfer-Encoding, %s: chunked %s', (_why, coding, chunked) => {
    const { seen, parser } = parse(`HTTP/1.1 200 OK\r\nTransfer-Encoding: ${coding}\r\n\r\n2\r\nok\r\n0\r\n\r\n`);
    if (!chunked) expect(parser.eof()).toBe(true);
    expect(seen).toMatchObject({ body: chunked ? 'ok' : '2\r\nok\r\n0\r\n\r\n', ends: [chunked] });
  });

  it('the last Transfer-Encoding header counts; an empty one names no coding', () => {
    const text =
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding:\r\n\r\n';
    expect(parse(`${text}2\r\nok\r\n0\r\n\r\n`).seen).toMatchObject({ body: 'ok', ends: [true] });
  });

  it.each(STEPS)('leading zeros in lengths and chunk sizes; chunk extensions of every form (pieces of %s)', (step) => {
    const length = parse('HTTP/1.1 200 OK\r\nContent-Length: 000000000000000000002\r\n\r\nok', step);
    expect(length.seen).toMatchObject({ body: 'ok', ends: [true] });
    const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
    const chunked = parse(
      `${head}00000000000000000002;a;b=c;d="q;\\"x";;e;=f;g=\r\nok\r\n000;x=y\r\nX-T: 1\r\nY:\r\n\r\n`,
      step,
    );
    expect(chunked.seen).toMatchObject({ body: 'ok', ends: [true] });
  });

  it('Proxy-Connection: close ends the connection after the answer, as Connection: close does', () => {
    expect(parse('HTTP/1.1 200 OK\r\nProxy-Connection: close\r\nContent-Length: 0\r\n\r\n').seen.ends).toEqual([false]);
  });

  it('an interim answer other than 100, 102 or 103 has no body either, whatever its headers say', () => {
    const { seen } = parse(
      'HTTP/1.1 150 Odd\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    );
    expect(seen).toEqual({ heads: [{ status: 200, keepAliveMs: null }], body: 'ok', ends: [true] });
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
    [
      'a Content-Length given twice, even the same',
      'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok',
    ],
    ['a list of Content-Length values, even the same', 'HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok'],
    ['a Content-Length with a tab after it', 'HTTP/1.1 200 OK\r\nContent-Length: 2\t\r\n\r\nok'],
    ['an empty Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nok'],
    ['a Content-Length of 16 digits', 'HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000\r\n\r\nok'],
    ['a negative Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n'],
    [
      'Content-Length, then Transfer-Encoding',
      'HTTP/1.1 200 OK\r\nContent-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    [
      'Transfer-Encoding, then Content-Length',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nok',
    ],
    [
      'Content-Length with an empty Transfer-Encoding',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\nContent-Length: 2\r\n\r\nok',
    ],
    ['both framings on a 204', 'HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n'],
    ['a status line ending in a bare LF', 'HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n'],
    ['a CR in the reason phrase', 'HTTP/1.1 200 O\rK\r\nContent-Length: 0\r\n\r\n'],
    ['a status line ending in CR CR CR LF', 'HTTP/1.1 200 OK\r\r\r\n'],
    ['an empty line before the status line', '\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'],
    ['HTTP/2.0', 'HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n'],
    ['HTTP/0.9', 'HTTP/0.9 200 OK\r\nContent-Length: 0\r\n\r\n'],
    ['a header line ending in a bare LF', 'HTTP/1.1 200 OK\r\nX-A: 1\nContent-Length: 0\r\n\r\n'],
    ['a control byte in a header value', 'HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 0\r\n\r\n'],
    ['DEL in a header value', 'HTTP/1.1 200 OK\r\nX-A: a\x7fb\r\nContent-Length: 0\r\n\r\n'],
    [
      'an interim answer that closes the connection',
      'HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\nHTTP/1.1 200 OK\r\n\r\n',
    ],
    ['an interim answer in HTTP/1.0', 'HTTP/1.0 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'],
    ['an unasked upgrade', 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n'],
    ['a malformed chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
    ['chunk data longer than its size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokay\r\n'],
    ['whitespace after a chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 \r\nok\r\n0\r\n\r\n'],
    ['a chunk size of 14 hex digits', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000\r\nok'],
    [
      'a chunk-size line ending in a bare LF',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n',
    ],
    ['chunk data ending in a bare LF', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\n0\r\n\r\n'],
    [
      'a chunk extension ending in a semicolon',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;\r\nok\r\n0\r\n\r\n',
    ],
    [
      'whitespace in a chunk extension',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2; a=b\r\nok\r\n0\r\n\r\n',
    ],
    [
      'bytes after a quoted chunk extension',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;a="x"y\r\nok\r\n0\r\n\r\n',
    ],
    ['a trailer line without a colon', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad\r\n\r\n'],
    [
      'a Content-Length among the trailers',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\ncontent-length: 5\r\n\r\n',
    ],
    ['trailers ending in a bare LF', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\n'],
    ['bytes after a complete answer', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n'],
  ])('%s', (_why, text) => {
    expect(() => parse(text)).toThrow(ResponseError);
    expect(() => parse(text, 1)).toThrow(ResponseError);
  });

  it('a head or its trailers past 16 KiB are refused, whether or not their end has come', () => {
    const pad = `X-Pad: ${'a'.repeat(17_000)}\r\n`;
    expect(() => parse(`HTTP/1.1 200 OK\r\n${pad}Content-Length: 0\r\n\r\n`)).toThrow(/head too large/);
    expect(() => parse(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n${pad}\r\n`, 1000)).toThrow(
      /head too large/,
    );
  });

  it.each(STEPS)('a head of exactly 16 KiB is read, one byte more refused (pieces of %s)', (step) => {
    const head = (bytes: number) => {
      const start = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Pad: ';
      return `${start}${'a'.repeat(bytes - start.length)}\r\n\r\nok`;
    };
    expect(parse(head(16 * 1024), step).seen).toEqual({
      heads: [{ status: 200, keepAliveMs: null }],
      body: 'ok',
      ends: [true],
    });
    expect(() => parse(head(16 * 1024 + 1), step)).toThrow(/head too large/);
  });

  it('a head split early, then ended in a read that also holds a large body, is read with all its body', () => {
    const body = 'b'.repeat(40_000);
    const text = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`, 'latin1');
    const seen: Seen = { heads: [], body: '', ends: [] };
    const parser = new ResponseParser({
      head: (h) => seen.heads.push(h),
      body: (c) => (seen.body += c.toString('latin1')),
      end: (reusable) => seen.ends.push(reusable),
    });
    parser.feed(text.subarray(0, 10));
    parser.feed(text.subarray(10));
    expect(seen).toEqual({ heads: [{ status: 200, keepAliveMs: null }], body, ends: [true] });
  });

  it('interim heads sent a byte at a time, then the final one, are each read whole', () => {
    const interim = `HTTP/1.1 103 Early Hints\r\n${'Link: </a.css>\r\n'.repeat(900)}\r\n`;
    const { seen } = parse(`${interim.repeat(3)}HTTP/1.1 204 No Content\r\n\r\n`, 1);
    expect(seen).toEqual({ heads: [{ status: 204, keepAliveMs: null }], body: '', ends: [true] });
  });

  it('a head that never ends is refused past 16 KiB', () => {
    const parser = new ResponseParser({ head() {}, body() {}, end() {} });
    parser.feed(Buffer.from('HTTP/1.1 200 OK\r\n'));
    const line = Buffer.from(`X-Pad: ${'a'.repeat(1000)}\r\n`);
    expect(() => {
      for (let i = 0; i < 20; i++) parser.feed(line);
    }).toThrow(/head too large/);
  });
});
