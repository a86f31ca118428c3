import { canonical, type Action } from './logic.js';

/**
 * A Trigger webhook action's URL is webhook management, like a saved webhook's: its path or
 * query may carry a token. Roles that may not manage webhooks see only its origin, as
 * `https://host/***`, and may send that form back to leave the action as it is (docs/api.md).
 */
export const MASKED_PATH = '/***';

export function maskWebhookUrl(url: string): string {
  try {
    return new URL(url).origin + MASKED_PATH;
  } catch {
    return MASKED_PATH;
  }
}

type Rule = { action: Action };

const isTrigger = (r: Rule): r is Rule & { action: { type: 'trigger-webhook'; url: string } } =>
  r.action.type === 'trigger-webhook';

const masked = <R extends Rule>(r: R): R =>
  isTrigger(r) ? { ...r, action: { ...r.action, url: maskWebhookUrl(r.action.url) } } : r;

/** The rules as a role that may not manage webhooks sees them. */
export const maskWebhookUrls = <R extends Rule>(rules: readonly R[]): R[] => rules.map(masked);

/**
 * The rules an editor sent back, with each masked URL put back to the stored URL it stands
 * for: the stored rule that reads the same once masked, the one at the same place first, each
 * used once. A masked URL that stands for no stored rule is left as sent, so it reads as a
 * changed Trigger webhook action and is refused to that role.
 */
export function unmaskWebhookUrls<R extends Rule>(sent: readonly R[], stored: readonly Rule[]): R[] {
  const keys = stored.map((r) => (isTrigger(r) ? canonical(masked(r)) : undefined));
  const used = new Set<number>();
  return sent.map((rule, i) => {
    if (!isTrigger(rule) || maskWebhookUrl(rule.action.url) !== rule.action.url) return rule;
    const key = canonical(rule);
    const at = keys[i] === key && !used.has(i) ? i : keys.findIndex((k, j) => k === key && !used.has(j));
    if (at < 0) return rule;
    used.add(at);
    const original = stored[at]!.action as { url: string };
    return { ...rule, action: { ...rule.action, url: original.url } };
  });
}
