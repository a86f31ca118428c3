import { DomainError, type FieldError } from './errors.js';
import { checkEndpointUrl, type UrlPolicy } from './url-policy.js';

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
 */
export function checkRules<R extends QuestionRule | SurveyRule>(rules: readonly R[], pollSlideIds: ReadonlySet<string>, policy: UrlPolicy, basePath: string): R[] {
  const errors: FieldError[] = [];
  const normalised = rules.map((rule, i) =>
    rule.action.type === 'trigger-webhook' ? { ...rule, action: { ...rule.action, url: checkEndpointUrl(rule.action.url, policy, `${basePath}/${i}/action/url`) } } : rule,
  );
  rules.forEach((rule, i) => {
    const at = `${basePath}/${i}`;
    if (rule.action.type === 'skip-to' && !pollSlideIds.has(rule.action.slideId)) {
      errors.push({ path: `${at}/action/slideId`, message: 'no such slide in this poll' });
    }
    (rule.conditions ?? []).forEach((c, j) => {
      if ('slideId' in c && !pollSlideIds.has(String(c.slideId))) errors.push({ path: `${at}/conditions/${j}/slideId`, message: 'no such slide in this poll' });
      if (c.op !== 'answered' && c.value === undefined) errors.push({ path: `${at}/conditions/${j}/value`, message: `the ${c.op} operator needs a value` });
    });
  });
  if (errors.length) throw new DomainError('validation_failed', 'the logic refers to something that does not exist', errors);
  return normalised;
}

export const hasWebhookAction = (rules: readonly { action: Action }[]): boolean => rules.some((r) => r.action.type === 'trigger-webhook');
