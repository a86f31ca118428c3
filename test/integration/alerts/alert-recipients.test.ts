import { afterAll, beforeAll, expect, it } from 'vitest';
import { checkAlerts } from '../../../src/app/alerts/check-alerts.js';
import { smtpMailer } from '../../../src/infra/mail/mailer.js';
import { bearer, harness, type Harness } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';
import { startSmtpSink } from '../../support/smtp-sink.js';

/**
 * Failure alerts name the endpoints' URLs, which editors and read-only members may not see: a
 * listed recipient who is such a member, listed before or after joining, is not sent them
 * (src/app/alerts/recipients.ts); addresses that are no member's are.
 */
const WINDOWS = { quietMs: 60_000, reminderMs: 600_000 };

let h: Harness;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let mailer: ReturnType<typeof smtpMailer>;
beforeAll(async () => {
  h = await harness();
  sink = await startSmtpSink();
  mailer = smtpMailer(sink.url, 'alerts@canvass.test');
});
afterAll(async () => {
  await mailer?.close();
  await sink?.close();
  await h?.close();
});

it('goes to listed non-members and members who may see webhook URLs, not to an editor or a read-only member', async () => {
  const acct = await h.account();
  const listed = ['ops@example.org', 'Editor@Example.org', 'boss@example.org', 'viewer@example.org'];
  const set = await h.app.inject({
    method: 'PATCH',
    url: '/account/settings',
    headers: bearer(acct.key),
    payload: { accountId: acct.accountId, notificationRecipients: listed },
  });
  expect(set.statusCode, set.body).toBe(200);
  // They join after being listed.
  await h.member(acct.accountId, 'editor', 'editor@example.org');
  await h.member(acct.accountId, 'read_only', 'viewer@example.org');
  await h.member(acct.accountId, 'admin', 'boss@example.org');
  const poll = await visiblePoll(h, acct);
  const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/secret-path');
  await h.deps.store.endpoints.recordGivenUp(hook.data.id, h.clock.now(), 'HTTP 500');
  h.clock.advance(WINDOWS.quietMs + 1);

  expect(await checkAlerts({ ...h.deps, mailer, alerts: WINDOWS })).toBe(1);
  const mail = await sink.waitFor((m) => m.some((x) => x.to.includes('ops@example.org')));
  const to = mail.find((x) => x.to.includes('ops@example.org'))!.to;
  expect([...to].sort()).toEqual(['boss@example.org', 'ops@example.org']);
  const [stored] = (await h.deps.store.alerts.list(acct.accountId, { limit: 10 })).data;
  expect([...stored!.recipients].sort()).toEqual(['boss@example.org', 'ops@example.org']);
});
