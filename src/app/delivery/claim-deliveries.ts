import { randomUUID } from 'node:crypto';
import type { ClaimedDelivery } from '../../domain/delivery.js';
import { CommitOutcomeUnknownError } from '../ports/commit-outcome-unknown.js';
import type { Claimed, LeaveOut } from '../ports/delivery.js';
import type { Deps } from '../ports/index.js';

/**
 * How long a claimed delivery stays leased: up to a deadline waiting for a slot (a flush's
 * handed-over deliveries), up to a deadline queued for a connection to its origin, its attempt's
 * own deadline from the write (h1-sender.ts), and room to record it.
 */
export const leaseMs = (deps: Deps) => deps.delivery.deliveryTimeoutMs * 3 + 5_000;

/** What a claim reports besides the deliveries it returns. */
export type ClaimOptions = {
  /** Accounts and hosts to leave out (leave-out-cursor.ts). */
  exclude?: LeaveOut;
  /** Hears the ids of the deliveries cancelled because their webhook is gone. */
  onCancelled?: (ids: string[]) => void;
  /**
   * Hears a statement that failed after the claim committed (parking, cancelling, writing a
   * moved URL): the claim's other deliveries are still returned, to be sent, and those the
   * statement was for stay leased, claimed again when their lease ends. Without it, it throws.
   */
  onFailed?: (err: unknown, what: string) => void;
  /** Hears how many deliveries a failed claim had leased all the same, given back. */
  onGivenBack?: (n: number) => void;
};

/**
 * Leases due deliveries for an attempt each.
 * - Those of a paused webhook go straight back to the queue, parked and their attempt
 *   uncounted: a pause that lands while they were due (or a delivery made during a pause)
 *   never reaches the endpoint, and resuming makes them due.
 * - Those of a deleted webhook are cancelled, never sent: a submission that read the webhook
 *   just before its deletion committed can queue one after the deletion's cancel ran.
 */
export async function claimDeliveries(
  deps: Deps,
  limit: number,
  opts: ClaimOptions = {},
): Promise<ClaimedDelivery[] & { leased: number; windowEnd?: Claimed['windowEnd'] }> {
  const now = deps.clock.now();
  const token = randomUUID();
  const leaseUntil = new Date(now.getTime() + leaseMs(deps));
  const overlapSince = new Date(now.getTime() - deps.delivery.secretOverlapMs);
  const claimed = await deps.store.deliveries
    .claim(now, limit, leaseUntil, token, overlapSince, opts.exclude)
    .catch(async (err: unknown) => {
      // A claim whose COMMIT's answer was lost may have committed all the same: what it leased
      // is given back at once, uncounted, rather than left for its lease to end and its attempt
      // number skipped. Any other failure rolled back and leased nothing. A database still down,
      // or a COMMIT that lands after this look, leaves it to the lease.
      if (!(err instanceof CommitOutcomeUnknownError)) throw err;
      const given = await deps.store.deliveries.unclaimLease(token, leaseUntil, now).catch(() => 0);
      if (given) opts.onGivenBack?.(given);
      throw err;
    });
  // How many were leased, and where a claim that leaves some out read to (leave-out-cursor.ts).
  const read = { leased: claimed.length, windowEnd: claimed.windowEnd };
  const then = async (what: string, step: () => Promise<unknown>) => {
    try {
      await step();
    } catch (err) {
      if (!opts.onFailed) throw err;
      opts.onFailed(err, what);
    }
  };
  await then('writing the URL moved deliveries are sent to', () => recordMovedUrls(deps, claimed));
  if (!claimed.some((d) => d.paused || d.webhookGone)) return Object.assign(claimed, read);
  const paused = claimed.filter((d) => d.paused).map((d) => d.id);
  if (paused.length)
    await then("parking a paused webhook's deliveries", () => deps.store.deliveries.park(paused, token, now));
  const gone = claimed.filter((d) => d.webhookGone).map((d) => d.id);
  if (gone.length)
    await then("cancelling a deleted webhook's deliveries", async () => {
      await deps.store.deliveries.cancelLeased(gone, token, now);
      opts.onCancelled?.(gone);
    });
  return Object.assign(
    claimed.filter((d) => !d.paused && !d.webhookGone),
    read,
  );
}

/**
 * Deliveries queued with their webhook's old URL by a submission or flush that read the webhook
 * before a new URL committed (that change's retarget could not see them): they are sent to the
 * webhook's URL (the claim reads it), and the retarget runs again for them, so their rows say
 * so, as the delivery log shows them. A saved webhook's endpoint id is its webhook id.
 */
async function recordMovedUrls(deps: Deps, claimed: readonly ClaimedDelivery[]): Promise<void> {
  const moved = new Map<string, string>();
  for (const d of claimed) if (d.urlMoved) moved.set(d.endpointId, d.url);
  for (const [webhookId, url] of moved) await deps.store.deliveries.retarget(webhookId, url);
}
