import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smtpOptions } from '../../../src/infra/mail/mailer.js';
import { startSmtpSink } from '../../support/smtp-sink.js';

/**
 * SMTP credentials are not sent in the clear (src/infra/mail/mailer.ts): over `smtp://` to a
 * host other than this one, STARTTLS is required, and a server that does not offer it (the
 * sink offers none) gets neither the credentials nor the email.
 */

let sink: Awaited<ReturnType<typeof startSmtpSink>>;
beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(() => sink?.close());

describe('smtpOptions', () => {
  it('requires STARTTLS for credentials over smtp:// to another host, and only then', () => {
    expect(smtpOptions('smtp://alerts:pw@mail.example.com:587').requireTLS).toBe(true);
    // A user without a password: nodemailer sends no credentials.
    expect(smtpOptions('smtp://alerts@mail.example.com:587').requireTLS).toBe(false);
    expect(smtpOptions('smtp://mail.example.com:25').requireTLS).toBe(false);
    expect(smtpOptions('smtps://alerts:pw@mail.example.com:465').requireTLS).toBe(false);
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '[::1]'])
      expect(smtpOptions(`smtp://alerts:pw@${host}:25`).requireTLS, host).toBe(false);
  });

  it('with them, a server that offers no STARTTLS is sent neither the credentials nor the email', async () => {
    const { url: _url, ...options } = smtpOptions('smtp://alerts:pw@mail.example.com:587');
    // The same options, pointed at the sink (which offers no STARTTLS) on loopback; ETLS is one of
    // the codes the mailer reports as the mail server unavailable.
    const transport = nodemailer.createTransport({
      ...options,
      host: '127.0.0.1',
      port: sink.port,
      auth: { user: 'alerts', pass: 'pw' },
    });
    try {
      await expect(
        transport.sendMail({ from: 'alerts@example.com', to: 'ops@example.com', subject: 's', text: 't' }),
      ).rejects.toMatchObject({ message: expect.stringMatching(/STARTTLS/), code: 'ETLS' });
      expect(sink.messages).toHaveLength(0);
    } finally {
      transport.close();
    }
  });
});
