import { DomainError, type FieldError } from './errors.js';
import { checkEndpointUrl, checkLogicUrl, type UrlPolicy } from './url-policy.js';

export const CONDITION_OPS = ['equals', 'not-equals', 'contains', 'answered', 'gt', 'lt'] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];

export type Action =
  | { type: 'continue' }
  | { type: 'skip-to'; slideId: string }
  | { type: 'end-survey' }
  | { type: 'trigger-webhook'; url: string };

export type Condition = { op: ConditionOp; value?: unknown };
export type QuestionRule = { match: 'all' | 'any'; conditions: Condition[]; action: Action };
export type SurveyCondition = Condition & { slideId: string };
export type SurveyRule = { on: 'complete'; match?: 'all' | 'any'; conditions?: SurveyCondition[]; action: Action };

/**
 * Cross-checks the schema cannot make: skip targets and condition slides exist in the poll,
 * webhook URLs are public https. Throws invalid_url before validation_failed so a bad URL
 * reads as what it is. Returns the rules with webhook URLs in their normalised form, the
 * same form a saved webhook's URL takes (one endpoint, one spelling).
 * A URL already `saved` in the list being replaced is kept as saved: it was checked then, each
 * delivery checks its address again, and an error quoting it would show it to a role that sees
 * it masked (README, "API overview").
 */
export function checkRules<R extends QuestionRule | SurveyRule>(
  rules: readonly R[],
  pollSlideIds: ReadonlySet<string>,
  policy: UrlPolicy,
  basePath: string,
  saved: readonly { action: Action; conditions?: readonly Condition[] }[] = [],
): R[] {
  checkLogicSize(rules, saved, basePath);
  const errors: FieldError[] = [];
  const kept = savedUrls(saved);
  const normalised = rules.map((rule, i) =>
    rule.action.type === 'trigger-webhook' && !kept.has(rule.action.url)
      ? {
          ...rule,
          action: { ...rule.action, url: checkLogicUrl(rule.action.url, policy, `${basePath}/${i}/action/url`) },
        }
      : rule,
  );
  rules.forEach((rule, i) => {
    const at = `${basePath}/${i}`;
    if (rule.action.type === 'skip-to' && !pollSlideIds.has(rule.action.slideId)) {
      errors.push({ path: `${at}/action/slideId`, message: 'no such slide in this poll' });
    }
    (rule.conditions ?? []).forEach((c, j) => {
      if ('slideId' in c && !pollSlideIds.has(String(c.slideId)))
        errors.push({ path: `${at}/conditions/${j}/slideId`, message: 'no such slide in this poll' });
      if (c.op !== 'answered' && c.value === undefined)
        errors.push({ path: `${at}/conditions/${j}/value`, message: `the ${c.op} operator needs a value` });
    });
  });
  if (errors.length)
    throw new DomainError('validation_failed', 'the logic refers to something that does not exist', errors);
  return normalised;
}

/**
 * The most condition values one list of rules (a slide's, or a poll's survey logic) holds, an
 * array counting its items, and the most characters of text among them. Each submission weighs
 * every answered slide's rules: bounded, a poll of 200 slides costs milliseconds, not minutes.
 */
export const MAX_LOGIC_VALUES = 100;
export const MAX_LOGIC_CHARS = 10_000;

function logicSize(rules: readonly { conditions?: readonly Condition[] }[]): { values: number; chars: number } {
  let values = 0;
  let chars = 0;
  for (const r of rules)
    for (const c of r.conditions ?? [])
      for (const v of Array.isArray(c.value) ? (c.value as unknown[]) : c.value === undefined ? [] : [c.value]) {
        values++;
        if (typeof v === 'string') chars += v.length;
      }
  return { values, chars };
}

/** Refuses rules over the logic size bounds, unless they hold no more than the rules they replace. */
export function checkLogicSize(
  rules: readonly { conditions?: readonly Condition[] }[],
  saved: readonly { conditions?: readonly Condition[] }[],
  basePath: string,
): void {
  const now = logicSize(rules);
  const before = logicSize(saved);
  const over = (n: number, max: number, was: number) => n > max && n > was;
  if (over(now.values, MAX_LOGIC_VALUES, before.values) || over(now.chars, MAX_LOGIC_CHARS, before.chars))
    throw new DomainError(
      'limit_reached',
      `the rules hold ${now.values} condition values of ${now.chars} characters; at most ${MAX_LOGIC_VALUES} values of ${MAX_LOGIC_CHARS} characters`,
      [
        {
          path: basePath,
          message: `at most ${MAX_LOGIC_VALUES} condition values, ${MAX_LOGIC_CHARS} characters in all`,
        },
      ],
    );
}

/** The Trigger webhook URLs of a list of rules. */
export const savedUrls = (rules: readonly { action: Action }[]): Set<string> =>
  new Set(rules.flatMap((r) => (r.action.type === 'trigger-webhook' ? [r.action.url] : [])));

/** The Trigger webhook URLs of `before` that `after` no longer has: targets a write removes. */
export const droppedUrls = (before: readonly { action: Action }[], after: readonly { action: Action }[]): string[] => {
  const kept = savedUrls(after);
  return [...savedUrls(before)].filter((url) => !kept.has(url));
};

/**
 * The most Trigger webhook targets a poll may hold: each URL on a slide, and each URL in its
 * survey logic. A submission sends at most one delivery to each target it triggers.
 */
export const MAX_WEBHOOK_TARGETS = 50;

/** The Trigger webhook targets of a poll: each (slide, URL) of its slides' logic, and each URL of its survey logic. */
export function webhookTargets(
  slides: readonly { id: string; logic: readonly { action: Action }[] }[],
  actionLogic: readonly { action: Action }[],
): number {
  return slides.reduce((n, s) => n + savedUrls(s.logic).size, savedUrls(actionLogic).size);
}

/**
 * Refuses a write that leaves the poll over MAX_WEBHOOK_TARGETS, unless it adds none (a poll
 * already over, from before the limit, may still be edited down).
 */
export function checkWebhookTargets(after: number, before: number, path: string): void {
  if (after > MAX_WEBHOOK_TARGETS && after > before)
    throw new DomainError('limit_reached', `a poll has at most ${MAX_WEBHOOK_TARGETS} Trigger webhook targets`, [
      {
        path,
        message: `would make ${after} targets (a URL on a slide, or in the survey logic), of at most ${MAX_WEBHOOK_TARGETS}`,
      },
    ]);
}

export const hasWebhookAction = (rules: readonly { action: Action }[]): boolean =>
  rules.some((r) => r.action.type === 'trigger-webhook');

/** A value as JSON with object keys sorted, so stored (jsonb) and submitted rules compare equal. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

function webhookRuleKeys(rules: readonly { action: Action }[], policy: UrlPolicy): string[] {
  return rules
    .filter((r) => r.action.type === 'trigger-webhook')
    .map((r) => {
      const action = r.action as { type: 'trigger-webhook'; url: string };
      let url = action.url;
      try {
        url = checkEndpointUrl(url, policy);
      } catch {
        // An invalid URL compares as written; it is refused later, after the role check.
      }
      return canonical({ ...r, action: { ...action, url } });
    })
    .sort();
}

/**
 * Whether going from `before` to `after` saves, changes or removes a Trigger webhook action
 * (its URL or the conditions that fire it). That is webhook management, which not every role
 * may do; the other rules of the same list may change freely.
 */
export function webhookRulesChanged(
  before: readonly { action: Action }[],
  after: readonly { action: Action }[],
  policy: UrlPolicy,
): boolean {
  const a = webhookRuleKeys(before, policy);
  const b = webhookRuleKeys(after, policy);
  return a.length !== b.length || a.some((k, i) => k !== b[i]);
}
