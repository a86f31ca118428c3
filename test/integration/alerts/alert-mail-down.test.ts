import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAlerts } from '../../../src/app/alerts/check-alerts.js';
import { MailServerUnavailableError } from '../../../src/app/ports/mail-server-unavailable.js';
import { smtpMailer } from '../../../src/infra/mail/mailer.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';
import { startSmtpSink } from '../../support/smtp-sink.js';

/**
 * A mail server that takes no mail at all (docs/operations.md, "Health and logs"): the alert pass
 * ends at its first email, said at once, rather than trying every due endpoint against it; the
 * endpoint it tried is paused, the others stay due and go out once the server is back.
 */
const WINDOWS = { quietMs: 60_000, reminderMs: 600_000 };

let h: Harness;
let acct: TestAccount;
let closing: Server;
let connections = 0;
beforeAll(async () => {
  h = await harness();
  acct = await h.account();
  // Accepts each connection and closes it at once: no greeting, no mail.
  closing = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((r) => closing.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  closing?.close();
  await h?.close();
});

describe('alert emails while the mail server takes no mail', () => {
  it('end the pass at the first, and go out to the rest once the server is back', async () => {
    for (const name of ['a', 'b', 'c']) {
      const poll = await visiblePoll(h, acct);
      const hook = await createWebhook(h, acct, poll.pollId, `https://hooks.example.com/${name}`);
      await h.deps.store.endpoints.recordGivenUp(hook.data.id, h.clock.now(), 'HTTP 500');
    }
    h.clock.advance(WINDOWS.quietMs + 1);
    const down = smtpMailer(`smtp://127.0.0.1:${(closing.address() as AddressInfo).port}`, 'alerts@canvass.test');
    try {
      const pass = checkAlerts({ ...h.deps, mailer: down, alerts: WINDOWS });
      await expect(pass).rejects.toThrow(/1 failure alert email\(s\) not sent.*mail server is unavailable/);
      const err = (await pass.catch((e: unknown) => e)) as AggregateError;
      expect(err.errors[0]).toBeInstanceOf(MailServerUnavailableError);
    } finally {
      await down.close();
    }
    // One email tried against the server, not three.
    expect(connections).toBe(1);

    const sink = await startSmtpSink();
    const back = smtpMailer(sink.url, 'alerts@canvass.test');
    try {
      // The two not tried are due at once; the one tried waits out its pause.
      expect(await checkAlerts({ ...h.deps, mailer: back, alerts: WINDOWS })).toBe(2);
      h.clock.advance(300_000);
      expect(await checkAlerts({ ...h.deps, mailer: back, alerts: WINDOWS })).toBe(1);
      expect(sink.messages).toHaveLength(3);
    } finally {
      await back.close();
      await sink.close();
    }
  });
});
