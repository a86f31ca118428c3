import { canonical, type Action } from './logic.js';
import { loggableOrigin } from './url-policy.js';

/**
 * A Trigger webhook action's URL is webhook management, like a saved webhook's: its path or
 * query may carry a token. Roles that may not manage webhooks see only its origin, as
 * `https://host/***`, and may send that form back to leave the action as it is (README, "API overview").
 */
const MASKED_PATH = '/***';

/** What the logs show of a URL (its origin), in the form an editor may send back. */
export const maskWebhookUrl = (url: string): string => loggableOrigin(url) + MASKED_PATH;

type Rule = { action: Action };

const isTrigger = (r: Rule): r is Rule & { action: { type: 'trigger-webhook'; url: string } } =>
  r.action.type === 'trigger-webhook';

const masked = <R extends Rule>(r: R): R =>
  isTrigger(r) ? { ...r, action: { ...r.action, url: maskWebhookUrl(r.action.url) } } : r;

/** The rules as a role that may not manage webhooks sees them. */
export const maskWebhookUrls = <R extends Rule>(rules: readonly R[]): R[] => rules.map(masked);

/**
 * The rules an editor sent back, with each masked URL put back to the stored URL it stands
 * for: of the stored rules that read the same once masked, the k-th sent stands for the k-th
 * stored, so rules kept in their order keep their URLs. A masked URL that stands for no stored
 * rule is left as sent: it reads as a changed Trigger webhook action, refused to that role.
 */
export function unmaskWebhookUrls<R extends Rule>(sent: readonly R[], stored: readonly Rule[]): R[] {
  const waiting = new Map<string, string[]>();
  for (const r of stored) {
    if (!isTrigger(r)) continue;
    const key = canonical(masked(r));
    waiting.set(key, [...(waiting.get(key) ?? []), r.action.url]);
  }
  return sent.map((rule) => {
    if (!isTrigger(rule) || maskWebhookUrl(rule.action.url) !== rule.action.url) return rule;
    const url = waiting.get(canonical(rule))?.shift();
    return url === undefined ? rule : { ...rule, action: { ...rule.action, url } };
  });
}
