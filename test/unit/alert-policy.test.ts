import { describe, expect, it } from 'vitest';
import { composeAlertEmail, type AlertContent, type AlertTerms } from '../../src/domain/alert-email.js';
import {
  decideAlert,
  MAX_ALERT_EMAILS,
  type AlertDecision,
  type AlertWindows,
  type EndpointHealth,
} from '../../src/domain/alert-policy.js';
import { FakeClock } from '../support/app.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
/** The alert windows: first after one day without success, weekly reminders, three at most. */
const SPEC: AlertWindows = { quietMs: DAY, reminderMs: WEEK };

/**
 * One endpoint's health as the repositories keep it, driven by a fake clock:
 * recordSuccess / recordGivenUp / markAlerted have the semantics of src/infra/db/repositories.
 * check() asks the policy and, like checkAlerts, marks an email as sent when it says so.
 */
class Endpoint {
  readonly clock = new FakeClock();
  health: EndpointHealth;
  sent: { at: number; kind: 'first' | 'reminder'; sequence: number }[] = [];
  constructor(readonly windows: AlertWindows = SPEC) {
    this.health = {
      state: 'healthy',
      createdAt: this.clock.now(),
      lastSuccessAt: null,
      lastGivenUpAt: null,
      alertEmailsSent: 0,
      lastAlertAt: null,
    };
  }
  get t() {
    return this.clock.ms;
  }
  advance(ms: number) {
    this.clock.advance(ms);
    return this;
  }
  success() {
    this.health = {
      ...this.health,
      lastSuccessAt: this.clock.now(),
      state: 'healthy',
      alertEmailsSent: 0,
      lastAlertAt: null,
    };
    return this;
  }
  givenUp() {
    this.health = { ...this.health, lastGivenUpAt: this.clock.now() };
    return this;
  }
  decide(): AlertDecision {
    return decideAlert(this.health, this.clock.now(), this.windows);
  }
  check(): AlertDecision['send'] {
    const d = this.decide();
    if (d.send) {
      const sequence = this.health.state === 'alerted' ? this.health.alertEmailsSent + 1 : 1;
      this.sent.push({ at: this.t, kind: d.send, sequence });
      this.health = { ...this.health, state: 'alerted', alertEmailsSent: sequence, lastAlertAt: this.clock.now() };
    }
    return d.send;
  }
  /** Checks every `tick` ms until `until` ms from now, like the scheduler. */
  run(until: number, tick = 10 * 60_000) {
    const end = this.t + until;
    while (this.t < end) {
      this.advance(Math.min(tick, end - this.t));
      this.check();
    }
    return this;
  }
}

describe('decideAlert: the first alert', () => {
  it('sends nothing before a full quiet period has passed, then exactly one first email', () => {
    const e = new Endpoint();
    e.advance(HOUR).givenUp();
    // Quiet since creation: one day after createdAt, not after the give-up.
    e.advance(DAY - HOUR - 1);
    expect(e.check()).toBeNull();
    e.advance(1);
    expect(e.check()).toBe('first');
    expect(e.health).toMatchObject({ state: 'alerted', alertEmailsSent: 1 });
    expect(e.check()).toBeNull();
  });

  it('counts the quiet period from the last success, not from creation', () => {
    const e = new Endpoint();
    e.advance(3 * DAY).success();
    e.advance(HOUR).givenUp();
    e.advance(DAY - HOUR - 1);
    expect(e.decide()).toEqual({ send: null });
    e.advance(1);
    expect(e.decide()).toEqual({ send: 'first' });
  });

  it('never alerts without a give-up, however long the endpoint stays quiet', () => {
    const e = new Endpoint();
    e.run(30 * DAY);
    expect(e.sent).toEqual([]);
    e.success().run(30 * DAY);
    expect(e.sent).toEqual([]);
  });

  it('does not alert when a success came after the give-up', () => {
    const e = new Endpoint();
    e.givenUp().advance(HOUR).success();
    e.run(10 * DAY);
    expect(e.sent).toEqual([]);
    // A success at the same instant as the give-up also counts as "after".
    const f = new Endpoint();
    f.advance(HOUR)
      .givenUp()
      .success()
      .advance(5 * DAY);
    expect(f.decide()).toEqual({ send: null });
  });
});

describe('decideAlert: reminders and the cap', () => {
  it('reminds once per reminder period after the previous email, and stops at three emails', () => {
    const e = new Endpoint();
    e.givenUp();
    e.run(60 * DAY);
    expect(MAX_ALERT_EMAILS).toBe(3);
    expect(e.sent.map((s) => [s.kind, s.sequence])).toEqual([
      ['first', 1],
      ['reminder', 2],
      ['reminder', 3],
    ]);
    const [first, second, third] = e.sent.map((s) => s.at);
    expect(first! - e.health.createdAt.getTime()).toBe(DAY);
    expect(second! - first!).toBe(WEEK);
    expect(third! - second!).toBe(WEEK);
    expect(e.health).toMatchObject({ state: 'alerted', alertEmailsSent: 3 });
  });

  it('does not remind one millisecond early', () => {
    const e = new Endpoint();
    e.givenUp().advance(DAY);
    expect(e.check()).toBe('first');
    e.advance(WEEK - 1);
    expect(e.check()).toBeNull();
    e.advance(1);
    expect(e.check()).toBe('reminder');
  });

  it('keeps quiet after the third email even as more deliveries are given up', () => {
    const e = new Endpoint();
    e.givenUp().run(DAY + 2 * WEEK);
    expect(e.sent).toHaveLength(3);
    for (let i = 0; i < 10; i++) {
      e.advance(WEEK).givenUp();
      expect(e.check()).toBeNull();
    }
    expect(e.sent).toHaveLength(3);
  });

  it('uses the configured windows', () => {
    const e = new Endpoint({ quietMs: 1_500, reminderMs: 1_000 });
    e.givenUp().run(10_000, 100);
    expect(e.sent.map((s) => s.at - e.health.createdAt.getTime())).toEqual([1_500, 2_500, 3_500]);
  });
});

describe('decideAlert: a success resets the episode', () => {
  it('a success mid-episode stops reminders; a later break alerts again with a first email', () => {
    const e = new Endpoint();
    e.givenUp().run(DAY + WEEK);
    expect(e.sent.map((s) => s.kind)).toEqual(['first', 'reminder']);
    e.advance(HOUR).success();
    expect(e.health).toMatchObject({ state: 'healthy', alertEmailsSent: 0, lastAlertAt: null });
    e.run(3 * WEEK);
    expect(e.sent).toHaveLength(2);

    const successAt = e.health.lastSuccessAt!.getTime();
    e.givenUp();
    // The new quiet period runs from the success that ended the last episode.
    e.run(60 * DAY);
    const again = e.sent.slice(2);
    expect(again.map((s) => [s.kind, s.sequence])).toEqual([
      ['first', 1],
      ['reminder', 2],
      ['reminder', 3],
    ]);
    expect(again[0]!.at).toBeGreaterThanOrEqual(successAt + DAY);
  });

  it('a success after the cap was reached lets the next break send three emails again', () => {
    const e = new Endpoint();
    e.givenUp().run(60 * DAY);
    expect(e.sent).toHaveLength(3);
    e.success()
      .advance(HOUR)
      .givenUp()
      .run(60 * DAY);
    expect(e.sent).toHaveLength(6);
    expect(e.sent[3]!.kind).toBe('first');
  });
});

const webhookContent: AlertContent = {
  endpoint: 'https://hooks.example.com/catch/12345/abcde/?token=x&mode=live',
  survey: { id: 'poll_0123456789abcdefghijkl', title: 'Customer satisfaction Q3' },
  question: null,
  trigger: 'delivery rule "Send only if fully completed"',
  configuredIn: "the survey's webhook settings (webhook whk_0123456789abcdefghijkl)",
  whatWentWrong: 'HTTP 410',
  responsesLostPastWeek: 7,
};

const logicContent: AlertContent = {
  ...webhookContent,
  endpoint: 'https://automation.example.net/hooks/qa',
  question: { id: 'sld_0123456789abcdefghijkl', title: 'How likely are you to recommend us?' },
  trigger: 'question logic: when the answer gt 8',
  configuredIn: `the survey's workflow actions tab (question logic of "How likely are you to recommend us?")`,
  whatWentWrong: 'no answer within the deadline',
  responsesLostPastWeek: 2,
};

/** The default configuration: one day of quiet, a reminder each week, a 10-second delivery timeout. */
const TERMS: AlertTerms = { quietMs: DAY, reminderMs: WEEK, deliveryTimeoutMs: 10_000 };

const htmlEsc = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

describe('composeAlertEmail', () => {
  it('names an internationalised host in its own letters in the subject, and the URL as stored in the body', () => {
    const endpoint = new URL('https://bücher.example:8443/hook').href;
    const m = composeAlertEmail({ ...webhookContent, endpoint }, 1, TERMS);
    expect(m.subject).toContain('not reaching bücher.example:8443');
    expect(m.text).toContain(`Endpoint: ${endpoint}`);
    expect(endpoint).toContain('xn--bcher-kva.example');
  });

  it('carries every content field in the text and the HTML, for a saved webhook', () => {
    const m = composeAlertEmail(webhookContent, 1, TERMS);
    for (const body of [m.text, m.html]) {
      expect(body).toMatch(/Endpoint/);
      expect(body).toMatch(/Survey/);
      expect(body).toMatch(/Trigger/);
      expect(body).toMatch(/Where it is configured/);
      expect(body).toMatch(/What went wrong/);
      expect(body).toMatch(/Responses lost in the past week/);
    }
    // The endpoint is the full URL as configured, path and query included.
    expect(m.text).toContain(`Endpoint: ${webhookContent.endpoint}`);
    expect(m.html).toContain(htmlEsc(webhookContent.endpoint));
    expect(m.text).toContain('Customer satisfaction Q3');
    expect(m.text).toContain(webhookContent.survey.id);
    expect(m.text).toContain('Send only if fully completed');
    expect(m.text).toContain('webhook settings');
    expect(m.text).not.toContain('workflow actions');
    expect(m.text).toContain('What went wrong: HTTP 410');
    expect(m.text).toContain('Responses lost in the past week: 7');
    expect(m.html).toMatch(/Responses lost in the past week<\/th><td>7</);
    // No question line for a saved webhook.
    expect(m.text).not.toMatch(/^Question:/m);
    expect(m.subject).toContain('Customer satisfaction Q3');
    expect(m.subject).toContain('hooks.example.com');
    expect(m.subject).not.toMatch(/reminder/i);
  });

  it('names the question and the workflow actions tab for question logic', () => {
    const m = composeAlertEmail(logicContent, 1, TERMS);
    for (const body of [m.text, m.html]) {
      expect(body).toContain('Question');
      expect(body).toContain(logicContent.question!.id);
      expect(body).toContain('workflow actions tab');
      expect(body).toContain('question logic: when the answer gt 8');
      expect(body).toContain('no answer within the deadline');
      expect(body).toContain(logicContent.endpoint);
    }
    expect(m.text).toContain('Question: How likely are you to recommend us?');
    expect(m.text).toContain('Responses lost in the past week: 2');
  });

  it('lists the common causes: 404, 401/403, 410 and timeouts over 10 seconds', () => {
    const m = composeAlertEmail(webhookContent, 1, TERMS);
    for (const body of [m.text, m.html]) {
      expect(body).toMatch(/404/);
      expect(body).toMatch(/401/);
      expect(body).toMatch(/403/);
      expect(body).toMatch(/410/);
      expect(body).toMatch(/timeout/i);
      expect(body).toMatch(/10 seconds/);
    }
    expect(m.text).toMatch(/test-only URL/);
    expect(m.text).toMatch(/deleted or expired/);
  });

  it('HTML-escapes titles and URLs, and leaves the plain text as written', () => {
    const nasty: AlertContent = {
      ...logicContent,
      endpoint: 'https://hooks.example.com/a?x=1&y=<2>',
      survey: { id: 'poll_x', title: '<script>alert("s")</script> & Co' },
      question: { id: 'sld_x', title: '<img src=x onerror=alert(1)> "Q"' },
    };
    const m = composeAlertEmail(nasty, 1, TERMS);
    expect(m.html).not.toContain('<script>');
    expect(m.html).not.toContain('<img');
    expect(m.html).toContain('&lt;script&gt;alert(&quot;s&quot;)&lt;/script&gt; &amp; Co');
    expect(m.html).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;Q&quot;');
    expect(m.html).toContain('https://hooks.example.com/a?x=1&amp;y=&lt;2&gt;');
    expect(m.text).toContain('Survey: <script>alert("s")</script> & Co');
    expect(m.text).toContain('Question: <img src=x onerror=alert(1)> "Q"');
  });

  it('marks reminders in the subject and says when it is the last email', () => {
    const first = composeAlertEmail(webhookContent, 1, TERMS);
    const second = composeAlertEmail(webhookContent, 2, TERMS);
    const last = composeAlertEmail(webhookContent, MAX_ALERT_EMAILS, TERMS);
    expect(second.subject).toMatch(/reminder 1 of 2/);
    expect(last.subject).toMatch(/reminder 2 of 2/);
    expect(first.text).toContain('a reminder every 7 days');
    expect(last.text).toMatch(/last email/);
    expect(first.text).not.toMatch(/last email/);
  });

  it('states the configured quiet time, reminder period and delivery timeout in words', () => {
    const defaults = composeAlertEmail(webhookContent, 1, TERMS);
    for (const body of [defaults.text, defaults.html]) {
      expect(body).toContain('no successful delivery for 1 day or more');
      expect(body).toContain('a reminder every 7 days');
      expect(body).toContain('within 10 seconds');
    }
    const m = composeAlertEmail(webhookContent, 1, {
      quietMs: 6 * HOUR,
      reminderMs: 36 * HOUR,
      deliveryTimeoutMs: 2_500,
    });
    expect(m.text).toContain('no successful delivery for 6 hours or more');
    expect(m.text).toContain('a reminder every 1 day and 12 hours');
    expect(m.text).toContain('within 2 seconds and 500 milliseconds');
    expect(m.text).not.toMatch(/a day|weekly|10 seconds/);
  });
});
