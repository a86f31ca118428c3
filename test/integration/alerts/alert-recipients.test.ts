import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { checkAlerts } from '../../../src/app/alerts/check-alerts.js';
import { retryDeferred } from '../../../src/app/alerts/retry-deferred.js';
import { smtpMailer } from '../../../src/infra/mail/mailer.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';
import { startSmtpSink } from '../../support/smtp-sink.js';

/**
 * Failure alerts name the endpoints' URLs, which editors and read-only members may not see: a
 * listed recipient who is such a member is not sent them (src/app/alerts/recipients.ts), and is
 * taken off the list on joining in such a role; addresses that are no member's are sent them, and
 * with none left the owner is.
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

async function failingEndpoint(acct: TestAccount) {
  const poll = await visiblePoll(h, acct);
  const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/secret-path');
  await h.deps.store.endpoints.recordGivenUp(hook.data.id, h.clock.now(), 'HTTP 500');
  h.clock.advance(WINDOWS.quietMs + 1);
  expect(await checkAlerts({ ...h.deps, mailer, alerts: WINDOWS })).toBe(1);
  const [stored] = (await h.deps.store.alerts.list(acct.accountId, { limit: 10 })).data;
  return [...stored!.recipients].sort();
}

/** Lists recipients as stored, past the checks of PATCH /account/settings (a list kept from before them). */
async function listAsStored(acct: TestAccount, recipients: string[]) {
  const account = (await h.deps.store.accounts.get(acct.accountId))!;
  await h.deps.store.accounts.setDefaults(acct.accountId, account.defaults, recipients, h.clock.now());
}

it('goes to listed non-members and members who may see webhook URLs, not to an editor or a read-only member', async () => {
  const acct = await h.account();
  await h.member(acct.accountId, 'editor', 'editor@example.org');
  await h.member(acct.accountId, 'read_only', 'viewer@example.org');
  await h.member(acct.accountId, 'admin', 'boss@example.org');
  await listAsStored(acct, ['ops@example.org', 'Editor@Example.org', 'boss@example.org', 'viewer@example.org']);
  expect(await failingEndpoint(acct)).toEqual(['boss@example.org', 'ops@example.org']);
  const mail = sink.messages.find((x) => x.to.includes('ops@example.org'))!;
  expect([...mail.to].sort()).toEqual(['boss@example.org', 'ops@example.org']);
});

it('goes to the owner when every listed address is left out', async () => {
  const acct = await h.account();
  await h.member(acct.accountId, 'editor', 'only.editor@example.org');
  await listAsStored(acct, ['only.editor@example.org']);
  const owner = await h.deps.store.users.ownerEmail(acct.accountId);
  expect(await failingEndpoint(acct)).toEqual([owner]);
});

it('takes an address off the list when its owner joins in a role that may not see webhook URLs', async () => {
  const acct = await h.account();
  const set = await h.app.inject({
    method: 'PATCH',
    url: '/account/settings',
    headers: bearer(acct.key),
    payload: { accountId: acct.accountId, notificationRecipients: ['ops@example.org', 'joiner@example.org'] },
  });
  expect(set.statusCode, set.body).toBe(200);
  await h.member(acct.accountId, 'read_only', 'joiner@example.org');
  expect((await h.deps.store.accounts.get(acct.accountId))!.notificationRecipients).toEqual(['ops@example.org']);
});

it('sends an email again to deferred addresses less those of members who may not see webhook URLs', async () => {
  const acct = await h.account();
  await h.member(acct.accountId, 'editor', 'late.editor@example.org');
  await listAsStored(acct, ['ops@example.org']);
  await failingEndpoint(acct);
  // Deferred as a state the join could not clean: the address became an editor's meanwhile.
  await sql`UPDATE alert_emails SET deferred_recipients = '["again@example.org", "late.editor@example.org"]'::jsonb,
    deferred_until = ${h.clock.now()}, deferred_tries = 1 WHERE account_id = ${acct.accountId}`.execute(h.database.db);
  const before = sink.messages.length;
  expect(await retryDeferred({ ...h.deps, mailer, alerts: WINDOWS })).toBe(1);
  const sent = sink.messages.slice(before);
  expect(sent.map((m) => m.to)).toEqual([['again@example.org']]);
  const [stored] = (await h.deps.store.alerts.list(acct.accountId, { limit: 10 })).data;
  expect(stored!.recipients).toContain('again@example.org');
  expect(stored!.recipients).not.toContain('late.editor@example.org');
});
