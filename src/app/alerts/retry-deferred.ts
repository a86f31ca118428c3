import { comparableAddress } from '../../domain/email-address.js';
import type { Deps, MailReceipt } from '../ports/index.js';
import { keepRenewing } from './keep-renewing.js';
import { withoutLowerMembers } from './recipients.js';
import { MailServerUnavailableError } from '../ports/mail-server-unavailable.js';

/**
 * Recipients whose mail server answered an alert email with "try again later" (4xx) are sent it
 * again after a pause that doubles from DEFERRED_PAUSE_MS (5, 10, 20, 40, 80 minutes), for
 * DEFERRED_TRIES sends in all; then they are given up and logged. Shorter alert windows
 * (CANVASS_ALERT_REMINDER_MS) shorten the first pause to the reminder period.
 */
export const DEFERRED_TRIES = 6;
const DEFERRED_PAUSE_MS = 300_000;
/** How long an email being sent again is held from other schedulers, renewed while its send runs. */
const RESENDING_HOLD_MS = 120_000;

/** When recipients deferred after `tries` sends are due again. */
export function deferredUntil(now: Date, tries: number, reminderMs: number): Date {
  return new Date(now.getTime() + Math.min(DEFERRED_PAUSE_MS, reminderMs) * 2 ** (tries - 1));
}

/**
 * An email's recipients as one send left them: those the mail server took, and those it asked
 * to try again later (4xx), each named as the account configured it, not as the server echoed
 * it (punycode). Those refused for good are in neither.
 */
export function byReceipt(
  recipients: string[],
  refused: MailReceipt['refused'],
): { took: string[]; deferred: string[] } {
  const refusedAs = (a: string) => refused.find((r) => comparableAddress(r.address) === comparableAddress(a));
  return {
    took: recipients.filter((a) => !refusedAs(a)),
    deferred: recipients.filter((a) => refusedAs(a)?.temporary),
  };
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
 * Keeps a claimed email held while its send runs (keepRenewing): another scheduler finds it still
 * held and sends it to no one meanwhile. Each renewal moves on the hold the last one wrote; the
 * returned stop gives the hold's end as last written, which the send's outcome is kept under.
 */
function keepDeferredHeld(deps: Deps, id: string, heldUntil: Date, ms: number): () => Promise<Date> {
  let held = heldUntil;
  const stop = keepRenewing(async () => {
    const until = new Date(deps.clock.now().getTime() + ms);
    if (await deps.store.alerts.renewDeferred(id, held, until)) held = until;
  }, ms);
  return async () => {
    await stop();
    return held;
  };
}

/**
 * Sends each due email again to its deferred recipients, one claim at a time (its hold renewed
 * while it sends, not held through a batch), and keeps what came of it only while the claim is
 * still its own. The email went to the others already; a process killed between a send and its
 * record sends it to those recipients again once the hold runs out (a repeat, never a loss).
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
  let sent = 0;
  // A stop sends nothing further: what is not claimed stays due.
  for (let n = 0; n < limit && !signal?.aborted; n++) {
    const now = deps.clock.now();
    const holdMs = Math.min(RESENDING_HOLD_MS, windows.reminderMs);
    let heldUntil = new Date(now.getTime() + holdMs);
    const [alert] = await deps.store.alerts.claimDeferred(now, heldUntil, 1);
    if (!alert) break;
    const settle = async (accepted: string[], deferred: string[], tries: number) => {
      const retryAt =
        deferred.length && tries < DEFERRED_TRIES ? deferredUntil(deps.clock.now(), tries, windows.reminderMs) : null;
      await deps.store.alerts.settleDeferred(alert.id, heldUntil, {
        accepted,
        deferred: retryAt ? deferred : [],
        until: retryAt,
        tries,
      });
      return retryAt;
    };
    // One who joined in a role that may not see webhook URLs since is sent it no more.
    const to = await withoutLowerMembers(deps.store, alert.accountId, alert.recipients);
    if (!to.length) {
      await settle([], [], alert.tries);
      continue;
    }
    let refused: MailReceipt['refused'];
    try {
      const stopHolding = keepDeferredHeld(deps, alert.id, heldUntil, holdMs);
      try {
        ({ refused } = await mailer.send({ to, subject: alert.subject, text: alert.text, html: alert.html }));
      } finally {
        heldUntil = await stopHolding();
      }
    } catch (error) {
      // A mail server that cannot be reached answered nobody: no try is counted, and the pass
      // ends, as every other send would fail alike.
      const unavailable = error instanceof MailServerUnavailableError;
      const retryAt = await settle([], to, unavailable ? alert.tries : alert.tries + 1);
      const deferred = to.map((address) => ({ address, reason: 'not sent', temporary: true }));
      onOutcome?.({
        alertId: alert.id,
        endpointId: alert.endpointId,
        sentTo: [],
        refused: [],
        deferred,
        retryAt,
        error,
      });
      if (unavailable) break;
      continue;
    }
    const { took: sentTo, deferred } = byReceipt(to, refused);
    const retryAt = await settle(sentTo, deferred, alert.tries + 1);
    if (sentTo.length) sent++;
    onOutcome?.({
      alertId: alert.id,
      endpointId: alert.endpointId,
      sentTo,
      refused: refused.filter((r) => !r.temporary),
      deferred: refused.filter((r) => r.temporary),
      retryAt,
    });
  }
  return sent;
}
