import { canonical, type Action } from './logic.js';
import { maskedUrl } from './url-policy.js';

/**
 * A Trigger webhook action's URL is webhook management, like a saved webhook's: its path or
 * query may carry a token. Roles that may not manage webhooks see only its origin, as
 * `https://host/***` (`maskedUrl`), and send that form back to leave the action as it is
 * (README, "API overview").
 */

type Rule = { action: Action };

const isTrigger = (r: Rule): r is Rule & { action: { type: 'trigger-webhook'; url: string } } =>
  r.action.type === 'trigger-webhook';

const masked = <R extends Rule>(r: R): R =>
  isTrigger(r) ? { ...r, action: { ...r.action, url: maskedUrl(r.action.url) } } : r;

/** The rules as a role that may not manage webhooks sees them. */
export const maskWebhookUrls = <R extends Rule>(rules: readonly R[]): R[] => rules.map(masked);

/**
 * The rules a caller sent back, with each masked URL put back to the stored URL it stands for:
 * of the stored rules that read the same once masked, the k-th sent stands for the k-th stored,
 * so rules kept in their order keep their URLs. This holds for every role, since a manager may
 * send back what was read with a masked view. A masked URL that stands for no stored rule is
 * left as sent: a changed action to an editor (refused), an invalid URL to a manager (checkLogicUrl).
 */
export function unmaskWebhookUrls<R extends Rule>(sent: readonly R[], stored: readonly Rule[]): R[] {
  const waiting = new Map<string, string[]>();
  for (const r of stored) {
    if (!isTrigger(r)) continue;
    const key = canonical(masked(r));
    waiting.set(key, [...(waiting.get(key) ?? []), r.action.url]);
  }
  return sent.map((rule) => {
    if (!isTrigger(rule) || maskedUrl(rule.action.url) !== rule.action.url) return rule;
    const url = waiting.get(canonical(rule))?.shift();
    return url === undefined ? rule : { ...rule, action: { ...rule.action, url } };
  });
}
