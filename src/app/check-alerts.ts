import { decideAlert } from '../domain/alert-policy.js';
import { composeAlertEmail, type AlertContent } from '../domain/alert-email.js';
import { newId } from '../domain/ids.js';
import { describeConditions } from '../domain/logic-eval.js';
import type { Endpoint } from './delivery-ports.js';
import type { Deps, Store } from './ports.js';

const WEEK_MS = 7 * 86_400_000;
const RULE_WORDS = { partial: 'Send if partially or fully completed', complete: 'Send only if fully completed' } as const;

async function contentFor(store: Store, e: Endpoint, now: Date): Promise<AlertContent | undefined> {
  const poll = await store.polls.get(e.pollId);
  if (!poll) return undefined;
  const slides = await store.slides.listByPoll(poll.id);
  const title = (id: string) => slides.find((s) => s.id === id)?.title ?? id;
  let trigger: string;
  let configuredIn: string;
  let question: AlertContent['question'] = null;
  if (e.source === 'webhook') {
    const w = e.webhookId ? await store.webhooks.get(e.webhookId) : undefined;
    if (!w) return undefined;
    trigger = `delivery rule "${RULE_WORDS[w.deliveryRule]}"`;
    configuredIn = `the survey's webhook settings (webhook ${w.id})`;
  } else if (e.source === 'question-logic') {
    const slide = slides.find((s) => s.id === e.slideId);
    question = { id: e.slideId ?? '', title: slide?.title ?? '(deleted question)' };
    const rule = slide?.logic.find((r) => r.action.type === 'trigger-webhook' && r.action.url === e.url);
    trigger = rule ? `question logic: when ${describeConditions(rule.match, rule.conditions, title)}` : 'question logic (rule since removed)';
    configuredIn = `the survey's workflow actions tab (question logic of "${question.title}")`;
  } else {
    const rule = poll.actionLogic.find((r) => r.action.type === 'trigger-webhook' && r.action.url === e.url);
    trigger = rule ? `survey action logic on completion: when ${describeConditions(rule.match, rule.conditions ?? [], title)}` : 'survey action logic (rule since removed)';
    configuredIn = "the survey's workflow actions tab (survey action logic)";
  }
  return {
    endpoint: e.url,
    survey: { id: poll.id, title: poll.title },
    question,
    trigger,
    configuredIn,
    whatWentWrong: e.lastFailure ?? 'unknown',
    responsesLostPastWeek: await store.deliveries.countLost(e.id, new Date(now.getTime() - WEEK_MS)),
  };
}

async function recipientsFor(store: Store, accountId: string): Promise<string[]> {
  const account = await store.accounts.get(accountId);
  if (account?.notificationRecipients?.length) return account.notificationRecipients;
  const owner = await store.users.ownerEmail(accountId);
  return owner ? [owner] : [];
}

/**
 * Sends the failure alerts that are due (SPEC §6.5). Each endpoint is handled in its own
 * transaction holding its row: the email is sent before the commit, so a crash in between
 * can repeat an email but never lose one, and two schedulers never mail the same endpoint.
 * An email that cannot be sent (say, the mail server refuses its recipients) leaves its
 * endpoint due for the next check and does not hold up the other endpoints; the failures are
 * thrown together once the others are done.
 */
export async function checkAlerts(deps: Deps, limit = 50): Promise<number> {
  const mailer = deps.mailer;
  const windows = deps.alerts;
  if (!mailer || !windows) return 0;
  let sent = 0;
  const failed: { endpointId: string; error: unknown }[] = [];
  for (let i = 0; i < limit; i++) {
    let claimed: string | undefined;
    const did = await deps.store.transaction(async (store) => {
      const now = deps.clock.now();
      const [e] = await store.alerts.claimCandidates(new Date(now.getTime() - windows.quietMs), new Date(now.getTime() - windows.reminderMs), 1, failed.map((f) => f.endpointId));
      if (!e) return null;
      claimed = e.id;
      const decision = decideAlert(e, now, windows);
      // The SQL filter mirrors the policy; should they ever disagree, stop rather than spin.
      if (!decision.send) return null;
      const content = await contentFor(store, e, now);
      const to = await recipientsFor(store, e.accountId);
      const sequence = e.state === 'alerted' ? e.alertEmailsSent + 1 : 1;
      if (!content || !to.length) {
        // Nothing to say or no one to tell: count it as handled so the endpoint is not retried every tick.
        await store.alerts.markAlerted(e.id, sequence, now);
        return false;
      }
      const mail = composeAlertEmail(content, sequence);
      await mailer.send({ to, ...mail });
      await store.alerts.insert({ id: newId('alr', now.getTime()), accountId: e.accountId, endpointId: e.id, webhookId: e.webhookId, pollId: e.pollId, kind: decision.send, sequence, recipients: to, ...mail, details: content, sentAt: now });
      await store.alerts.markAlerted(e.id, sequence, now);
      return true;
    }).catch((error: unknown) => {
      if (claimed === undefined) throw error;
      failed.push({ endpointId: claimed, error });
      return false;
    });
    if (did === null) break;
    if (did) sent++;
  }
  if (failed.length) {
    const first = failed[0]!.error;
    throw new AggregateError(
      failed.map((f) => f.error),
      `${failed.length} failure alert email(s) not sent, tried again at the next check (endpoint ${failed[0]!.endpointId}: ${first instanceof Error ? first.message : String(first)})`,
    );
  }
  return sent;
}
