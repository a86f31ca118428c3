import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export type SunkMail = { from: string; to: string[]; raw: string; at: number };

/**
 * A real SMTP server on loopback that accepts every message (no auth, no TLS) and keeps it;
 * recipients for which `refuse` says true are answered 550, like an unknown mailbox, and those
 * for which it gives a reply code are answered that (451: greylisted, try again later).
 * `mailHeaders`/`mailBody` read the raw RFC 5322 text without a MIME library.
 */
export async function startSmtpSink(opts: { refuse?: (address: string) => boolean | number } = {}): Promise<{
  port: number;
  url: string;
  messages: SunkMail[];
  /** Recipient addresses refused, one entry per attempt. */
  refused: string[];
  waitFor(pred: (m: SunkMail[]) => boolean, timeoutMs?: number): Promise<SunkMail[]>;
  close(): Promise<void>;
}> {
  const messages: SunkMail[] = [];
  const refused: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const refusal = opts.refuse?.(address.address);
      if (!refusal) return callback();
      refused.push(address.address);
      const code = refusal === true ? 550 : refusal;
      const err = new Error(
        code < 500 ? `greylisted ${address.address}, try again later` : `no mailbox ${address.address}`,
      ) as Error & { responseCode: number };
      err.responseCode = code;
      callback(err);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        messages.push({
          from,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    refused,
    async waitFor(pred, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (!pred(messages)) {
        if (Date.now() > until)
          throw new Error(`smtp sink: condition not met within ${timeoutMs} ms (${messages.length} messages so far)`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return messages;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Quoted-printable (or RFC 2047 "Q") text back to a UTF-8 string. */
function unQuote(s: string, underscoreIsSpace = false): string {
  const bytes = (underscoreIsSpace ? s.replace(/_/g, ' ') : s)
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/** RFC 2047 encoded words (Q or B, UTF-8) in a header value, decoded; whitespace between them dropped. */
function decodeWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_, enc: string, text: string) =>
      enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : unQuote(text, true),
    );
}

/** The header block of a raw message, unfolded and decoded, as lower-case name → value (first occurrence). */
export function mailHeaders(raw: string): Record<string, string> {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? '';
  const out: Record<string, string> = {};
  for (const line of head.replace(/\r?\n([ \t]+)/g, '$1').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) {
      const name = line.slice(0, i).trim().toLowerCase();
      out[name] ??= decodeWords(line.slice(i + 1).trim());
    }
  }
  return out;
}

/** The parts of a raw message after the headers, quoted-printable undone: the text and HTML bodies, readable. */
export function mailBody(raw: string): string {
  const at = raw.search(/\r?\n\r?\n/);
  return unQuote(at < 0 ? '' : raw.slice(at)).replace(/\r\n/g, '\n');
}
