import { decideAlert } from '../../domain/alert-policy.js';
import { composeAlertEmail, type AlertContent } from '../../domain/alert-email.js';
import { newId } from '../../domain/ids.js';
import { comparableAddress } from '../../domain/email-address.js';
import { describeConditions } from '../../domain/logic-eval.js';
import type { Endpoint } from '../../domain/webhook.js';
import type { Deps, MailReceipt, Store } from '../ports/index.js';
import { MailServerUnavailableError } from '../ports/mail-server-unavailable.js';
import { keepRenewing } from './keep-renewing.js';
import { recipientsFor } from './recipients.js';
import { byReceipt, deferredUntil } from './retry-deferred.js';

const WEEK_MS = 7 * 86_400_000;
const RULE_WORDS = {
  partial: 'Send if partially or fully completed',
  complete: 'Send only if fully completed',
} as const;

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
    if (!rule) return undefined;
    trigger = `question logic: when ${describeConditions(rule.match, rule.conditions, title)}`;
    configuredIn = `the survey's workflow actions tab (question logic of "${question.title}")`;
  } else {
    const rule = poll.actionLogic.find((r) => r.action.type === 'trigger-webhook' && r.action.url === e.url);
    if (!rule) return undefined;
    trigger = `survey action logic on completion: when ${describeConditions(rule.match, rule.conditions ?? [], title)}`;
    configuredIn = "the survey's workflow actions tab (survey action logic)";
  }
  return {
    endpoint: e.url,
    survey: { id: poll.id, title: poll.title },
    question,
    trigger,
    configuredIn,
    whatWentWrong: e.lastFailure ?? 'unknown',
    // Those lost at the URL the email names: a new URL starts the endpoint's alerts afresh.
    responsesLostPastWeek: await store.deliveries.countLost(e.id, new Date(now.getTime() - WEEK_MS), e.url),
  };
}

/**
 * How long an endpoint is held while its email is out, and after a send that failed: minutes,
 * or less when the operator configured shorter alert windows.
 */
const holdMs = (w: { reminderMs: number }, ms: number) => Math.min(ms, w.reminderMs);
const SENDING_HOLD_MS = 120_000;
const FAILED_SEND_PAUSE_MS = 300_000;

/** Keeps an endpoint held while its email is out, so no other scheduler finds it run out and mails it again. */
const keepHeld = (deps: Deps, endpointId: string, ms: number) =>
  keepRenewing(() => deps.store.alerts.hold(endpointId, new Date(deps.clock.now().getTime() + ms)), ms);

type Plan = {
  /** The email's id, made once: a record tried again inserts it once. */
  id: string;
  endpoint: Endpoint;
  kind: 'first' | 'reminder';
  sequence: number;
  to: string[];
  content: AlertContent;
  now: Date;
  /** Once sent: those the mail server asked to try again later, kept to be sent it again. */
  deferred?: string[];
  /** Stops renewing the endpoint's hold (kept from its claim through the send). */
  release: () => Promise<void>;
};

/** Whether the endpoint is as a plan read it: no success, other scheduler or new URL since. */
const unchangedSince = (cur: Endpoint | undefined, e: Endpoint): cur is Endpoint =>
  !!cur &&
  cur.url === e.url &&
  cur.state === e.state &&
  cur.alertEmailsSent === e.alertEmailsSent &&
  cur.lastSuccessAt?.getTime() === e.lastSuccessAt?.getTime();

/**
 * Phase 1: pick one due endpoint and hold it, in a short transaction; then compose its email
 * outside it. The email's count of responses lost reads up to a week of rows, and the
 * endpoint's row lock held meanwhile would hold up the recording of its deliveries' results;
 * the hold alone keeps other schedulers off it.
 */
async function planNext(
  deps: Deps,
  windows: { quietMs: number; reminderMs: number },
): Promise<Plan | 'handled' | null> {
  const claimed = await deps.store.transaction(async (store) => {
    const now = deps.clock.now();
    const [e] = await store.alerts.claimCandidates(
      now,
      new Date(now.getTime() - windows.quietMs),
      new Date(now.getTime() - windows.reminderMs),
      1,
    );
    if (!e) return null;
    const decision = decideAlert(e, now, windows);
    // The SQL filter mirrors the policy; should they ever disagree, stop rather than spin.
    if (!decision.send) return null;
    await store.alerts.hold(e.id, new Date(now.getTime() + holdMs(windows, SENDING_HOLD_MS)));
    return { e, kind: decision.send, now, sequence: e.state === 'alerted' ? e.alertEmailsSent + 1 : 1 };
  });
  if (!claimed) return null;
  const { e, now, sequence } = claimed;
  // Renewed from the claim on, however long the count of losses and the send take.
  const release = keepHeld(deps, e.id, holdMs(windows, SENDING_HOLD_MS));
  let content: AlertContent | undefined;
  let to: string[];
  try {
    content = await contentFor(deps.store, e, now);
    to = content ? await recipientsFor(deps.store, e.accountId) : [];
  } catch (error) {
    await release();
    throw error;
  }
  if (!content || !to.length) {
    await release();
    await deps.store.transaction(async (store) => {
      const cur = await store.alerts.lockEndpoint(e.id);
      if (!unchangedSince(cur, e)) {
        if (cur) await store.alerts.hold(e.id, null);
      } else if (!content) {
        // The Trigger webhook action is gone: its failures are nobody's to mend. They stop
        // counting, not silenced, so that an action added again at that URL is alerted about
        // when it fails anew; its losses stay listed for a recover.
        await store.endpoints.startAfresh(e.id, now);
      } else {
        // No one to mail (no recipients, no owner): marked as if sent, so that the endpoint is
        // not picked again at every pass.
        await store.alerts.markAlerted(e.id, sequence, now);
      }
    });
    return 'handled';
  }
  return { id: newId('alr', now.getTime()), endpoint: e, kind: claimed.kind, sequence, to, content, now, release };
}

/**
 * Phase 3: record the email. It was sent, so it is kept whatever happened meanwhile; the
 * endpoint counts it only if nothing changed it since: a success, another scheduler, or a new
 * URL (which starts its alert state afresh: the email was about the old one).
 */
async function record(deps: Deps, plan: Plan, mail: { subject: string; text: string; html: string }): Promise<void> {
  await deps.store.transaction(async (store) => {
    const e = plan.endpoint;
    const cur = await store.alerts.lockEndpoint(e.id);
    const unchanged = unchangedSince(cur, e);
    await store.alerts.insert(
      {
        id: plan.id,
        accountId: e.accountId,
        endpointId: e.id,
        webhookId: e.webhookId,
        pollId: e.pollId,
        kind: plan.kind,
        sequence: plan.sequence,
        recipients: plan.to,
        ...mail,
        details: plan.content,
        sentAt: plan.now,
      },
      await stillRecipients(deps, store, e.accountId, plan.deferred),
    );
    if (unchanged) await store.alerts.markAlerted(e.id, plan.sequence, plan.now);
    else if (cur) await store.alerts.hold(e.id, null);
  });
}

/**
 * The deferred recipients to keep on an email: those still the account's, read in the record's
 * transaction, so one who left while the email was out is not sent it again.
 */
async function stillRecipients(
  deps: Deps,
  store: Store,
  accountId: string,
  deferred: string[] | undefined,
): Promise<{ recipients: string[]; until: Date } | undefined> {
  if (!deferred?.length) return undefined;
  const current = new Set((await recipientsFor(store, accountId)).map(comparableAddress));
  const kept = deferred.filter((a) => current.has(comparableAddress(a)));
  return kept.length
    ? { recipients: kept, until: deferredUntil(deps.clock.now(), 1, deps.alerts!.reminderMs) }
    : undefined;
}

/** Tries to record an email sent, RECORD_TRIES times over about a second and a half, then gives up with the error. */
async function recordRetrying(deps: Deps, plan: Plan, mail: Parameters<typeof record>[2]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await record(deps, plan, mail);
    } catch (err) {
      if (attempt >= RECORD_TRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** (attempt - 1)));
    }
  }
}
const RECORD_TRIES = 4;

/** An email sent whose record failed: the process keeps it and records it at its next passes. */
export type UnrecordedAlert = { plan: Plan; mail: Parameters<typeof record>[2]; refused: MailReceipt['refused'] };

const sentAlert = ({ plan, refused }: UnrecordedAlert): SentAlert => ({
  endpointId: plan.endpoint.id,
  webhookId: plan.endpoint.webhookId,
  pollId: plan.endpoint.pollId,
  url: plan.endpoint.url,
  kind: plan.kind,
  sequence: plan.sequence,
  recipients: plan.to.length,
  refused: refused.filter((r) => !r.temporary),
  deferred: refused.filter((r) => r.temporary),
});

/** An alert email sent and recorded, as the caller may log or count it. */
export type SentAlert = {
  endpointId: string;
  webhookId: string | null;
  pollId: string;
  url: string;
  kind: 'first' | 'reminder';
  sequence: number;
  /** How many addresses it went to. */
  recipients: number;
  /** The addresses the mail server refused for good, with its reply: they do not get the email. */
  refused: MailReceipt['refused'];
  /** Those it asked to try again later: sent it again (retry-deferred.ts). */
  deferred: MailReceipt['refused'];
};

/**
 * Sends the failure alerts that decideAlert finds due, in three steps per endpoint: choose and
 * hold it (a short transaction), send the email holding no lock or connection (SMTP may be
 * slow), then record it. A crash after sending can repeat an email, never lose one; the hold
 * keeps other schedulers off the endpoint meanwhile. An email that cannot be sent (say, the
 * mail server refuses its recipients) pauses that endpoint for a while without holding up the
 * others; the failures are thrown together at the end so the scheduler logs them.
 *
 * An email sent whose record keeps failing (the database lost meanwhile) joins `unrecorded`,
 * which the caller keeps between passes: each pass records those first, before it plans, so a
 * database back within the process's life sees the email counted rather than sending it again
 * once the hold ends. The pass stops there, as the database is failing.
 */
export async function checkAlerts(
  deps: Deps,
  limit = 50,
  signal?: AbortSignal,
  onSent?: (email: SentAlert) => void,
  unrecorded: UnrecordedAlert[] = [],
): Promise<number> {
  const mailer = deps.mailer;
  const windows = deps.alerts;
  if (!mailer || !windows) return 0;
  let sent = 0;
  while (unrecorded.length) {
    const u = unrecorded[0]!;
    try {
      await record(deps, u.plan, u.mail);
    } catch (err) {
      // Kept a reminder period at most: one that never records (no outage, a fault) does not
      // stop this process's alerts for good; unrecorded, it may be sent again (a repeat).
      if (deps.clock.now().getTime() - u.plan.now.getTime() >= windows.reminderMs) {
        unrecorded.shift();
        continue;
      }
      throw new Error(
        `${unrecorded.length} failure alert email(s) sent but not recorded yet (endpoint ${u.plan.endpoint.id}): ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    unrecorded.shift();
    sent++;
    onSent?.(sentAlert(u));
  }
  const failed: { endpointId: string; error: unknown }[] = [];
  // A stop sends no further email: one the process were killed amid would go again later.
  for (let i = 0; i < limit && !signal?.aborted; i++) {
    const plan = await planNext(deps, windows);
    if (plan === null) break;
    if (plan === 'handled') continue;
    const release = plan.release;
    let refused: MailReceipt['refused'];
    let mail: ReturnType<typeof composeAlertEmail>;
    try {
      mail = composeAlertEmail(plan.content, plan.sequence, {
        ...windows,
        deliveryTimeoutMs: deps.delivery.deliveryTimeoutMs,
      });
      ({ refused } = await mailer.send({ to: plan.to, ...mail }));
      if (refused.length >= plan.to.length) throw new Error(`every recipient refused: ${refused[0]?.reason}`);
    } catch (error) {
      await release();
      failed.push({ endpointId: plan.endpoint.id, error });
      await deps.store.alerts.hold(
        plan.endpoint.id,
        new Date(deps.clock.now().getTime() + holdMs(windows, FAILED_SEND_PAUSE_MS)),
      );
      // Every other email would fail alike (and wait out the server's timeouts each): the pass
      // ends, said at once, and the other endpoints are tried at the next, not paused.
      if (error instanceof MailServerUnavailableError) break;
      continue;
    }
    // Renewals stop before the record, which clears the hold: one landing after it would set the
    // hold again. At least three quarters of the hold are left, for the record's tries: a brief
    // database error there would otherwise let the hold run out, and another pass mail it again.
    await release();
    // Kept as sent: to those the mail server took. Those it refused for good are named in the
    // log line, not mailed again (the others have it already); those it asked to try again
    // later (4xx) are kept on the email and sent it again (retry-deferred.ts).
    const { took: to, deferred } = byReceipt(plan.to, refused);
    const done: UnrecordedAlert = { plan: { ...plan, to, deferred }, mail, refused };
    try {
      await recordRetrying(deps, done.plan, mail);
    } catch (error) {
      unrecorded.push(done);
      // The pass ends here: the email went out, and the database that keeps it is failing.
      throw new Error(
        `a failure alert email was sent but not recorded yet (endpoint ${plan.endpoint.id}); recorded at the next pass${failed.length ? `; ${failed.length} other(s) not sent, retried after a pause` : ''}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
    sent++;
    onSent?.(sentAlert(done));
  }
  if (failed.length) {
    const first = failed[0]!.error;
    throw new AggregateError(
      failed.map((f) => f.error),
      `${failed.length} failure alert email(s) not sent, retried after a pause (endpoint ${failed[0]!.endpointId}: ${first instanceof Error ? first.message : String(first)})`,
    );
  }
  return sent;
}
