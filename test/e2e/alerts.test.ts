import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAlerts } from '../../src/app/alerts/check-alerts.js';
import type { Deps } from '../../src/app/ports/index.js';
import { outboxMailer, smtpMailer } from '../../src/infra/mail/mailer.js';
import { alertCheck, startScheduler } from '../../src/worker/scheduler.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import { answer, createWebhook, visiblePoll } from '../support/fixtures.js';
import { startReceiver } from '../support/receiver.js';
import { mailBody, mailHeaders, startSmtpSink, type SunkMail } from '../support/smtp-sink.js';
import { startTestWorker } from '../support/worker.js';

/**
 * Failure alerts end to end (docs/receiving-webhooks.md,
 * Failure alerts): real deliveries to a
 * real HTTPS receiver, the real scheduler's alert check, and a real SMTP server receiving the
 * emails, on short windows. Also the outbox mailer. (A spawned `canvass serve` configured only
 * through its environment: alerts-serve.test.ts.)
 */

const QUIET = 1_500;
const REMINDER = 1_000;
const FROM = 'Canvass <alerts@localhost>';
/** Timers and the scheduler tick are not exact: allow this much early/late. */
const SLACK = 100;

let h: Harness;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
let worker: ReturnType<typeof startTestWorker>;
const greylist = new Set<string>();

type Json = Record<string, unknown>;
type AlertView = {
  id: string;
  kind: string;
  sequence: number;
  recipients: string[];
  subject: string;
  text: string;
  html: string;
  details: Json;
  webhookId: string | null;
  pollId: string;
  sentAt: string;
};
type Health = { state: string; lastSuccessAt: string | null; lastGivenUpAt: string | null; alertEmailsSent: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  receiver = await startReceiver();
  // nobody@ is refused for good (550); an address in `greylist` once, as "try again later" (451).
  sink = await startSmtpSink({ refuse: (a) => a.startsWith('nobody@') || (greylist.delete(a) ? 451 : false) });
  h = await harness({
    allowPrivateTargets: true,
    delivery: { batchWindowMs: 0, retryLadderMs: [100, 100, 100, 100, 100] },
  });
  h.clock.ms = Date.now();
  // A real clock: the worker, the alert windows and the SMTP server all run in wall time.
  h.deps.clock = { now: () => new Date() };
  worker = startTestWorker(h.deps);
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await sink?.close();
  await h?.close();
});

async function ownerEmail(acct: TestAccount): Promise<string> {
  const u = await h.database.db
    .selectFrom('users')
    .select('email')
    .where('id', '=', acct.userId)
    .executeTakeFirstOrThrow();
  return u.email;
}

async function get<T>(acct: TestAccount, url: string): Promise<T> {
  const res = await h.app.inject({ method: 'GET', url, headers: bearer(acct.key) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as T;
}

const alertsOf = async (acct: TestAccount) =>
  (await get<{ data: AlertView[] }>(acct, `/alerts?accountId=${acct.accountId}&limit=100`)).data;
/**
 * The stored alerts once there are n. The email is sent inside the transaction that stores it
 * (a crash may repeat an email, never lose one), so the SMTP server can see it a moment before
 * the row is committed.
 */
const storedAlerts = (acct: TestAccount, n: number) =>
  until(
    () => alertsOf(acct),
    (a) => a.length >= n,
  );
const healthOf = async (acct: TestAccount, pollId: string) =>
  (await get<{ data: { id: string; health: Health }[] }>(acct, `/webhooks?pollId=${pollId}`)).data[0]!.health;

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await sleep(30);
  }
}

const mailsTo = (addr: string) => sink.messages.filter((m) => m.to.includes(addr));
const waitMails = (addr: string, n: number, timeoutMs = 10_000) =>
  sink.waitFor((all) => all.filter((m) => m.to.includes(addr)).length >= n, timeoutMs).then(() => mailsTo(addr));

/** Waits for the delivery a receiver path got to reach a final status; returns its id. */
async function finalStatus(acct: TestAccount, receiverPath: string, nth: number, status: string): Promise<string> {
  const reqs = await receiver.waitFor((r) => r.filter((x) => x.path === receiverPath).length >= nth);
  const id = reqs.filter((x) => x.path === receiverPath)[nth - 1]!.headers['x-service-delivery-id']!;
  await until(
    () => get<{ data: { status: string } }>(acct, `/webhooks/delivery?deliveryId=${id}`),
    (d) => d.data.status === status,
  );
  return id;
}

/** What every alert email must say, checked on the raw SMTP message and the stored copy. */
function expectAlertMail(
  m: SunkMail,
  stored: AlertView,
  want: {
    to: string[];
    endpoint: string;
    pollId: string;
    failure: string;
    lost: number;
    configured: RegExp;
    trigger: RegExp;
  },
) {
  const headers = mailHeaders(m.raw);
  const body = mailBody(m.raw);
  expect(m.to.sort()).toEqual([...want.to].sort());
  expect(headers.from).toBe(FROM);
  expect(headers.to!.split(/,\s*/).sort()).toEqual([...want.to].sort());
  expect(headers['content-type']).toMatch(/^multipart\/alternative/);
  expect(headers.subject).toBe(stored.subject);
  expect(body).toContain(stored.text.trim());
  expect(body).toContain('<!doctype html>');
  for (const text of [body, stored.text]) {
    expect(text).toContain(`Endpoint: ${want.endpoint}`);
    expect(text).toContain(want.pollId);
    expect(text).toMatch(want.trigger);
    expect(text).toMatch(want.configured);
    expect(text).toContain(`What went wrong: ${want.failure}`);
    expect(text).toContain(`Responses lost in the past week: ${want.lost}`);
    expect(text).toMatch(/404/);
    expect(text).toMatch(/410/);
  }
  expect(stored.html).toContain('<table');
  expect(stored.recipients.sort()).toEqual([...want.to].sort());
  expect(stored.details).toMatchObject({
    endpoint: want.endpoint,
    survey: { id: want.pollId },
    whatWentWrong: want.failure,
    responsesLostPastWeek: want.lost,
  });
}

describe('outbox mailer (no SMTP_URL)', () => {
  it('writes the alert as an .eml file once the quiet period has passed, and stores it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'canvass-outbox-'));
    try {
      const deps: Deps = {
        ...worker.deps,
        mailer: outboxMailer(dir, FROM),
        alerts: { quietMs: QUIET, reminderMs: REMINDER },
      };
      const acct = await h.account();
      const owner = await ownerEmail(acct);
      receiver.script('/outbox-gone', [{ status: 410 }]);
      const poll = await visiblePoll(h, acct);
      const hook = await createWebhook(h, acct, poll.pollId, receiver.url('/outbox-gone'));
      const createdAt = Date.parse((hook.data as unknown as { createdAt: string }).createdAt);
      await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'x' }] });
      await finalStatus(acct, '/outbox-gone', 1, 'rejected');

      // This test drives the alert check itself (no alert scheduler runs yet in this file).
      let sentAt = 0;
      while (!sentAt) {
        const before = Date.now();
        const n = await checkAlerts(deps);
        if (n > 0) {
          expect(n).toBe(1);
          sentAt = before;
        } else {
          expect(Date.now()).toBeLessThan(createdAt + QUIET + 15_000);
          await sleep(50);
        }
      }
      expect(sentAt).toBeGreaterThanOrEqual(createdAt + QUIET - SLACK);
      // Not due again until the reminder period has passed.
      expect(await checkAlerts(deps)).toBe(0);

      const files = readdirSync(dir);
      expect(files).toHaveLength(1);
      expect(files[0]).toMatch(/\.eml$/);
      const raw = readFileSync(path.join(dir, files[0]!), 'utf8');
      const headers = mailHeaders(raw);
      expect(headers.from).toBe(FROM);
      expect(headers.to).toBe(owner);
      const [stored] = await alertsOf(acct);
      expect(stored).toMatchObject({
        kind: 'first',
        sequence: 1,
        recipients: [owner],
        webhookId: hook.data.id,
        pollId: poll.pollId,
      });
      expect(Date.parse(stored!.sentAt)).toBeGreaterThanOrEqual(createdAt + QUIET);
      expect(headers.subject).toBe(stored!.subject);
      const body = mailBody(raw);
      expect(body).toContain(stored!.text.trim());
      expect(body).toContain(`Endpoint: ${receiver.url('/outbox-gone')}`);
      expect(body).toContain('What went wrong: HTTP 410');
      expect(body).toMatch(/text\/html/);
      expect(await healthOf(acct, poll.pollId)).toMatchObject({ state: 'alerted', alertEmailsSent: 1 });
      await deps.mailer!.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SMTP alerts from the scheduler', () => {
  const stop = new AbortController();
  const logged: Json[] = [];
  let scheduler: Promise<void>;
  beforeAll(() => {
    const deps: Deps = {
      ...worker.deps,
      mailer: smtpMailer(sink.url, FROM),
      alerts: { quietMs: QUIET, reminderMs: REMINDER },
    };
    scheduler = startScheduler(deps, stop.signal, {
      tickMs: 50,
      tasks: [alertCheck()],
      // Warnings are kept: the test of a recipient refused reads its log line.
      logger: pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line) as Json) }),
    });
  });
  afterAll(async () => {
    stop.abort();
    await scheduler;
  });

  it('alerts the owner once after the quiet period, reminds up to three emails, resets on success, and alerts again on a later break', async () => {
    const acct = await h.account();
    const owner = await ownerEmail(acct);
    const path1 = '/gone-owner';
    const url = receiver.url(path1);
    receiver.script(path1, [{ status: 410 }]);
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, url);
    const createdAt = Date.parse((hook.data as unknown as { createdAt: string }).createdAt);
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'first' }] });
    await finalStatus(acct, path1, 1, 'rejected');
    expect(receiver.received.filter((r) => r.path === path1)).toHaveLength(1);

    // Rejected, but the quiet period is not over: nothing yet.
    await sleep(Math.max(0, createdAt + QUIET - 400 - Date.now()));
    expect(mailsTo(owner)).toEqual([]);
    expect(await healthOf(acct, poll.pollId)).toMatchObject({ state: 'healthy', alertEmailsSent: 0 });

    // Exactly one email after the quiet period.
    const [first] = await waitMails(owner, 1);
    expect(first!.at).toBeGreaterThanOrEqual(createdAt + QUIET);
    const firstSentAt = Date.parse((await storedAlerts(acct, 1))[0]!.sentAt);
    expect(firstSentAt).toBeGreaterThanOrEqual(createdAt + QUIET);
    // Until just before the reminder is due, still that one email.
    await sleep(Math.max(0, firstSentAt + REMINDER - 200 - Date.now()));
    expect(mailsTo(owner)).toHaveLength(1);
    expect(await healthOf(acct, poll.pollId)).toMatchObject({ state: 'alerted', alertEmailsSent: 1 });

    // Reminders each reminder period, three emails in all, then no fourth.
    const three = await waitMails(owner, 3);
    const sentAts = (await storedAlerts(acct, 3)).map((a) => Date.parse(a.sentAt)).reverse();
    expect(sentAts[0]).toBe(firstSentAt);
    expect(sentAts[1]! - sentAts[0]!).toBeGreaterThanOrEqual(REMINDER);
    expect(sentAts[2]! - sentAts[1]!).toBeGreaterThanOrEqual(REMINDER);
    expect(three[1]!.at).toBeGreaterThanOrEqual(sentAts[1]!);
    await sleep(Math.max(0, sentAts[2]! + REMINDER * 1.5 - Date.now()));
    expect(mailsTo(owner)).toHaveLength(3);
    const alerted = await healthOf(acct, poll.pollId);
    expect(alerted).toMatchObject({ state: 'alerted', alertEmailsSent: 3, lastSuccessAt: null });
    expect(alerted.lastGivenUpAt).not.toBeNull();

    // Every email is stored and listed, newest first.
    const stored = await alertsOf(acct);
    expect(stored).toHaveLength(3);
    expect(stored.map((a) => [a.kind, a.sequence])).toEqual([
      ['reminder', 3],
      ['reminder', 2],
      ['first', 1],
    ]);
    const want = {
      to: [owner],
      endpoint: url,
      pollId: poll.pollId,
      failure: 'HTTP 410',
      lost: 1,
      configured: /webhook settings/,
      trigger: /Send if partially or fully completed/,
    };
    [...stored].reverse().forEach((a, i) => {
      expectAlertMail(three[i]!, a, want);
      expect(a.webhookId).toBe(hook.data.id);
      expect(a.details.question).toBeNull();
      expect(a.details.configuredIn).toContain(hook.data.id);
    });
    expect(stored[2]!.subject).not.toMatch(/reminder/);
    expect(stored[1]!.subject).toMatch(/reminder 1 of 2/);
    expect(stored[0]!.text).toMatch(/last email/);

    // The endpoint answers again: a new delivery succeeds and ends the episode.
    receiver.script(path1, [{ status: 200 }]);
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'second' }] });
    await finalStatus(acct, path1, 2, 'delivered');
    const healed = await until(
      () => healthOf(acct, poll.pollId),
      (x) => x.state === 'healthy',
    );
    expect(healed.alertEmailsSent).toBe(0);
    expect(healed.lastSuccessAt).not.toBeNull();
    const successAt = Date.parse(healed.lastSuccessAt!);
    // A success after the give-up: no alert, however long it stays quiet.
    await sleep(QUIET + 300);
    expect(mailsTo(owner)).toHaveLength(3);

    // A later break alerts again, starting over with a first email.
    receiver.script(path1, [{ status: 410 }]);
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'third' }] });
    await finalStatus(acct, path1, 3, 'rejected');
    const four = await waitMails(owner, 4);
    const again = (await storedAlerts(acct, 4))[0]!;
    expect(Date.parse(again.sentAt)).toBeGreaterThanOrEqual(successAt + QUIET);
    expect(again).toMatchObject({ kind: 'first', sequence: 1 });
    expect(again.subject).not.toMatch(/reminder/);
    // Two deliveries given up on within the past week.
    expectAlertMail(four[3]!, again, { ...want, lost: 2 });
    expect(await healthOf(acct, poll.pollId)).toMatchObject({ state: 'alerted', alertEmailsSent: 1 });

    // Another account cannot read these alerts.
    const rival = await h.account();
    const res = await h.app.inject({
      method: 'GET',
      url: `/alerts?accountId=${acct.accountId}`,
      headers: bearer(rival.key),
    });
    expect(res.statusCode).toBe(404);
  });

  it('mails the notification recipients instead of the owner when they are set', async () => {
    const acct = await h.account();
    const owner = await ownerEmail(acct);
    const patch = await h.app.inject({
      method: 'PATCH',
      url: '/account/settings',
      headers: bearer(acct.key),
      payload: { accountId: acct.accountId, notificationRecipients: ['Ops@Example.com', 'oncall@example.net'] },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    receiver.script('/gone-team', [{ status: 404 }]);
    const poll = await visiblePoll(h, acct);
    await createWebhook(h, acct, poll.pollId, receiver.url('/gone-team'), 'complete');
    await answer(h, {
      pollId: poll.pollId,
      answers: [
        { slideId: poll.q1, value: 'a' },
        { slideId: poll.q2, value: 'a@example.com' },
      ],
    });
    await finalStatus(acct, '/gone-team', 1, 'rejected');
    const [m] = await waitMails('ops@example.com', 1);
    expect(m!.to.sort()).toEqual(['oncall@example.net', 'ops@example.com']);
    expect(mailsTo(owner)).toEqual([]);
    const [stored] = await storedAlerts(acct, 1);
    expectAlertMail(m!, stored!, {
      to: ['ops@example.com', 'oncall@example.net'],
      endpoint: receiver.url('/gone-team'),
      pollId: poll.pollId,
      failure: 'HTTP 404',
      lost: 1,
      configured: /webhook settings/,
      trigger: /Send only if fully completed/,
    });
  });

  it('alerts about a logic-triggered URL, naming the question and the workflow actions tab', async () => {
    const acct = await h.account();
    const owner = await ownerEmail(acct);
    const url = receiver.url('/gone-logic');
    receiver.script('/gone-logic', [{ status: 401 }]);
    const headers = bearer(acct.key);
    const poll = (
      await h.app.inject({
        method: 'POST',
        url: '/poll',
        headers,
        payload: { accountId: acct.accountId, title: 'Logic alerts' },
      })
    ).json().data;
    const slide = await h.app.inject({
      method: 'POST',
      url: '/slide',
      headers,
      payload: {
        pollId: poll.id,
        type: 'star-rating',
        title: 'Rate the checkout',
        logic: [{ match: 'all', conditions: [{ op: 'lt', value: 3 }], action: { type: 'trigger-webhook', url } }],
      },
    });
    expect(slide.statusCode, slide.body).toBe(201);
    const slideId = slide.json().data.id;
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: '/poll/update',
          headers,
          payload: { pollId: poll.id, isVisible: true },
        })
      ).statusCode,
    ).toBe(200);
    await answer(h, { pollId: poll.id, answers: [{ slideId, value: 1 }] });
    await finalStatus(acct, '/gone-logic', 1, 'rejected');
    const [m] = await waitMails(owner, 1);
    const [stored] = await storedAlerts(acct, 1);
    expectAlertMail(m!, stored!, {
      to: [owner],
      endpoint: url,
      pollId: poll.id,
      failure: 'HTTP 401',
      lost: 1,
      configured: /workflow actions tab/,
      trigger: /question logic: when the answer lt 3/,
    });
    expect(stored!.webhookId).toBeNull();
    expect(stored!.details.question).toEqual({ id: slideId, title: 'Rate the checkout' });
    expect(stored!.text).toContain('Question: Rate the checkout');
  });

  it('an account whose recipients the mail server refuses does not hold up alerts for others', async () => {
    // Made first, so its endpoint comes first when due endpoints are taken in id order.
    const bad = await h.account();
    const badSettings = await h.app.inject({
      method: 'PATCH',
      url: '/account/settings',
      headers: bearer(bad.key),
      payload: { accountId: bad.accountId, notificationRecipients: ['nobody@example.com'] },
    });
    expect(badSettings.statusCode, badSettings.body).toBe(200);
    const good = await h.account();
    const goodOwner = await ownerEmail(good);
    receiver.script('/gone-poison', [{ status: 410 }]);
    const badPoll = await visiblePoll(h, bad);
    await createWebhook(h, bad, badPoll.pollId, receiver.url('/gone-poison'));
    const goodPoll = await visiblePoll(h, good);
    await createWebhook(h, good, goodPoll.pollId, receiver.url('/gone-poison'));
    await answer(h, { pollId: badPoll.pollId, answers: [{ slideId: badPoll.q1, value: 'x' }] });
    await finalStatus(bad, '/gone-poison', 1, 'rejected');
    await answer(h, { pollId: goodPoll.pollId, answers: [{ slideId: goodPoll.q1, value: 'y' }] });
    await finalStatus(good, '/gone-poison', 2, 'rejected');

    const [m] = await waitMails(goodOwner, 1, QUIET + 5_000);
    expect(mailHeaders(m!.raw).to).toBe(goodOwner);
    expect(await storedAlerts(good, 1)).toHaveLength(1);
    // The refused email was tried (before the other, in id order), is neither stored nor
    // counted, and is tried again at later checks.
    await until(
      async () => sink.refused.filter((a) => a === 'nobody@example.com').length,
      (n) => n >= 2,
    );
    expect(await alertsOf(bad)).toEqual([]);
    expect(await healthOf(bad, badPoll.pollId)).toMatchObject({ state: 'healthy', alertEmailsSent: 0 });
  });

  it('an email the mail server refuses for one recipient goes to the others, is kept as sent to them, and the refusal is logged', async () => {
    const acct = await h.account();
    const settings = await h.app.inject({
      method: 'PATCH',
      url: '/account/settings',
      headers: bearer(acct.key),
      payload: { accountId: acct.accountId, notificationRecipients: ['nobody@example.org', 'ops@example.org'] },
    });
    expect(settings.statusCode, settings.body).toBe(200);
    receiver.script('/gone-partly', [{ status: 410 }]);
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, receiver.url('/gone-partly'));
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'z' }] });
    await finalStatus(acct, '/gone-partly', 1, 'rejected');

    const [m] = await waitMails('ops@example.org', 1, QUIET + 5_000);
    expect(m!.to).toEqual(['ops@example.org']);
    const [stored] = await storedAlerts(acct, 1);
    expect(stored!.recipients).toEqual(['ops@example.org']);
    const line = await until(
      async () => logged.find((l) => l.endpointId === hook.data.id && Array.isArray(l.refused)),
      (l) => l !== undefined,
    );
    expect(line!.msg).toMatch(/refused for some recipients/);
    expect(line!.refused).toEqual([
      { address: 'nobody@example.org', reason: expect.stringMatching(/^550 /), temporary: false },
    ]);
  });

  it('an email the mail server defers for one recipient is sent to it again after a pause, and then lists it', async () => {
    greylist.add('soon@example.net');
    const acct = await h.account();
    const settings = await h.app.inject({
      method: 'PATCH',
      url: '/account/settings',
      headers: bearer(acct.key),
      payload: { accountId: acct.accountId, notificationRecipients: ['ops@example.net', 'soon@example.net'] },
    });
    expect(settings.statusCode, settings.body).toBe(200);
    receiver.script('/gone-later', [{ status: 410 }]);
    const poll = await visiblePoll(h, acct);
    const hook = await createWebhook(h, acct, poll.pollId, receiver.url('/gone-later'));
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'z' }] });
    await finalStatus(acct, '/gone-later', 1, 'rejected');

    const [first] = await waitMails('ops@example.net', 1, QUIET + 5_000);
    expect(first!.to).toEqual(['ops@example.net']);
    const line = await until(
      async () => logged.find((l) => l.endpointId === hook.data.id && Array.isArray(l.deferred)),
      (l) => l !== undefined,
    );
    expect(line!.deferred).toEqual([
      { address: 'soon@example.net', reason: expect.stringMatching(/^451 /), temporary: true },
    ]);
    // The first email, sent again to it alone after the pause (the reminder period here), and
    // kept as sent to both.
    const subject = mailHeaders(first!.raw).subject;
    await sink.waitFor((all) =>
      all.some((m) => m.to.join() === 'soon@example.net' && mailHeaders(m.raw).subject === subject),
    );
    const stored = await until(
      () => alertsOf(acct),
      (a) => a.find((x) => x.sequence === 1)?.recipients.length === 2,
    );
    expect(stored.find((x) => x.sequence === 1)!.recipients).toEqual(['ops@example.net', 'soon@example.net']);
  });
});
