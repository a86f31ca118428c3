/**
 * Frames HTTP/1.1 responses read from one connection (RFC 9112): the status, the body by
 * Content-Length, chunked coding or the connection's close, and whether the connection may carry
 * another request afterwards. No I/O: the sender feeds it the bytes a socket reads.
 *
 * Framing is read as Node's own parser (llhttp) reads it, whitespace rules included, and what it
 * refuses is refused here: a malformed status line, header or chunk line, a bare CR or LF for a
 * CRLF, a length given twice or beside a coding. Where it is lenient in a way that could mistake
 * one answer for another, this refuses as well: an upgrade nobody asked for, a version other than
 * 1.0 or 1.1, an empty line or a bare CR in the status line. A refused answer's connection is not
 * used again. test/integration/response-parser-differential.test.ts holds the two to this.
 */

export type ResponseHead = {
  status: number;
  /** The server's idle timeout for this connection (`Keep-Alive: timeout=N`), if it said. */
  keepAliveMs: number | null;
};

export interface ResponseSink {
  head(head: ResponseHead): void;
  body(chunk: Buffer): void;
  /** The response is complete. `reusable`: the connection may carry the next request. */
  end(reusable: boolean): void;
}

export class ResponseError extends Error {
  readonly code = 'CANVASS_BAD_RESPONSE';
}

// Node's own client refuses heads past 16 KiB (it counts fewer of their bytes than this does).
const MAX_HEAD_BYTES = 16 * 1024;
const MAX_LINE_BYTES = 8 * 1024;
// The bytes that frame an answer rather than carry it (its heads, interim ones included, and its
// chunk lines), over the whole answer: a server sending them without end (1xx after 1xx, chunks
// of one byte under long extensions) would hold the worker's thread parsing them until the
// deadline. A body cut at its 64 KiB read in one-byte chunks frames with about 320 KiB.
const MAX_FRAMING_BYTES = 512 * 1024;
// The reason phrase is any bytes but CR and LF.
const STATUS_LINE = /^HTTP\/(\d)\.(\d) (\d\d\d)(?: [^\r\n]*)?$/;
const TCHAR = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]";
// A header line: a token name, a colon, a value of tab, visible bytes, spaces and obs-text.
const FIELD = `${TCHAR}+:[\\t\\x20-\\x7e\\x80-\\xff]*`;
// Every header line of a head at once.
const HEADER_LINES = new RegExp(`(?:${FIELD}(?:\\r\\n|$))*`, 'y');
const TRAILER_LINE = new RegExp(`^${FIELD}$`);
// Leading whitespace, digits, trailing spaces only (a trailing tab is refused).
const CONTENT_LENGTH = /^[ \t]*(\d+) *$/;
// `chunked` as the last coding: after a comma or the start, spaces and tabs before, spaces after.
const CHUNKED_LAST = /(?:^|,)[ \t]*chunked *$/i;
const BLANK = /^[ \t]*$/;
// `close` as one of the tokens, with the same whitespace rule.
const CLOSE_TOKEN = /(?:^|,)[ \t]*close *(?:,|$)/i;
// A size in hex and its extensions: `;name`, `;name=token` or `;name="quoted"`, no whitespace;
// a name or value may be empty, but a `;` may not end the line.
const CHUNK_SIZE_LINE = new RegExp(
  `^([0-9A-Fa-f]+)(?:;(?=.)${TCHAR}*(?:=(?:${TCHAR}*|"(?:[\\t\\x20\\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t\\x20-\\x7e\\x80-\\xff])*"))?)*$`,
);
const CRLFCRLF = Buffer.from('\r\n\r\n');

/** The status and version of a status line (without its CRLF), or a refusal. */
function statusLine(line: string): { status: number; http10: boolean } {
  const m = STATUS_LINE.exec(line);
  if (!m) {
    if (line === '' || line[0] === '\n') throw new ResponseError('an empty line before the status line');
    throw new ResponseError(line.includes('\r') ? 'a CR in the status line' : 'malformed status line');
  }
  if (m[1] !== '1' || (m[2] !== '1' && m[2] !== '0')) throw new ResponseError('not HTTP/1.0 or HTTP/1.1');
  const status = Number(m[3]);
  if (status < 100) throw new ResponseError('a status below 100');
  return { status, http10: m[2] === '0' };
}

/** Digits with leading zeros dropped, or null past `max` significant ones. */
function significant(digits: string, max: number): string | null {
  if (digits.length <= max) return digits;
  const d = digits.replace(/^0+(?=.)/, '');
  return d.length <= max ? d : null;
}

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'close' | 'done';

export class ResponseParser {
  private state: State = 'head';
  // A head not yet complete, in pending[0, pendingBytes): appended to (headRoom), so that a head
  // sent a byte at a time costs each byte a bounded number of copies rather than one per read.
  private pending: Buffer | null = null;
  private pendingBytes = 0;
  private statusChecked = false;
  private line = ''; // chunk-size and trailer lines, across reads
  private remaining = 0; // body bytes left (length) or chunk bytes left (chunk-data)
  private lineBytes = 0; // bytes of the last head read and of its trailers
  private framingBytes = 0; // MAX_FRAMING_BYTES
  private reusable = true;
  /** Whether any byte of an answer has been read (an interim 1xx counts: the server heard us). */
  started = false;

  constructor(private readonly sink: ResponseSink) {}

  feed(chunk: Buffer): void {
    if (chunk.length) this.started = true;
    let at = 0;
    while (at < chunk.length) {
      switch (this.state) {
        case 'head':
          at = this.readHead(chunk, at);
          break;
        case 'length':
          at = this.take(chunk, at);
          if (this.remaining === 0) this.finish();
          break;
        case 'chunk-size':
        case 'trailers':
        case 'chunk-end':
          at = this.readLine(chunk, at);
          break;
        case 'chunk-data':
          at = this.take(chunk, at);
          if (this.remaining === 0) this.state = 'chunk-end';
          break;
        case 'close':
          this.sink.body(chunk.subarray(at));
          at = chunk.length;
          break;
        case 'done':
          // Bytes after a complete response that nobody asked for: the framing is not what it
          // seemed, so this connection carries nothing more.
          throw new ResponseError('the server sent more than one response');
      }
    }
  }

  /** The connection ended. True if that completed the response (a body delimited by the close). */
  eof(): boolean {
    if (this.state === 'close') {
      this.reusable = false;
      this.finish();
      return true;
    }
    return this.state === 'done';
  }

  /** Hands the body up to `remaining` bytes from `at` to the sink; returns where it stopped. */
  private take(chunk: Buffer, at: number): number {
    const n = Math.min(this.remaining, chunk.length - at);
    this.sink.body(chunk.subarray(at, at + n));
    this.remaining -= n;
    return at + n;
  }

  private readHead(chunk: Buffer, at: number): number {
    if (!this.pendingBytes) {
      // The usual case: the whole head in one read.
      const end = chunk.indexOf(CRLFCRLF, at);
      if (end >= 0 && end - at <= MAX_HEAD_BYTES) {
        this.headRead(chunk.toString('latin1', at, end), end - at);
        return end + 4;
      }
    }
    const before = this.pendingBytes;
    const buf = this.headRoom(before + chunk.length - at);
    const copied = chunk.copy(buf, before, at, Math.min(chunk.length, at + buf.length - before));
    this.pendingBytes += copied;
    const end = buf.subarray(0, this.pendingBytes).indexOf(CRLFCRLF, Math.max(0, before - 3));
    // Without its end yet, a head may hold the first 3 bytes of its blank line's CRLFCRLF too.
    if (end > MAX_HEAD_BYTES || (end < 0 && this.pendingBytes > MAX_HEAD_BYTES + 3))
      throw new ResponseError('response head too large');
    if (end < 0) {
      // A status line is judged once whole, so one with a stray CR is refused without waiting
      // for a head end that may never come.
      const lf = this.statusChecked ? -1 : buf.subarray(0, this.pendingBytes).indexOf(10, Math.max(0, before - 1));
      if (lf >= 0) {
        statusLine(buf.toString('latin1', 0, lf > 0 && buf[lf - 1] === 13 ? lf - 1 : lf + 1));
        this.statusChecked = true;
      }
      return chunk.length;
    }
    this.pending = null;
    this.pendingBytes = 0;
    this.headRead(buf.toString('latin1', 0, end), end);
    return at + end + 4 - before;
  }

  /**
   * The buffer of a head in pieces, grown by doubling up to the largest head (with its blank
   * line) as bytes arrive: each byte is copied a bounded number of times, and a connection holds
   * about what it has received.
   */
  private headRoom(wanted: number): Buffer {
    const most = MAX_HEAD_BYTES + 4;
    const had = this.pending;
    if (had && (had.length >= wanted || had.length === most)) return had;
    const grown = Buffer.allocUnsafe(Math.min(most, Math.max(wanted, (had?.length ?? 512) * 2)));
    had?.copy(grown, 0, 0, this.pendingBytes);
    return (this.pending = grown);
  }

  /** A whole head of `bytes` bytes before its blank line. */
  private headRead(text: string, bytes: number): void {
    this.statusChecked = false;
    this.lineBytes = bytes;
    this.framed(bytes + 4);
    this.parseHead(text);
  }

  private parseHead(text: string): void {
    let eol = text.indexOf('\r\n');
    if (eol < 0) eol = text.length;
    const { status, http10 } = statusLine(text.slice(0, eol));
    let length: string | null = null;
    let chunked = false;
    let encoded = false;
    let blankCoding = false;
    let close = false;
    let keepAliveMs: number | null = null;
    if (eol < text.length) {
      HEADER_LINES.lastIndex = eol + 2;
      if (HEADER_LINES.exec(text)?.[0].length !== text.length - eol - 2)
        throw new ResponseError('malformed header line');
    }
    // Line by line without splitting the head; only the framing headers are read, so only
    // names of their lengths are lower-cased and compared. Values are read as Node's parser
    // reads them (the whitespace it allows where it allows it), untrimmed.
    while (eol < text.length) {
      const from = eol + 2;
      eol = text.indexOf('\r\n', from);
      if (eol < 0) eol = text.length;
      const colon = text.indexOf(':', from);
      const n = colon - from;
      if (n !== 14 && n !== 17 && n !== 10 && n !== 16) continue;
      const name = text.slice(from, colon).toLowerCase();
      const value = text.slice(colon + 1, eol);
      if (name === 'content-length') {
        // One header of digits only: a list, even of equal values, or a second header is refused.
        if (length !== null) throw new ResponseError('more than one Content-Length');
        const digits = CONTENT_LENGTH.exec(value);
        if (!digits) throw new ResponseError('invalid Content-Length');
        length = significant(digits[1]!, 15);
        if (length === null) throw new ResponseError('Content-Length too large');
      } else if (name === 'transfer-encoding') {
        // Any coding but chunked last (the last header counts) leaves the body to the close;
        // an empty value names no coding.
        if (BLANK.test(value)) blankCoding = true;
        else {
          encoded = true;
          chunked = CHUNKED_LAST.test(value);
        }
      } else if (name === 'connection' || name === 'proxy-connection') {
        if (CLOSE_TOKEN.test(value)) close = true;
      } else if (name === 'keep-alive') {
        const t = /(?:^|[,\s])timeout=(\d+)/i.exec(value);
        if (t) keepAliveMs = Number(t[1]) * 1000;
      }
    }
    // Both framings at once can be a smuggling attempt, even with a coding left empty.
    if (length !== null && encoded) throw new ResponseError('Content-Length with Transfer-Encoding');
    if (length !== null && blankCoding) throw new ResponseError('Content-Length with an empty Transfer-Encoding');
    if (status === 101) throw new ResponseError('the server switched protocols unasked');
    if (status < 200) {
      // An interim answer (100 Continue, 103 Early Hints) has no body; the final one follows on
      // the same connection, so one that ends the connection is not an answer.
      if (http10) throw new ResponseError('an interim answer in HTTP/1.0');
      if (close) throw new ResponseError('an interim answer that closes the connection');
      return;
    }
    if (http10 || close) this.reusable = false;
    this.sink.head({ status, keepAliveMs });
    if (status === 204 || status === 304) {
      // No body, whatever the head says. One that declares a body (no answer to a POST may) leaves
      // bytes the server may still send, which the next request would read as its answer.
      if (encoded || (length !== null && Number(length) > 0)) this.reusable = false;
      return this.finish();
    }
    if (encoded) {
      this.state = chunked ? 'chunk-size' : 'close';
      return;
    }
    if (length === null) {
      this.state = 'close';
      return;
    }
    this.remaining = Number(length);
    if (this.remaining === 0) this.finish();
    else this.state = 'length';
  }

  /** Chunk-size, chunk-end and trailer lines: each ends in CRLF. */
  private readLine(chunk: Buffer, at: number): number {
    const nl = chunk.indexOf(10, at);
    const part = chunk.toString('latin1', at, nl < 0 ? chunk.length : nl);
    if (this.state === 'trailers') {
      // Trailers are header lines, counted with the head.
      if (this.lineBytes + this.line.length + part.length > MAX_HEAD_BYTES)
        throw new ResponseError('response head too large');
    } else if (this.line.length + part.length > MAX_LINE_BYTES) throw new ResponseError('chunk line too long');
    else this.framed(part.length + (nl < 0 ? 0 : 1));
    this.line += part;
    if (nl < 0) return chunk.length;
    if (!this.line.endsWith('\r')) throw new ResponseError('a line ending in LF without CR');
    const line = this.line.slice(0, -1);
    this.line = '';
    if (this.state === 'chunk-end') {
      if (line !== '') throw new ResponseError('chunk data longer than its size');
      this.state = 'chunk-size';
    } else if (this.state === 'chunk-size') {
      const m = CHUNK_SIZE_LINE.exec(line);
      if (!m) throw new ResponseError('malformed chunk size');
      const size = significant(m[1]!, 13);
      if (size === null) throw new ResponseError('chunk size too large');
      this.remaining = parseInt(size, 16);
      this.state = this.remaining === 0 ? 'trailers' : 'chunk-data';
    } else if (line === '') {
      this.finish();
    } else {
      // A length among the trailers is refused, as it is with a coding in the head.
      this.lineBytes += line.length + 2;
      if (!TRAILER_LINE.test(line)) throw new ResponseError('malformed trailer line');
      if (line.length >= 15 && line[14] === ':' && line.slice(0, 14).toLowerCase() === 'content-length')
        throw new ResponseError('Content-Length among the trailers');
    }
    return nl + 1;
  }

  private framed(bytes: number): void {
    this.framingBytes += bytes;
    if (this.framingBytes > MAX_FRAMING_BYTES) throw new ResponseError('too many bytes of heads and chunk lines');
  }

  private finish(): void {
    this.state = 'done';
    this.sink.end(this.reusable);
  }
}
