import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Mailer, MailReceipt, OutgoingMail } from '../../app/ports/index.js';
import { MailServerUnavailableError } from '../../app/ports/mail-server-unavailable.js';

// nodemailer's codes for a server that cannot be reached or will take no mail from us at all.
const SERVER_CODES = new Set(['ECONNECTION', 'ESOCKET', 'ETIMEDOUT', 'EDNS', 'ETLS', 'EAUTH', 'EPROTOCOL']);

type SmtpInfo = {
  rejected?: (string | { address: string })[];
  rejectedErrors?: { recipient?: string; response?: string; responseCode?: number; message: string }[];
};

/**
 * The recipients the server answered RCPT TO with a refusal, each with its reply; a 4xx reply
 * ("try again later": greylisting, a full mailbox) is temporary (RFC 5321 4.2.1).
 */
function refusedOf(info: SmtpInfo): MailReceipt['refused'] {
  const replies = new Map((info.rejectedErrors ?? []).map((e) => [e.recipient, e]));
  return (info.rejected ?? []).map((r) => {
    const address = typeof r === 'string' ? r : r.address;
    const reply = replies.get(address);
    const code = reply?.responseCode ?? Number(/^\d{3}/.exec(reply?.response ?? '')?.[0]);
    return { address, reason: reply?.response ?? reply?.message ?? 'refused', temporary: code >= 400 && code < 500 };
  });
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * nodemailer's options for SMTP_URL. Waits are bounded: a mail server that hangs must not hold an
 * alert check for minutes. Credentials over `smtp://` to a host other than this one require
 * STARTTLS, so that a server, or someone on the path, that leaves it out of the greeting does not
 * have them sent in the clear (nodemailer otherwise goes on without TLS).
 */
export function smtpOptions(url: string) {
  const u = new URL(url);
  // nodemailer logs in only with both; with either alone it sends no credentials at all.
  const requireTLS = u.protocol === 'smtp:' && u.username !== '' && u.password !== '' && !LOOPBACK.test(u.hostname);
  return { url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, requireTLS };
}

/** SMTP through nodemailer (SMTP_URL). */
export function smtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpOptions(url) as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    // nodemailer sends to the recipients it can and names the others; the caller decides what
    // an email no one took means.
    async send(mail: OutgoingMail) {
      let info: SmtpInfo;
      try {
        info = (await transport.sendMail({
          from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
        })) as SmtpInfo;
      } catch (err) {
        if (SERVER_CODES.has(String((err as { code?: unknown }).code))) throw new MailServerUnavailableError(err);
        // Every recipient refused: each with its reply, as when only some are.
        const all = err as SmtpInfo & { code?: unknown };
        if (all.code === 'EENVELOPE' && all.rejected?.length) return { refused: refusedOf(all) };
        throw err;
      }
      return { refused: refusedOf(info) };
    },
    async close() {
      transport.close();
    },
  };
}

/** Without SMTP_URL: each email is written as an .eml file, the same bytes SMTP would carry. */
export function outboxMailer(dir: string, from: string): Mailer {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  let n = 0;
  return {
    async send(mail: OutgoingMail) {
      const info = (await composer.sendMail({
        from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
      })) as { message: Buffer };
      mkdirSync(dir, { recursive: true });
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}-${++n}.eml`;
      writeFileSync(path.join(dir, name), info.message);
      return { refused: [] };
    },
    async close() {},
  };
}
