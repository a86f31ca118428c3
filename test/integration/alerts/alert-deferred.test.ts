import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkAlerts } from '../../../src/app/alerts/check-alerts.js';
import { DEFERRED_TRIES, retryDeferred, type DeferredOutcome } from '../../../src/app/alerts/retry-deferred.js';
import { smtpMailer } from '../../../src/infra/mail/mailer.js';
import { prometheusMetrics } from '../../../src/infra/metrics/prometheus.js';
import { alertCheck } from '../../../src/worker/scheduler.js';
import { logged } from '../../support/logged.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';
import { mailHeaders, startSmtpSink } from '../../support/smtp-sink.js';

/**
 * A recipient whose mail server answers an alert email "try again later" (a 4xx reply: greylisting,
 * a full mailbox) is sent it again after a pause that doubles, and given up only after
 * DEFERRED_TRIES sends (src/app/alerts/retry-deferred.ts); the others get it once.
 */
const WINDOWS = { quietMs: 60_000, reminderMs: 600_000 };
const PAUSE = 300_000;

let h: Harness;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let mailer: ReturnType<typeof smtpMailer>;
/** How many more times each address is answered 451. */
const greylisted = new Map<string, number>();

// A harness of its own for each test: no endpoint of another is due a reminder meanwhile.
beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h?.close();
});
beforeAll(async () => {
  sink = await startSmtpSink({
    refuse: (a) => {
      const left = greylisted.get(a) ?? 0;
      if (left <= 0) return false;
      greylisted.set(a, left - 1);
      return 451;
    },
  });
  mailer = smtpMailer(sink.url, 'alerts@canvass.test');
});
afterAll(async () => {
  await mailer?.close();
  await sink?.close();
});

async function failingEndpoint(recipients: string[]): Promise<TestAccount> {
  const acct = await h.account();
  const set = await h.app.inject({
    method: 'PATCH',
    url: '/account/settings',
    headers: bearer(acct.key),
    payload: { accountId: acct.accountId, notificationRecipients: recipients },
  });
  expect(set.statusCode, set.body).toBe(200);
  const poll = await visiblePoll(h, acct);
  const hook = await createWebhook(h, acct, poll.pollId, 'https://hooks.example.com/deferred');
  await h.deps.store.endpoints.recordGivenUp(hook.data.id, h.clock.now(), 'HTTP 500');
  h.clock.advance(WINDOWS.quietMs + 1);
  return acct;
}

const deps = () => ({ ...h.deps, mailer, alerts: WINDOWS });
const storedOf = async (acct: TestAccount) => (await h.deps.store.alerts.list(acct.accountId, { limit: 10 })).data;
const mailsTo = (address: string) => sink.messages.filter((m) => m.to.includes(address));

describe('alert email recipients deferred by the mail server', () => {
  it('keep their tries while the mail server cannot be reached, and a try is kept only under its own claim', async () => {
    greylisted.set('wait@example.org', 1);
    const acct = await failingEndpoint(['here@example.org', 'wait@example.org']);
    expect(await checkAlerts(deps())).toBe(1);
    const [email] = await storedOf(acct);
    const triesOf = async () =>
      (
        await h.database.db
          .selectFrom('alert_emails')
          .select(['deferred_tries', 'deferred_recipients'])
          .where('id', '=', email!.id)
          .executeTakeFirstOrThrow()
      ).deferred_tries;
    expect(await triesOf()).toBe(1);
    // Nothing listens on the port: no try is counted, and it is due again after the same pause.
    const closed = await startSmtpSink();
    await closed.close();
    const down = smtpMailer(closed.url, 'alerts@canvass.test');
    const outcomes: DeferredOutcome[] = [];
    try {
      h.clock.advance(PAUSE);
      await retryDeferred({ ...deps(), mailer: down }, 50, undefined, (o) => outcomes.push(o));
    } finally {
      await down.close();
    }
    const mine = outcomes.filter((o) => o.alertId === email!.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.error).toBeDefined();
    expect(mine[0]!.retryAt!.getTime()).toBe(h.clock.now().getTime() + PAUSE);
    expect(await triesOf()).toBe(1);

    // A claim whose hold another scheduler has taken over keeps nothing of its try.
    h.clock.advance(PAUSE);
    const now = h.clock.now();
    const [first] = await h.deps.store.alerts.claimDeferred(now, new Date(now.getTime() + 1_000), 50);
    expect(first?.id).toBe(email!.id);
    const [second] = await h.deps.store.alerts.claimDeferred(
      new Date(now.getTime() + 1_000),
      new Date(now.getTime() + 5_000),
      50,
    );
    expect(second?.id).toBe(email!.id);
    const late = { accepted: ['wait@example.org'], deferred: [], until: null, tries: 2 };
    expect(await h.deps.store.alerts.settleDeferred(email!.id, new Date(now.getTime() + 1_000), late)).toBe(false);
    expect((await storedOf(acct))[0]!.recipients).toEqual(['here@example.org']);
    expect(await h.deps.store.alerts.settleDeferred(email!.id, new Date(now.getTime() + 5_000), late)).toBe(true);
    expect((await storedOf(acct))[0]!.recipients).toEqual(['here@example.org', 'wait@example.org']);
  });

  it('are sent the email again after a pause that doubles, and join its recipients once taken', async () => {
    greylisted.set('later@example.org', 2);
    const acct = await failingEndpoint(['ops@example.org', 'later@example.org']);
    const outcomes: DeferredOutcome[] = [];
    const retry = () => retryDeferred(deps(), 50, undefined, (o) => outcomes.push(o));

    expect(await checkAlerts(deps())).toBe(1);
    expect(mailsTo('ops@example.org')).toHaveLength(1);
    expect(mailsTo('later@example.org')).toHaveLength(0);
    expect((await storedOf(acct))[0]!.recipients).toEqual(['ops@example.org']);

    // Not before its pause.
    h.clock.advance(PAUSE - 1);
    expect(await retry()).toBe(0);
    expect(outcomes).toEqual([]);
    // Deferred again at the second send; the pause doubles.
    h.clock.advance(1);
    expect(await retry()).toBe(0);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]!.deferred.map((d) => d.address)).toEqual(['later@example.org']);
    expect(outcomes[0]!.retryAt!.getTime()).toBe(h.clock.now().getTime() + 2 * PAUSE);
    h.clock.advance(2 * PAUSE - 1);
    expect(await retry()).toBe(0);
    h.clock.advance(1);
    expect(await retry()).toBe(1);
    expect(outcomes.at(-1)).toMatchObject({ sentTo: ['later@example.org'], deferred: [], retryAt: null });

    const [taken] = mailsTo('later@example.org');
    expect(mailHeaders(taken!.raw).subject).toBe((await storedOf(acct))[0]!.subject);
    // The others were not sent it again; the email now lists both.
    expect(mailsTo('ops@example.org')).toHaveLength(1);
    expect((await storedOf(acct))[0]!.recipients).toEqual(['ops@example.org', 'later@example.org']);
    h.clock.advance(10 * PAUSE);
    expect(await retry()).toBe(0);
    expect(sink.refused.filter((a) => a === 'later@example.org')).toHaveLength(2);
  });

  it('are counted in canvass_alert_emails_total as kind="deferred" when the scheduler sends it again and one takes it', async () => {
    greylisted.set('twice@example.org', 2);
    const acct = await failingEndpoint(['first@example.org', 'twice@example.org']);
    const metrics = prometheusMetrics({ now: () => h.clock.now() });
    const emails = async () => {
      const body = (await metrics.exposition()).body;
      const of = (kind: string) =>
        Number(new RegExp(`^canvass_alert_emails_total\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(body)?.[1]);
      return { first: of('first'), reminder: of('reminder'), deferred: of('deferred') };
    };
    const { lines, logger } = logged();
    const pass = () => alertCheck().run(deps(), { logger, metrics });
    // Every kind is there from the start, at zero.
    expect(await emails()).toEqual({ first: 0, reminder: 0, deferred: 0 });
    await pass();
    expect(await emails()).toEqual({ first: 1, reminder: 0, deferred: 0 });
    // Deferred again: nobody took it, nothing counted.
    h.clock.advance(PAUSE);
    await pass();
    expect(mailsTo('twice@example.org')).toHaveLength(0);
    expect(await emails()).toEqual({ first: 1, reminder: 0, deferred: 0 });
    // Taken at the third send (the reminder period has passed too: a reminder goes out first).
    h.clock.advance(2 * PAUSE);
    await pass();
    expect(mailsTo('twice@example.org')).toHaveLength(2);
    expect(await emails()).toEqual({ first: 1, reminder: 1, deferred: 1 });
    expect(lines.filter((l) => l.msg === 'alert email sent to recipients deferred before')).toHaveLength(1);
    expect((await storedOf(acct)).map((e) => e.kind).sort()).toEqual(['first', 'reminder']);
  });

  it.each([
    { case: 'listed and stored alike', listed: 'leaving@example.org', stored: 'leaving@example.org' },
    {
      case: 'listed with their domain in Unicode, stored in ASCII',
      listed: 'gone@exämple.de',
      stored: 'gone@xn--exmple-cua.de',
    },
  ])('are not sent it again once they leave the account ($case)', async ({ listed, stored }) => {
    for (const form of new Set([listed, stored])) greylisted.set(form, 1);
    const acct = await failingEndpoint(['stays@example.org', listed]);
    await h.member(acct.accountId, 'admin', stored);
    expect(await checkAlerts(deps())).toBe(1);
    const removed = await h.app.inject({
      method: 'DELETE',
      url: `/members?accountId=${acct.accountId}&email=${encodeURIComponent(listed)}`,
      headers: bearer(acct.key),
    });
    expect(removed.statusCode, removed.body).toBe(200);
    const outcomes: DeferredOutcome[] = [];
    h.clock.advance(64 * PAUSE);
    expect(await retryDeferred(deps(), 50, undefined, (o) => outcomes.push(o))).toBe(0);
    expect(outcomes).toEqual([]);
    expect(mailsTo(listed)).toHaveLength(0);
  });

  it('are not put back by a send under way when they leave meanwhile', async () => {
    greylisted.set('mid@example.org', 1);
    const acct = await failingEndpoint(['ok@example.org', 'mid@example.org']);
    await h.member(acct.accountId, 'admin', 'mid@example.org');
    expect(await checkAlerts(deps())).toBe(1);
    const [email] = await storedOf(acct);
    h.clock.advance(PAUSE);
    const now = h.clock.now();
    const heldUntil = new Date(now.getTime() + 1_000);
    const [claimed] = await h.deps.store.alerts.claimDeferred(now, heldUntil, 50);
    expect(claimed?.recipients).toEqual(['mid@example.org']);
    const removed = await h.app.inject({
      method: 'DELETE',
      url: `/members?accountId=${acct.accountId}&email=mid@example.org`,
      headers: bearer(acct.key),
    });
    expect(removed.statusCode, removed.body).toBe(200);
    // The send under way was deferred again: its outcome is kept, without the address.
    const settled = await h.deps.store.alerts.settleDeferred(email!.id, heldUntil, {
      accepted: [],
      deferred: ['mid@example.org'],
      until: new Date(now.getTime() + 2 * PAUSE),
      tries: 2,
    });
    expect(settled).toBe(true);
    const row = await h.database.db
      .selectFrom('alert_emails')
      .select(['deferred_recipients', 'deferred_until'])
      .where('id', '=', email!.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ deferred_recipients: null, deferred_until: null });
  });

  it('are sent it again by one scheduler at a time, however long the send takes', async () => {
    greylisted.set('slow@example.org', 1);
    const acct = await failingEndpoint(['here@example.org', 'slow@example.org']);
    expect(await checkAlerts(deps())).toBe(1);
    const [email] = await storedOf(acct);
    // A hold of 1 s, renewed every 250 ms while the send runs; the send waits for the gate.
    const short = { ...WINDOWS, reminderMs: 1_000 };
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let sending = false;
    const slow = {
      send: async (mail: Parameters<typeof mailer.send>[0]) => {
        sending = true;
        await gate;
        return mailer.send(mail);
      },
      close: async () => {},
    };
    h.clock.advance(PAUSE);
    const first = retryDeferred({ ...deps(), alerts: short, mailer: slow });
    await expect.poll(() => sending, { timeout: 10_000 }).toBe(true);
    // The send outlasts the hold it was claimed with; its renewals keep the email its own.
    h.clock.advance(5_000);
    const heldUntil = async () =>
      (
        await h.database.db
          .selectFrom('alert_emails')
          .select('deferred_until')
          .where('id', '=', email!.id)
          .executeTakeFirstOrThrow()
      ).deferred_until;
    await expect
      .poll(async () => (await heldUntil())!.getTime() > h.clock.now().getTime(), { timeout: 10_000 })
      .toBe(true);
    expect(await retryDeferred({ ...deps(), alerts: short })).toBe(0);
    expect(mailsTo('slow@example.org')).toHaveLength(0);
    open();
    expect(await first).toBe(1);
    expect(mailsTo('slow@example.org')).toHaveLength(1);
    // Its outcome is kept under the hold it renewed.
    expect((await storedOf(acct))[0]!.recipients).toEqual(['here@example.org', 'slow@example.org']);
    expect(await heldUntil()).toBeNull();
  });

  it(`are given up after ${DEFERRED_TRIES} sends in all, the last outcome saying so`, async () => {
    greylisted.set('never@example.org', 1_000);
    const acct = await failingEndpoint(['kept@example.org', 'never@example.org']);
    const outcomes: DeferredOutcome[] = [];
    expect(await checkAlerts(deps())).toBe(1);
    for (let i = 0; i < 20; i++) {
      h.clock.advance(64 * PAUSE);
      await retryDeferred(deps(), 50, undefined, (o) => outcomes.push(o));
    }
    expect(sink.refused.filter((a) => a === 'never@example.org')).toHaveLength(DEFERRED_TRIES);
    expect(outcomes).toHaveLength(DEFERRED_TRIES - 1);
    expect(outcomes.slice(0, -1).every((o) => o.retryAt !== null)).toBe(true);
    expect(outcomes.at(-1)).toMatchObject({ retryAt: null, deferred: [{ address: 'never@example.org' }] });
    expect(mailsTo('kept@example.org')).toHaveLength(1);
    expect((await storedOf(acct))[0]!.recipients).toEqual(['kept@example.org']);
  });
});
