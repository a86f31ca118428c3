import type { Logger } from 'pino';
import { loggableOrigin } from '../domain/url-policy.js';
import { splitHostKey, type LeftOut } from './account-share.js';

/**
 * A host key (hostKey) as the warn line shows it: its account, and the origin, which holds no
 * path nor query even for a URL stored as written (without a slash before its query).
 */
const shown = (key: string) => {
  const { host, accountId } = splitHostKey(key);
  return { accountId, origin: loggableOrigin(`https://${host}`) };
};

/**
 * The warn line naming the accounts and hosts a claim left out, once that claim found other
 * deliveries (they were being held up): at most once a minute for each (docs/operations.md).
 */
export function leftOutWarner(logger: Logger, concurrency: number, share: () => number) {
  const warnedAt = new Map<string, number>();
  return (exclude: LeftOut): void => {
    const now = Date.now();
    const due = (id: string) => now - (warnedAt.get(id) ?? -Infinity) >= 60_000;
    const accountIds = exclude.accounts.filter(due);
    const hostKeys = exclude.hosts.filter(due);
    if (!accountIds.length && !hostKeys.length) return;
    for (const [id, at] of warnedAt) if (now - at >= 60_000) warnedAt.delete(id);
    for (const id of [...accountIds, ...hostKeys]) warnedAt.set(id, now);
    logger.warn(
      { accountIds, hosts: hostKeys.map(shown), share: share(), concurrency },
      "accounts or hosts at their share of the worker's attempts were left out of a claim, so that other deliveries went out: those hosts answer slowly or not at all",
    );
  };
}
