import type { Logger } from 'pino';
import type { SentAttempt } from '../app/delivery/send-attempt.js';
import type { Deps } from '../app/ports/index.js';
import { describeOutcome } from '../domain/retry-policy.js';
import { loggableOrigin } from '../domain/url-policy.js';

export type Ended = { sent: SentAttempt; status: 'rejected' | 'given_up' };

/** Warn lines one worker process writes in a minute for one endpoint's deliveries rejected or given up. */
export const ENDED_LINES_PER_MINUTE = 10;

type Window = { start: number; lines: number; heldBack: number };

/**
 * One warn line per delivery rejected or given up, up to ENDED_LINES_PER_MINUTE per endpoint: an
 * endpoint that refuses every delivery (a 410, say) would otherwise write a line per submission.
 * Past them, one line says the rest of the minute's are held back, and the endpoint's next line
 * counts them (`heldBack`). Its webhook is its endpoint's, looked up for the lines written only
 * (one query per account in the batch) rather than claimed with every delivery.
 */
export function endedLog(deps: Deps, logger: Logger, now: () => number = Date.now) {
  const windows = new Map<string, Window>();
  let lastSweep = now();
  return async (ended: readonly Ended[]): Promise<void> => {
    const t = now();
    if (t - lastSweep > 60_000) {
      // An endpoint's count held back is kept for its next line, an hour at most.
      for (const [id, w] of windows) if (t - w.start >= (w.heldBack ? 3_600_000 : 60_000)) windows.delete(id);
      lastSweep = t;
    }
    const written: { e: Ended; heldBack: number }[] = [];
    const heldNow: { e: Ended; until: string }[] = [];
    for (const e of ended) {
      const id = e.sent.delivery.endpointId;
      let w = windows.get(id);
      if (!w || t - w.start >= 60_000) windows.set(id, (w = { start: t, lines: 0, heldBack: w?.heldBack ?? 0 }));
      if (w.lines < ENDED_LINES_PER_MINUTE) {
        w.lines++;
        written.push({ e, heldBack: w.heldBack });
        w.heldBack = 0;
      } else if (w.heldBack++ === 0) heldNow.push({ e, until: new Date(w.start + 60_000).toISOString() });
    }
    const byAccount = new Map<string, Set<string>>();
    for (const {
      e: { sent },
    } of [...written, ...heldNow]) {
      const ids = byAccount.get(sent.delivery.accountId) ?? new Set<string>();
      byAccount.set(sent.delivery.accountId, ids.add(sent.delivery.endpointId));
    }
    const webhookOf = new Map<string, string | null>();
    await Promise.all(
      [...byAccount].map(async ([accountId, ids]) => {
        const endpoints = await deps.store.endpoints.getMany(accountId, [...ids]).catch(() => []);
        for (const e of endpoints) webhookOf.set(e.id, e.webhookId);
      }),
    );
    for (const { e, heldBack } of written) {
      const d = e.sent.delivery;
      logger.warn(
        {
          deliveryId: d.id,
          webhookId: webhookOf.get(d.endpointId) ?? null,
          endpointId: d.endpointId,
          endpoint: loggableOrigin(d.url),
          attempt: d.attemptCount,
          lastError: describeOutcome(e.sent.sent.outcome),
          ...(heldBack ? { heldBack } : {}),
        },
        e.status === 'rejected' ? 'delivery rejected' : 'delivery given up',
      );
    }
    for (const { e, until } of heldNow) {
      const d = e.sent.delivery;
      logger.warn(
        {
          webhookId: webhookOf.get(d.endpointId) ?? null,
          endpointId: d.endpointId,
          endpoint: loggableOrigin(d.url),
          until,
        },
        `more deliveries of this endpoint rejected or given up than ${ENDED_LINES_PER_MINUTE} a minute: not logged one by one until then; its next such line counts them (heldBack)`,
      );
    }
  };
}
