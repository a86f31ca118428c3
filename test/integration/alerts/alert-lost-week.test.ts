import { afterAll, beforeAll, expect, it } from 'vitest';
import { checkAlerts } from '../../../src/app/alerts/check-alerts.js';
import type { Deps } from '../../../src/app/ports/index.js';
import { smtpMailer } from '../../../src/infra/mail/mailer.js';
import { bearer } from '../../support/app.js';
import { answer, createWebhook, visiblePoll } from '../../support/fixtures.js';
import { mailBody, startSmtpSink } from '../../support/smtp-sink.js';
import { liveDelivery } from '../../support/worker.js';

/**
 * "Responses lost in the past week" (docs/receiving-webhooks.md, Failure alerts): each email
 * counts the deliveries given up on in the seven days before it, so a reminder sent more than a
 * week after a loss no longer counts it. Real deliveries rejected by a real HTTPS receiver and
 * a real SMTP server; the clock the service reads jumps ahead by days.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let shift = 0;
const env = liveDelivery({ delivery: { batchWindowMs: 0 } }, () => new Date(Date.now() + shift));
let sink: Awaited<ReturnType<typeof startSmtpSink>>;
beforeAll(async () => {
  sink = await startSmtpSink();
});
afterAll(() => sink?.close());

/** Waits until the webhook's log holds `n` rejected deliveries. */
const rejectedCount = (webhookId: string, n: number) =>
  expect
    .poll(
      async () =>
        (
          await env.h.app.inject({
            url: `/webhooks/deliveries?webhookId=${webhookId}&status=rejected`,
            headers: bearer(env.acct.key),
          })
        ).json().data.length,
      { timeout: 20_000, interval: 50 },
    )
    .toBe(n);

it('a reminder sent over a week after a loss counts only the losses of the week before it', async () => {
  const { h, acct, receiver } = env;
  const path = '/gone-for-a-week';
  receiver.script(path, [{ status: 410 }]);
  const poll = await visiblePoll(h, acct);
  const hook = (await createWebhook(h, acct, poll.pollId, receiver.url(path))).data.id;
  const rejected = (n: number) => rejectedCount(hook, n);

  await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'lost first' }] });
  await rejected(1);
  shift += 6 * DAY;
  await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'lost six days later' }] });
  await rejected(2);

  const deps: Deps = {
    ...h.deps,
    mailer: smtpMailer(sink.url, 'Canvass <alerts@localhost>'),
    alerts: { quietMs: DAY, reminderMs: DAY },
  };
  const lostIn = (i: number) => /Responses lost in the past week: (\d+)/.exec(mailBody(sink.messages[i]!.raw))?.[1];
  shift += HOUR;
  // A process stopping sends no further email, though one is due.
  expect(await checkAlerts(deps, 50, AbortSignal.abort())).toBe(0);
  expect(sink.messages).toHaveLength(0);
  expect(await checkAlerts(deps)).toBe(1);
  expect(lostIn(0)).toBe('2');
  // A day later the first loss is seven days and an hour old: the reminder counts the second only.
  shift += DAY;
  expect(await checkAlerts(deps)).toBe(1);
  expect(lostIn(1)).toBe('1');
  const stored = (await h.app.inject({ url: `/alerts?accountId=${acct.accountId}`, headers: bearer(acct.key) })).json()
    .data as { kind: string; details: { responsesLostPastWeek: number } }[];
  expect(stored.map((a) => [a.kind, a.details.responsesLostPastWeek])).toEqual([
    ['reminder', 1],
    ['first', 2],
  ]);
});

it('after a change of URL, an email counts only the responses lost at the URL it names', async () => {
  const { h, acct, receiver } = env;
  receiver.script('/gone-old', [{ status: 410 }]);
  receiver.script('/gone-new', [{ status: 410 }]);
  const poll = await visiblePoll(h, acct);
  const hook = (await createWebhook(h, acct, poll.pollId, receiver.url('/gone-old'))).data.id;
  const rejected = (n: number) => rejectedCount(hook, n);
  await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'lost at the old URL' }] });
  await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'lost there too' }] });
  await rejected(2);
  const moved = await h.app.inject({
    method: 'POST',
    url: '/webhooks/update',
    headers: bearer(acct.key),
    payload: { webhookId: hook, url: receiver.url('/gone-new') },
  });
  expect(moved.statusCode, moved.body).toBe(200);
  await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'lost at the new URL' }] });
  await rejected(3);

  const deps: Deps = {
    ...h.deps,
    mailer: smtpMailer(sink.url, 'Canvass <alerts@localhost>'),
    alerts: { quietMs: DAY, reminderMs: 30 * DAY },
  };
  shift += DAY + HOUR;
  await checkAlerts(deps);
  const mails = sink.messages.map((m) => mailBody(m.raw)).filter((b) => b.includes('/gone-new'));
  expect(mails).toHaveLength(1);
  expect(/Responses lost in the past week: (\d+)/.exec(mails[0]!)?.[1]).toBe('1');
});
