import { domainToUnicode } from 'node:url';
import { commonCauses, MAX_ALERT_EMAILS } from './alert-policy.js';
import { humanDuration } from './duration.js';

export type AlertContent = {
  endpoint: string;
  survey: { id: string; title: string };
  question: { id: string; title: string } | null;
  trigger: string;
  configuredIn: string;
  whatWentWrong: string;
  responsesLostPastWeek: number;
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The configured times an alert email states: the quiet period, the reminder period, the delivery timeout. */
export type AlertTerms = { quietMs: number; reminderMs: number; deliveryTimeoutMs: number };

/** The failure-alert email (docs/receiving-webhooks.md#failure-alerts), as plain text and HTML. */
export function composeAlertEmail(
  c: AlertContent,
  sequence: number,
  terms: AlertTerms,
): { subject: string; text: string; html: string } {
  const reminder = sequence > 1 ? ` (reminder ${sequence - 1} of ${MAX_ALERT_EMAILS - 1})` : '';
  // The host as its owner writes it (`bücher.example`, not its punycode); the Endpoint field keeps the URL as stored.
  const url = new URL(c.endpoint);
  const host = domainToUnicode(url.hostname) + (url.port ? `:${url.port}` : '');
  const subject = `Webhook failing: responses to "${c.survey.title}" are not reaching ${host}${reminder}`;
  const fields: [string, string][] = [
    ['Endpoint', c.endpoint],
    ['Survey', `${c.survey.title} (${c.survey.id})`],
    ...(c.question ? ([['Question', `${c.question.title} (${c.question.id})`]] as [string, string][]) : []),
    ['Trigger', c.trigger],
    ['Where it is configured', c.configuredIn],
    ['What went wrong', c.whatWentWrong],
    ['Responses lost in the past week', String(c.responsesLostPastWeek)],
  ];
  const intro =
    `Your webhook endpoint has had no successful delivery for ${humanDuration(terms.quietMs)} or more, and Canvass has given up on at least one. ` +
    'The answers are safe: they stay in the dashboard, exports and API.';
  const outro =
    sequence < MAX_ALERT_EMAILS
      ? `We will send a reminder every ${humanDuration(terms.reminderMs)} while it stays broken (${MAX_ALERT_EMAILS} emails at most). The next successful delivery ends this alert.`
      : 'This is the last email about this problem. The next successful delivery ends this alert.';
  const causes = commonCauses(terms.deliveryTimeoutMs);
  const text = [
    intro,
    '',
    ...fields.map(([k, v]) => `${k}: ${v}`),
    '',
    'Common causes and what to do:',
    ...causes.map((x) => `- ${x.cause}: ${x.fix}`),
    '',
    outro,
    '',
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<p>${esc(intro)}</p>`,
    '<table cellpadding="4" style="border-collapse:collapse">',
    ...fields.map(([k, v]) => `<tr><th align="left" style="vertical-align:top">${esc(k)}</th><td>${esc(v)}</td></tr>`),
    '</table>',
    '<h3>Common causes and what to do</h3><ul>',
    ...causes.map((x) => `<li><strong>${esc(x.cause)}</strong>: ${esc(x.fix)}</li>`),
    '</ul>',
    `<p>${esc(outro)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

/** What an alert email says, kept with the email (GET /alerts lists it). */
export type AlertDetails = AlertContent;

export type AlertEmail = {
  id: string;
  accountId: string;
  endpointId: string;
  webhookId: string | null;
  pollId: string;
  kind: 'first' | 'reminder';
  sequence: number;
  recipients: string[];
  subject: string;
  text: string;
  html: string;
  details: AlertDetails;
  sentAt: Date;
};
