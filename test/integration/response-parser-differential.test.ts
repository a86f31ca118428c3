import fc from 'fast-check';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseError, ResponseParser } from '../../src/infra/http-sender/response-parser.js';

/**
 * Differential fuzzing of the sender's response parser against Node's own (llhttp): generated
 * answers, several per kept-alive connection, each with its interim 1xx answers, framed by
 * Content-Length, chunked coding or the close, with the malformations servers and attackers
 * send. Each connection's bytes are fed to both, whole and split at random byte boundaries.
 *
 * Property: an answer our parser completes has the status, body length and end (where the next
 * answer starts) that llhttp gives it, and is reusable only if llhttp keeps the connection
 * alive; a status it reports is the one llhttp reports; what llhttp refuses, it refuses too.
 * Where llhttp completes an answer that ours refuses, the refusal must be one of STRICTER.
 *
 * llhttp is driven as node:http's client drives it (its HTTPParser, strict, one parser per
 * request, 1xx bodies skipped), fed a byte at a time so each answer's end is known to the byte;
 * a second property checks that model against a real node:http client on a socket.
 * A failure prints the seed: replay with CANVASS_FUZZ_SEED=<seed> (CANVASS_FUZZ_RUNS for more runs).
 */

const SEED = Number(process.env.CANVASS_FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.CANVASS_FUZZ_RUNS ?? 8_000);
const SOCKET_RUNS = Math.ceil(RUNS / 10);

/**
 * Our refusals of answers llhttp completes, each deliberate (a refused answer fails its attempt,
 * which is retried; a mis-framed one could be taken for the next), by our error message:
 */
const STRICTER = new Set([
  // A 101 is the server leaving HTTP unasked; node:http hands the socket to 'upgrade' or destroys it.
  'the server switched protocols unasked',
  // The sender speaks HTTP/1.1; llhttp also takes HTTP/0.9 and HTTP/2.0 status lines.
  'not HTTP/1.0 or HTTP/1.1',
  // Status codes start at 100; llhttp takes 000 to 099 as final answers.
  'a status below 100',
  // 1xx answers are HTTP/1.1's; llhttp goes on after an HTTP/1.0 one that says keep-alive.
  'an interim answer in HTTP/1.0',
  // llhttp ignores an empty Transfer-Encoding before a Content-Length (not after it): a smuggling shape.
  'Content-Length with an empty Transfer-Encoding',
  // llhttp skips line ends before a status line; a stray line end here is a server out of step.
  'an empty line before the status line',
  // llhttp takes CR CR CR LF after a status line for the end of the head; a bare CR ends no line here.
  'a CR in the status line',
  // Lengths of 16 digits or more (llhttp takes up to 2^64 - 1, even on answers without a body).
  'Content-Length too large',
  // Chunk sizes of 14 hex digits or more (llhttp takes up to 2^64 - 1).
  'chunk size too large',
  // Heads and trailers past 16 KiB counting every byte; Node counts only names, values and the status.
  'response head too large',
  // Chunk-size lines past 8 KiB; Node allows 16 KiB of chunk extensions.
  'chunk line too long',
]);

// ---------------------------------------------------------------------------------------------
// llhttp, as node:http's client uses it

type NodeParser = {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(b: Buffer): number | (Error & { code: string; reason: string });
  finish(): undefined | (Error & { code: string; reason: string });
  close(): void;
  [k: number]: unknown;
};
type NodeParserClass = {
  new (): NodeParser;
  RESPONSE: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
  kOnExecute: number;
  kLenientNone: number;
};
const { HTTPParser } = createRequire(import.meta.url)('_http_common') as { HTTPParser: NodeParserClass };

/** One final answer as a parser saw it: the interim statuses before it, then it. */
type Framed =
  | { ok: true; interim: number[]; status: number; body: number; end: number; keepAlive: boolean }
  | { ok: false; interim: number[]; status: number | null; why: string };

// node:http's client answers 1 (skip the body) for every 1xx but 101: an interim answer has none.
const informational = (s: number) => s >= 100 && s < 200 && s !== 101;

/** llhttp's framing of a connection's bytes (then its close), answer after answer. */
function llhttp(bytes: Buffer): Framed[] {
  const out: Framed[] = [];
  let at = 0;
  while (at < bytes.length) {
    // A fresh parser per answer, as the client takes one per request.
    const p = new HTTPParser();
    p.initialize(HTTPParser.RESPONSE, {}, 0, HTTPParser.kLenientNone);
    const interim: number[] = [];
    let head: { status: number; body: number; keepAlive: boolean } | null = null;
    let complete = false;
    p[HTTPParser.kOnHeaders] = () => {};
    p[HTTPParser.kOnExecute] = () => {};
    p[HTTPParser.kOnHeadersComplete] = (
      _maj: number,
      _min: number,
      _h: unknown,
      _m: unknown,
      _u: unknown,
      status: number,
      _msg: unknown,
      _up: boolean,
      keepAlive: boolean,
    ) => {
      head = { status, body: 0, keepAlive };
      return informational(status) ? 1 : 0;
    };
    p[HTTPParser.kOnBody] = (b: Buffer) => {
      head!.body += b.length;
    };
    p[HTTPParser.kOnMessageComplete] = () => {
      if (informational(head!.status)) {
        interim.push(head!.status);
        head = null;
      } else complete = true;
    };
    let why: string | null = null;
    let i = at;
    // A byte at a time: the answer ends at the byte whose parse completed it.
    while (i < bytes.length && !complete && !why) {
      const r = p.execute(bytes.subarray(i, i + 1));
      i++;
      if (typeof r !== 'number') why = `${r.code} ${r.reason}`;
    }
    if (!complete && !why) {
      const r = p.finish();
      if (r) why = `${r.code} ${r.reason}`;
    }
    p.close();
    const h = head as { status: number; body: number; keepAlive: boolean } | null;
    if (!complete || !h) {
      out.push({ ok: false, interim, status: h?.status ?? null, why: why ?? 'incomplete at the close' });
      break;
    }
    out.push({ ok: true, interim, status: h.status, body: h.body, end: i, keepAlive: h.keepAlive });
    if (!h.keepAlive) break;
    at = i;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Ours, as the sender uses it: a parser per answer, fed the reads as they come

type Ours = {
  status: number | null;
  ended: boolean;
  reusable: boolean;
  body: number;
  error: string | null;
  eof: boolean;
};

/** Feeds our parser the bytes from..to of `bytes` in the pieces `cuts` makes, then the close if `close`. */
function ours(bytes: Buffer, from: number, to: number, cuts: number[], close: boolean): Ours {
  const o: Ours = { status: null, ended: false, reusable: false, body: 0, error: null, eof: false };
  const parser = new ResponseParser({
    head: (h) => {
      if (o.status !== null) throw new Error('two heads for one answer');
      o.status = h.status;
    },
    body: (c) => {
      if (o.ended) throw new Error('body after the end');
      o.body += c.length;
    },
    end: (reusable) => {
      if (o.ended) throw new Error('two ends for one answer');
      o.ended = true;
      o.reusable = reusable;
    },
  });
  const points = [from, ...cuts.filter((c) => c > from && c < to), to];
  try {
    for (let k = 1; k < points.length; k++) {
      parser.feed(bytes.subarray(points[k - 1], points[k]));
    }
    if (close && !o.ended) o.eof = parser.eof();
  } catch (err) {
    if (!(err instanceof ResponseError)) throw err;
    o.error = err.message;
  }
  return o;
}

/** Checks ours against llhttp over one connection's bytes; returns why they disagree, or null. */
function disagreement(bytes: Buffer, cuts: number[]): string | null {
  const theirs = llhttp(bytes);
  let at = 0;
  for (const [n, t] of theirs.entries()) {
    const label = `answer ${n} (from byte ${at})`;
    if (t.ok) {
      const o = ours(bytes, at, t.end, cuts, t.end === bytes.length);
      if (o.status !== null && o.status !== t.status) return `${label}: status ${o.status}, llhttp ${t.status}`;
      if (o.error !== null) {
        if (STRICTER.has(o.error)) return null;
        return `${label}: ours refused (${o.error}); llhttp: status ${t.status}, ${t.body} body bytes, ending at ${t.end}`;
      }
      if (!o.ended && !o.eof)
        return `${label}: ours not complete at byte ${t.end}, where llhttp ends it (status ${t.status}, ${t.body} body bytes)`;
      if (o.body !== t.body) return `${label}: ${o.body} body bytes, llhttp ${t.body}`;
      if (o.reusable && !t.keepAlive) return `${label}: ours would reuse the connection, llhttp would not`;
      if (!o.reusable || o.eof) return null;
      at = t.end;
    } else {
      const o = ours(bytes, at, bytes.length, cuts, true);
      if (o.ended || o.eof)
        return `${label}: ours completed it (status ${o.status}, ${o.body} body bytes); llhttp refused (${t.why})`;
      if (o.status !== null && o.status !== t.status)
        return `${label}: ours reported status ${o.status}; llhttp ${t.status ?? 'none'} (${t.why})`;
      return null;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Answers

/**
 * Answers whose every part is mostly the usual and now and then (weight `odd` in 100 at each
 * part) something odd, malformed or hostile: with `odd` 0 only well-formed answers, with a few
 * one oddity or two per answer, with many mostly garbage.
 */
function answerArb(odd: number): fc.Arbitrary<string> {
  const w = (weight: number) => Math.max(1, Math.round(odd * weight * 10));
  const pick = <T>(common: T[], rare: T[], weight = 1): fc.Arbitrary<T> =>
    odd === 0
      ? fc.constantFrom(...common)
      : fc.oneof(
          { weight: 1000, arbitrary: fc.constantFrom(...common) },
          { weight: w(weight), arbitrary: fc.constantFrom(...rare) },
        );
  const rarely = <T>(arb: fc.Arbitrary<T>, weight = 1): fc.Arbitrary<T | null> =>
    odd === 0
      ? fc.constant(null)
      : fc.oneof({ weight: 1000, arbitrary: fc.constant(null) }, { weight: w(weight), arbitrary: arb });
  const sometimes = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { freq: 2 });

  // Line ends: CRLF, now and then a bare LF or CR or another oddity.
  const eol = pick(['\r\n'], ['\n', '\r', ' \r\n', '\r\r\n', '\n\r']);
  // Optional whitespace, and whitespace that is not.
  const ows = pick(['', ' '], ['  ', '\t', ' \t', '\t ', '\v', '\f', '\xa0']);
  const oddChar = fc.constantFrom(
    '\t',
    ' ',
    '\x01',
    '\x7f',
    '\x80',
    '\xff',
    '\0',
    '\r',
    '\n',
    ':',
    ';',
    ',',
    '"',
    '=',
    '\\',
  );
  const plain = fc.constantFrom(...'abcXYZ019-_./ ');
  const text = (max: number) =>
    fc
      .array(odd === 0 ? plain : fc.oneof({ weight: 1000, arbitrary: plain }, { weight: w(1), arbitrary: oddChar }), {
        maxLength: max,
      })
      .map((a) => a.join(''));

  const version = pick(
    ['HTTP/1.1'],
    [
      'HTTP/1.0',
      'HTTP/1.0',
      'HTTP/1.0',
      'HTTP/0.9',
      'HTTP/2.0',
      'HTTP/1.2',
      'HTTP/1.10',
      'http/1.1',
      'HTTP/1.1 ',
      'HTTP/11',
      'HTTP/1.',
    ],
    2,
  );
  const finalStatus = fc.oneof(
    fc.constantFrom('200', '201', '202', '204', '304', '404', '500', '503'),
    pick(['200'], ['099', '000', '600', '700', '999', '101', '1000', '20', '2x0', ' 200', '200 ']),
  );
  const interimStatus = pick(['100', '102', '103'], ['101', '150', '199', '104']);
  const reason = pick(['OK', 'Fine', ''], ['Some\treason', 'x\x01y', '\x80\xff', 'OK ', ' OK', 'a\rb', 'a\nb', '\0']);
  const statusLine = (status: fc.Arbitrary<string>) =>
    fc
      .tuple(version, status, reason, pick([' '], ['', '  ', '\t']))
      .map(([v, st, r, sp]) => (r === '' && sp === ' ' ? `${v} ${st}` : `${v} ${st}${sp}${r}`));

  const otherName = fc.oneof(
    fc.constantFrom('Content-Type', 'Link', 'Date', 'X-A', 'Server', 'Keep-Alive', 'Connection'),
    pick(
      ['X-B'],
      [
        'Content-Length ',
        ' X-A',
        'X A',
        'Content-Lengthx',
        'Transfer-Encodingx',
        '',
        'X\x01',
        'Proxy-Connection',
        'Upgrade',
        'X\x80',
      ],
    ),
  );
  const otherValue = fc.oneof(
    fc.constantFrom('text/plain', '</a.css>; rel=preload', 'keep-alive', 'timeout=5, max=100', 'close'),
    pick(
      ['abc'],
      [
        'closed',
        'Close',
        'close\t',
        '\tclose',
        'keep-alive, close',
        'upgrade',
        'x, close',
        'x close',
        'close,',
        'websocket',
        'chunked',
      ],
    ),
    text(10),
  );
  const longValue = fc.constantFrom(8_000, 16_300, 16_500, 20_000).map((n) => 'v'.repeat(n));
  /** A header line with its whitespace around the value; now and then one folded over two lines. */
  const header = (name: fc.Arbitrary<string>, value: fc.Arbitrary<string>) =>
    fc
      .tuple(
        name,
        pick([':'], [' :', '\t:', '::']),
        ows,
        value,
        ows,
        rarely(fc.tuple(eol, fc.constantFrom(' ', '\t', ' \t'), text(6))),
        rarely(longValue, 0.2),
      )
      .map(([n, colon, a, v, b, fold, long]) => `${n}${colon}${a}${long ?? v}${b}${fold ? fold.join('') : ''}`);
  const clName = pick(['Content-Length', 'content-length'], ['CONTENT-LENGTH', 'Content-length']);
  const teName = pick(['Transfer-Encoding', 'transfer-encoding'], ['TRANSFER-ENCODING']);
  const teChunked = pick(
    ['chunked'],
    [
      'Chunked',
      'CHUNKED',
      'gzip, chunked',
      'gzip,chunked',
      'identity, chunked',
      'chunked, chunked',
      'chunked,',
      ',chunked',
      'chunked ,',
      'chunkedx',
      'x-chunked',
      'chunked;q=1',
      'gzip;q=1, chunked',
      'gzip,  chunked',
      'chunked\t',
      'chunked ',
      'chunked \t',
      '"chunked"',
      '',
    ],
    4,
  );
  const teOther = fc.constantFrom(
    'gzip',
    'chunked, gzip',
    'deflate',
    'identity',
    'gzip, identity',
    'chunked,gzip',
    'chunked;q=1',
  );
  const hugeNumber = fc.constantFrom(
    '18446744073709551615',
    '18446744073709551616',
    '99999999999999999999',
    '9007199254740993',
    '4294967296',
    '1000000000000000',
    '999999999999999',
    '0000000000000000000001',
  );

  /** A Content-Length value for a body of `n` bytes: mostly right, sometimes not, sometimes odd. */
  const clValue = (n: number) =>
    fc
      .tuple(
        pick(
          [String(n)],
          [
            String(n + 1),
            String(Math.max(0, n - 1)),
            `0${n}`,
            `00000000000000000${n}`,
            `+${n}`,
            `-${n}`,
            `${n}, ${n}`,
            `${n},${n + 1}`,
            `${n} ${n}`,
            `0x${n.toString(16)}`,
            `${n}.0`,
            '',
            `${n}\t`,
            `\t${n}`,
            `${n} `,
          ],
          4,
        ),
        rarely(hugeNumber),
      )
      .map(([v, huge]) => huge ?? v);

  const body = (max: number) =>
    fc.oneof(
      { weight: 8, arbitrary: text(max) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('HTTP/1.1 200 OK\r\n\r\n', '0\r\n\r\n', '\r\n', 'HTTP/1.1 204 No Content\r\n\r\n'),
      },
    );

  /** A chunk-size line for `n` bytes: the size, its whitespace and extensions. */
  const chunkSize = (n: number) =>
    fc
      .tuple(
        pick(
          [n.toString(16), n.toString(16).toUpperCase()],
          [
            `0${n.toString(16)}`,
            `0000000000000000${n.toString(16)}`,
            (n + 1).toString(16),
            n ? (n - 1).toString(16) : 'z',
            `-${n}`,
            `0x${n}`,
            '',
            'g',
            `${n.toString(16)}_`,
          ],
          4,
        ),
        rarely(
          fc.constantFrom(
            'ffffffffffffffff',
            '10000000000000000',
            'fffffffffffffffff',
            '7fffffffffffffff',
            '1000000000000000',
            'fffffffffffff',
            '10000000000000',
          ),
        ),
        pick([''], [' ', '\t', '  ']),
        fc.oneof(
          fc.constantFrom('', '', '', ';a', ';a=b', ';a="q;\\"x"', ';a=b;c'),
          pick(
            [';x=1'],
            [
              `;a=${'v'.repeat(9_000)}`,
              ' ;a=b',
              '; a=b',
              ';a =b',
              ';a=b c',
              ';\x01',
              ';a="unterminated',
              ';=b',
              ';a=',
              ';',
              ';a;',
              ';;a',
              ';a="\\\x01"',
              ';a="\\\x80"',
              ';a=\x80',
              ';a="x"y',
              ';a=b\t',
            ],
            4,
          ),
        ),
      )
      .map(([size, huge, space, ext]) => `${huge ?? size}${space}${ext}`);

  /** The final answer's framing headers and the bytes after its head. */
  const framing: fc.Arbitrary<{ headers: string[]; body: string }> = fc.oneof(
    // Content-Length, perhaps given twice, perhaps with a Transfer-Encoding besides.
    body(24).chain((b) =>
      fc
        .tuple(
          header(clName, clValue(b.length)),
          rarely(header(clName, clValue(b.length)), 3),
          rarely(header(teName, fc.oneof(teChunked, teOther)), 3),
        )
        .map(([cl, again, te]) => ({ headers: [cl, ...(again ? [again] : []), ...(te ? [te] : [])], body: b })),
    ),
    // Chunked: sizes, extensions, the last chunk, trailers, the line ends of each.
    fc
      .tuple(
        fc.array(
          body(12).filter((c) => c.length > 0),
          { maxLength: 3 },
        ),
        pick(['0'], ['000', '0;a=b', '0 ', '00000000000000000000', ' 0', '0\t;x']),
        fc.oneof(
          { weight: 3, arbitrary: fc.constant([]) },
          {
            weight: 1,
            arbitrary: fc.array(
              header(
                fc.oneof(
                  otherName,
                  rarely(clName, 5).map((n) => n ?? 'X-T'),
                ),
                otherValue,
              ),
              { maxLength: 2 },
            ),
          },
        ),
        eol,
      )
      .chain(([chunks, last, trailers, end]) =>
        fc
          .tuple(
            fc.tuple(...chunks.map((c) => fc.tuple(chunkSize(c.length), eol, eol))),
            eol,
            fc.array(eol, { minLength: trailers.length, maxLength: trailers.length }),
          )
          .map(
            ([sizes, lastEol, trailerEols]) =>
              chunks.map((c, k) => `${sizes[k]![0]}${sizes[k]![1]}${c}${sizes[k]![2]}`).join('') +
              `${last}${lastEol}` +
              trailers.map((t, k) => `${t}${trailerEols[k]}`).join('') +
              end,
          ),
      )
      .chain((chunked) =>
        fc
          .tuple(
            header(teName, teChunked),
            rarely(header(clName, fc.constantFrom('0', '5', String(chunked.length))), 3),
            rarely(header(teName, fc.oneof(teChunked, teOther)), 3),
          )
          .map(([te, cl, again]) => ({
            headers: [...(cl ? [cl] : []), te, ...(again ? [again] : [])],
            body: chunked,
          })),
      ),
    // Delimited by the close: no framing, or a coding other than chunked last.
    fc.tuple(body(24), sometimes(header(teName, teOther))).map(([b, te]) => ({ headers: te ? [te] : [], body: b })),
  );

  /** An interim answer: its status line and a few headers. */
  const interim = fc.tuple(
    statusLine(interimStatus),
    fc.array(
      fc.oneof(
        { weight: 4, arbitrary: header(otherName, otherValue) },
        { weight: 1, arbitrary: header(clName, fc.constantFrom('0', '3')) },
        { weight: 1, arbitrary: header(teName, fc.oneof(teChunked, teOther)) },
      ),
      { maxLength: 2 },
    ),
  );

  return fc
    .tuple(
      fc.oneof(
        { weight: 3, arbitrary: fc.constant([]) },
        { weight: 1, arbitrary: fc.array(interim, { minLength: 1, maxLength: 3 }) },
      ),
      statusLine(finalStatus),
      fc.array(header(otherName, otherValue), { maxLength: 3 }),
      framing,
      fc.nat(),
      fc.array(eol, { minLength: 16, maxLength: 16 }),
    )
    .map(([interims, line, others, f, at, eols]) => {
      let k = 0;
      const head = (lines: string[]) =>
        lines.map((l) => l + eols[k++ % eols.length]).join('') + eols[k++ % eols.length];
      const headers = [...others];
      for (const h of f.headers) headers.splice(at % (headers.length + 1), 0, h);
      return interims.map(([l, hs]) => head([l, ...hs])).join('') + head([line, ...headers]) + f.body;
    });
}

const answer = fc.oneof(answerArb(0), answerArb(1), answerArb(4), answerArb(20));

/** A connection's answers, and where its reads split them (none, every byte, or some). */
const connection = fc.tuple(
  fc.array(answer, { minLength: 1, maxLength: 4 }),
  fc.oneof(
    { weight: 2, arbitrary: fc.constant('whole' as const) },
    { weight: 1, arbitrary: fc.constant('bytes' as const) },
    { weight: 6, arbitrary: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }) },
  ),
);

function cutsFor(length: number, split: 'whole' | 'bytes' | number[]): number[] {
  if (split === 'whole') return [];
  if (split === 'bytes') return Array.from({ length }, (_, i) => i);
  return split.map((n) => n % (length + 1)).sort((a, b) => a - b);
}

const latin1 = (s: string) => Buffer.from(s, 'latin1');
/** A connection's bytes as a string literal, long runs of one byte shortened. */
const shown = (bytes: Buffer) =>
  JSON.stringify(bytes.toString('latin1')).replace(
    /(.)\1{19,}/g,
    (run, c: string) => `${c.repeat(3)}…(${run.length} × ${c})…`,
  );

describe('response parser against llhttp', () => {
  it('frames every connection as llhttp does, or refuses it', () => {
    fc.assert(
      fc.property(connection, ([answers, split]) => {
        const bytes = latin1(answers.join(''));
        const why = disagreement(bytes, cutsFor(bytes.length, split));
        if (why) throw new Error(`${why}\nbytes: ${shown(bytes)}`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

describe('the llhttp model above against a node:http client on a socket', () => {
  type Plan = { answers: Buffer[]; cuts: number[]; offsets: number[]; last: number };
  type Seen = { interim: number[]; status: number | null; body: number; complete: boolean; error: string | null };
  let server: net.Server;
  let port = 0;
  let plan: Plan;
  let connections = 0;
  const sockets = new Set<net.Socket>();

  /** Writes answer `n` in the pieces the cuts make, a turn of the event loop between pieces. */
  async function write(socket: net.Socket, p: Plan, n: number): Promise<void> {
    const from = p.offsets[n]!;
    const to = p.offsets[n + 1]!;
    const points = [from, ...p.cuts.filter((c) => c > from && c < to), to];
    const bytes = Buffer.concat(p.answers);
    for (let k = 1; k < points.length && !socket.destroyed; k++) {
      socket.write(bytes.subarray(points[k - 1], points[k]));
      await new Promise((r) => setImmediate(r));
    }
    if (n === p.last) socket.end();
  }

  beforeAll(async () => {
    // Each request's answer is written when the request is in, as a webhook receiver would.
    server = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
      const p = plan;
      let n = 0;
      let pending = '';
      socket.on('data', (d: Buffer) => {
        pending += d.toString('latin1');
        for (let i = pending.indexOf('\r\n\r\n'); i >= 0; i = pending.indexOf('\r\n\r\n')) {
          pending = pending.slice(i + 4);
          if (n <= p.last) void write(socket, p, n++);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });

  function get(agent: http.Agent): Promise<Seen> {
    return new Promise<Seen>((resolve) => {
      const seen: Seen = { interim: [], status: null, body: 0, complete: false, error: null };
      const done = () => resolve(seen);
      const req = http.request({ host: '127.0.0.1', port, path: '/', agent });
      req.on('information', (info) => seen.interim.push(info.statusCode));
      req.on('response', (res) => {
        seen.status = res.statusCode ?? null;
        res.on('data', (c: Buffer) => (seen.body += c.length));
        res.on('end', () => {
          seen.complete = res.complete;
          done();
        });
        res.on('error', done);
        res.on('close', done);
      });
      req.on('error', (err) => {
        seen.error = err.message;
        done();
      });
      req.on('close', () => setImmediate(done));
      // A guard against a hang, should the client wait where the model says the answer is over.
      req.setTimeout(5_000, () => req.destroy(new Error('no answer')));
      req.end();
    });
  }

  it('sees what the model sees, answer by answer, on one kept-alive connection', async () => {
    await fc.assert(
      fc.asyncProperty(connection, async ([texts, split]) => {
        const answers = texts.map(latin1);
        const offsets = [0];
        for (const a of answers) offsets.push(offsets[offsets.length - 1]! + a.length);
        // The server writes answers while the model ends each where it was written to end, and
        // closes the connection after the first it does not (or after the last).
        const full = llhttp(Buffer.concat(answers));
        let last = answers.length - 1;
        for (let n = 0; n < answers.length; n++) {
          const t = full[n];
          if (!t?.ok || t.end !== offsets[n + 1] || !t.keepAlive) {
            last = n;
            break;
          }
        }
        const cuts = cutsFor(offsets[offsets.length - 1]!, split);
        plan = { answers, cuts, offsets, last };
        const model = llhttp(Buffer.concat(answers.slice(0, last + 1)));
        connections = 0;
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        const seen: Seen[] = [];
        try {
          for (let n = 0; n <= last; n++) {
            const s = await get(agent);
            seen.push(s);
            if (!s.complete) break;
          }
        } finally {
          agent.destroy();
        }
        const context = `\nbytes: ${shown(Buffer.concat(answers.slice(0, last + 1)))}\nmodel: ${JSON.stringify(model)}\nnode:http: ${JSON.stringify(seen)}`;
        expect(connections, context).toBe(1);
        for (const [n, t] of model.entries()) {
          // A 101 is not an answer to either; node:http's handling of it is no part of the model.
          if (t.status === 101 || t.interim.includes(101)) break;
          const s = seen[n];
          expect(s, context).toBeDefined();
          expect(s!.interim, context).toEqual(t.interim);
          if (!t.ok) {
            expect({ status: s!.status, complete: s!.complete }, context).toEqual({
              status: t.status,
              complete: false,
            });
            break;
          }
          expect(s!.status, context).toBe(t.status);
          // Past the end the model gives it, the rest of what was written is not the model's to say.
          if (t.end !== offsets[n + 1]) break;
          expect({ body: s!.body, complete: s!.complete }, context).toEqual({ body: t.body, complete: true });
        }
      }),
      { seed: SEED, numRuns: SOCKET_RUNS },
    );
  });
});
