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
 * The rules a caller sent back, with each masked URL put back to the stored URL it stands for.
 * Rules that read the same once masked form a group. A group's masked URLs stand for its stored
 * URLs less those it sends in full, in stored order, when the two counts agree: saving what was
 * read keeps every URL, and so does replacing one masked URL with another stored one in full.
 * Otherwise (a rule of the group added, removed or replaced by a new URL beside masked ones) no
 * masked URL of the group can be told, and all are left as sent: a changed action to an editor
 * (refused), an invalid URL to a manager (checkLogicUrl). This holds for every role, since a
 * manager may send back what was read with a masked view.
 */
export function unmaskWebhookUrls<R extends Rule>(sent: readonly R[], stored: readonly Rule[]): R[] {
  const groups = new Map<string, { stored: string[]; full: string[]; masked: number }>();
  const group = (r: Rule & { action: { url: string } }) => {
    const key = canonical(masked(r));
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { stored: [], full: [], masked: 0 }));
    return g;
  };
  for (const r of stored) if (isTrigger(r)) group(r).stored.push(r.action.url);
  for (const r of sent) {
    if (!isTrigger(r)) continue;
    const g = group(r);
    if (maskedUrl(r.action.url) === r.action.url) g.masked++;
    else g.full.push(r.action.url);
  }
  // What each group's masked URLs stand for, in order, or undefined where that cannot be told.
  const standFor = new Map<string, string[] | undefined>();
  for (const [key, g] of groups) {
    if (!g.masked) continue;
    const left = [...g.stored];
    for (const url of g.full) {
      const at = left.indexOf(url);
      if (at >= 0) left.splice(at, 1);
    }
    standFor.set(key, left.length === g.masked ? left : undefined);
  }
  return sent.map((rule) => {
    if (!isTrigger(rule) || maskedUrl(rule.action.url) !== rule.action.url) return rule;
    const url = standFor.get(canonical(masked(rule)))?.shift();
    return url === undefined ? rule : { ...rule, action: { ...rule.action, url } };
  });
}
