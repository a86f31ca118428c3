/**
 * Frames HTTP/1.1 responses read from one connection (RFC 9112): the status, the body by
 * Content-Length, chunked coding or the connection's close, and whether the connection may carry
 * another request afterwards. No I/O: the sender feeds it the bytes a socket reads.
 *
 * Strict where a lenient reading could mistake one answer for another: a malformed status line,
 * header or chunk size, conflicting lengths, or an upgrade nobody asked for is an error, and the
 * connection is not used again.
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

const MAX_HEAD_BYTES = 64 * 1024;
const MAX_LINE_BYTES = 8 * 1024;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: |$)/;
// Every header line of a head at once: a token name, a colon, a value without CR, LF or NUL.
const HEADER_LINES = /(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[^\r\n\0]*(?:\r\n|$))*/y;
const HEX = /^[0-9A-Fa-f]{1,15}$/;
const CRLFCRLF = Buffer.from('\r\n\r\n');

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'close' | 'done';

export class ResponseParser {
  private state: State = 'head';
  private pending: Buffer | null = null; // head bytes not yet complete
  private line = ''; // chunk-size and trailer lines, across reads
  private remaining = 0; // body bytes left (length) or chunk bytes left (chunk-data)
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
    let buf = chunk.subarray(at);
    let searchFrom = 0;
    if (this.pending) {
      searchFrom = Math.max(0, this.pending.length - 3);
      buf = Buffer.concat([this.pending, buf]);
    }
    const end = buf.indexOf(CRLFCRLF, searchFrom);
    if (end < 0) {
      if (buf.length > MAX_HEAD_BYTES) throw new ResponseError('response head too large');
      this.pending = Buffer.from(buf);
      return chunk.length;
    }
    const consumedFromChunk = end + 4 - (this.pending?.length ?? 0);
    this.pending = null;
    this.parseHead(buf.toString('latin1', 0, end));
    return at + consumedFromChunk;
  }

  private parseHead(text: string): void {
    let eol = text.indexOf('\r\n');
    if (eol < 0) eol = text.length;
    const m = STATUS_LINE.exec(text.slice(0, eol));
    if (!m) throw new ResponseError('malformed status line');
    const status = Number(m[2]);
    if (m[1] === '0') this.reusable = false;
    let length: string | null = null;
    let chunked = false;
    let encoded = false;
    let keepAliveMs: number | null = null;
    if (eol < text.length) {
      HEADER_LINES.lastIndex = eol + 2;
      if (HEADER_LINES.exec(text)?.[0].length !== text.length - eol - 2) throw new ResponseError('malformed header line');
    }
    // Line by line without splitting the head; only the framing headers are read, so only
    // names of their lengths are lower-cased and compared.
    while (eol < text.length) {
      const from = eol + 2;
      eol = text.indexOf('\r\n', from);
      if (eol < 0) eol = text.length;
      const colon = text.indexOf(':', from);
      const n = colon - from;
      if (n !== 14 && n !== 17 && n !== 10) continue;
      const name = text.slice(from, colon).toLowerCase();
      const value = text.slice(colon + 1, eol).trim();
      if (name === 'content-length') {
        for (const v of value.split(',')) {
          const digits = v.trim();
          if (!/^\d{1,15}$/.test(digits) || (length !== null && length !== digits)) throw new ResponseError('invalid Content-Length');
          length = digits;
        }
      } else if (name === 'transfer-encoding') {
        encoded = true;
        const codings = value.toLowerCase().split(',');
        chunked = codings[codings.length - 1]!.trim() === 'chunked';
      } else if (name === 'connection') {
        if (value.toLowerCase().split(',').some((t) => t.trim() === 'close')) this.reusable = false;
      } else if (name === 'keep-alive') {
        const t = /(?:^|[,\s])timeout=(\d+)/i.exec(value);
        if (t) keepAliveMs = Number(t[1]) * 1000;
      }
    }
    if (status === 101) throw new ResponseError('the server switched protocols unasked');
    // An interim answer (100 Continue, 103 Early Hints): the final one follows on the same read.
    if (status < 200) return;
    this.sink.head({ status, keepAliveMs });
    if (status === 204 || status === 304) return this.finish();
    if (encoded) {
      // Both framings at once can be a smuggling attempt: the coding wins, the connection ends.
      if (length !== null) this.reusable = false;
      if (chunked) this.state = 'chunk-size';
      else this.state = 'close';
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

  private readLine(chunk: Buffer, at: number): number {
    const nl = chunk.indexOf(10, at);
    const part = chunk.toString('latin1', at, nl < 0 ? chunk.length : nl);
    if (this.line.length + part.length > MAX_LINE_BYTES) throw new ResponseError('chunk line too long');
    this.line += part;
    if (nl < 0) return chunk.length;
    const line = this.line.endsWith('\r') ? this.line.slice(0, -1) : this.line;
    this.line = '';
    if (this.state === 'chunk-end') {
      if (line !== '') throw new ResponseError('chunk data longer than its size');
      this.state = 'chunk-size';
    } else if (this.state === 'chunk-size') {
      const size = line.split(';', 1)[0]!.trim();
      if (!HEX.test(size)) throw new ResponseError('malformed chunk size');
      this.remaining = parseInt(size, 16);
      this.state = this.remaining === 0 ? 'trailers' : 'chunk-data';
    } else if (line === '') {
      this.finish();
    }
    return nl + 1;
  }

  private finish(): void {
    this.state = 'done';
    this.sink.end(this.reusable);
  }
}
