import { comparableAddress } from '../../domain/email-address.js';
import type { Deps, MailReceipt } from '../ports/index.js';
import { MailServerUnavailableError } from '../ports/mail-server-unavailable.js';

/**
 * Recipients whose mail server answered an alert email with "try again later" (4xx) are sent it
 * again after a pause that doubles from DEFERRED_PAUSE_MS (5, 10, 20, 40, 80 minutes), for
 * DEFERRED_TRIES sends in all; then they are given up and logged. Shorter alert windows
 * (CANVASS_ALERT_REMINDER_MS) shorten the first pause to the reminder period.
 */
export const DEFERRED_TRIES = 6;
const DEFERRED_PAUSE_MS = 300_000;
/** How long an email being sent again is held from other schedulers: longer than SMTP's timeouts. */
const RESENDING_HOLD_MS = 120_000;

/** When recipients deferred after `tries` sends are due again. */
export function deferredUntil(now: Date, tries: number, reminderMs: number): Date {
  return new Date(now.getTime() + Math.min(DEFERRED_PAUSE_MS, reminderMs) * 2 ** (tries - 1));
}

/** What one send to an email's deferred recipients came to, for the log. */
export type DeferredOutcome = {
  alertId: string;
  endpointId: string;
  /** The addresses the mail server took this time. */
  sentTo: string[];
  /** Refused for good (5xx): they do not get the email. */
  refused: MailReceipt['refused'];
  /** Deferred again, due at `retryAt`; or, with `retryAt` null, given up after the last try. */
  deferred: MailReceipt['refused'];
  retryAt: Date | null;
  /** The send failed as a whole (the mail server unreachable, or the connection lost). */
  error?: unknown;
};

/**
 * Sends each due email again to its deferred recipients, and keeps what came of it. The email
 * went to the others already; a process killed between a send and its record sends it to
 * those recipients again once the hold runs out (a repeat, never a loss).
 */
export async function retryDeferred(
  deps: Deps,
  limit = 50,
  signal?: AbortSignal,
  onOutcome?: (o: DeferredOutcome) => void,
): Promise<number> {
  const mailer = deps.mailer;
  const windows = deps.alerts;
  if (!mailer || !windows) return 0;
  const now = deps.clock.now();
  const due = await deps.store.alerts.claimDeferred(
    now,
    new Date(now.getTime() + Math.min(RESENDING_HOLD_MS, windows.reminderMs)),
    limit,
  );
  let sent = 0;
  for (const [i, alert] of due.entries()) {
    const tries = alert.tries + 1;
    const last = tries >= DEFERRED_TRIES;
    const settle = async (accepted: string[], deferred: string[]) => {
      const retryAt = deferred.length && !last ? deferredUntil(deps.clock.now(), tries, windows.reminderMs) : null;
      await deps.store.alerts.settleDeferred(alert.id, {
        accepted,
        deferred: retryAt ? deferred : [],
        until: retryAt,
        tries,
      });
      return retryAt;
    };
    // Stopping, or the server found unreachable: the rest keep their turn, due again at once.
    if (signal?.aborted) {
      for (const rest of due.slice(i))
        await deps.store.alerts.settleDeferred(rest.id, { ...unsent(rest), tries: rest.tries });
      break;
    }
    let refused: MailReceipt['refused'];
    try {
      ({ refused } = await mailer.send({
        to: alert.recipients,
        subject: alert.subject,
        text: alert.text,
        html: alert.html,
      }));
    } catch (error) {
      const all = alert.recipients.map((address) => ({ address, reason: 'not sent', temporary: true }));
      const retryAt = await settle([], alert.recipients);
      onOutcome?.({
        alertId: alert.id,
        endpointId: alert.endpointId,
        sentTo: [],
        refused: [],
        deferred: all,
        retryAt,
        error,
      });
      if (error instanceof MailServerUnavailableError) {
        for (const rest of due.slice(i + 1))
          await deps.store.alerts.settleDeferred(rest.id, { ...unsent(rest), tries: rest.tries });
        break;
      }
      continue;
    }
    const refusedNow = new Set(refused.map((r) => comparableAddress(r.address)));
    const sentTo = alert.recipients.filter((a) => !refusedNow.has(comparableAddress(a)));
    const deferred = refused.filter((r) => r.temporary);
    const retryAt = await settle(
      sentTo,
      deferred.map((r) => r.address),
    );
    if (sentTo.length) sent++;
    onOutcome?.({
      alertId: alert.id,
      endpointId: alert.endpointId,
      sentTo,
      refused: refused.filter((r) => !r.temporary),
      deferred,
      retryAt,
    });
  }
  return sent;
}

/** An email not tried: its recipients due again at once, its tries as they were. */
const unsent = (a: { recipients: string[] }) => ({ accepted: [], deferred: a.recipients, until: new Date(0) });
