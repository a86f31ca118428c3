import type { Logger } from 'pino';
import type { LeftOut } from './account-share.js';

/**
 * The warn line naming the accounts and endpoints a claim left out, once that claim found other
 * deliveries (they were being held up): at most once a minute for each (docs/operations.md).
 */
export function leftOutWarner(logger: Logger, concurrency: number, share: () => number) {
  const warnedAt = new Map<string, number>();
  return (exclude: LeftOut): void => {
    const now = Date.now();
    const due = (id: string) => now - (warnedAt.get(id) ?? -Infinity) >= 60_000;
    const accountIds = exclude.accounts.filter(due);
    const endpointIds = exclude.endpoints.filter(due);
    if (!accountIds.length && !endpointIds.length) return;
    for (const [id, at] of warnedAt) if (now - at >= 60_000) warnedAt.delete(id);
    for (const id of [...accountIds, ...endpointIds]) warnedAt.set(id, now);
    logger.warn(
      { accountIds, endpointIds, share: share(), concurrency },
      "accounts or endpoints at their share of the worker's attempts were left out of a claim, so that other deliveries went out: those endpoints answer slowly or not at all",
    );
  };
}
