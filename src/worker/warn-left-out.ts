import type { Logger } from 'pino';
import { loggableOrigin } from '../domain/url-policy.js';
import { splitHostKey, type LeftOut } from './account-share.js';
import { onceAMinute } from './once-a-minute.js';

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
  const memory = onceAMinute();
  return (exclude: LeftOut): void => {
    const now = Date.now();
    const accountIds = exclude.accounts.filter((id) => memory.due(id, now));
    const hostKeys = exclude.hosts.filter((key) => memory.due(key, now));
    if (!accountIds.length && !hostKeys.length) return;
    memory.warned([...accountIds, ...hostKeys], now);
    logger.warn(
      { accountIds, hosts: hostKeys.map(shown), share: share(), concurrency },
      "accounts or hosts at their share of the worker's attempts were left out of a claim, so that other deliveries went out: those hosts answer slowly or not at all",
    );
  };
}
