import type { Action, Condition, QuestionRule, SurveyRule } from './logic.js';

const isAnswered = (v: unknown) => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x) => b.includes(x));
  if (typeof a === 'string' && typeof b === 'string') return a.trim().toLowerCase() === b.trim().toLowerCase();
  return a === b;
}

/** One condition against an answer value, in the shapes respondents send (checkAnswerValue, answer.ts). */
export function conditionHolds(c: Condition, value: unknown): boolean {
  switch (c.op) {
    case 'answered':
      return isAnswered(value);
    case 'equals':
      return (
        isAnswered(value) &&
        (Array.isArray(value) && !Array.isArray(c.value)
          ? value.length === 1 && sameValue(value[0], c.value)
          : sameValue(value, c.value))
      );
    case 'not-equals':
      return isAnswered(value) && !conditionHolds({ op: 'equals', value: c.value }, value);
    case 'contains':
      if (Array.isArray(value))
        return Array.isArray(c.value)
          ? c.value.every((x) => value.some((v) => sameValue(v, x)))
          : value.some((v) => sameValue(v, c.value));
      return (
        typeof value === 'string' && typeof c.value === 'string' && value.toLowerCase().includes(c.value.toLowerCase())
      );
    case 'gt':
    case 'lt': {
      const a = typeof value === 'number' ? value : Number(value);
      const b = typeof c.value === 'number' ? c.value : Number(c.value);
      if (!isAnswered(value) || Number.isNaN(a) || Number.isNaN(b)) return false;
      return c.op === 'gt' ? a > b : a < b;
    }
  }
}

function matches(match: 'all' | 'any', results: boolean[]): boolean {
  if (!results.length) return true;
  return match === 'all' ? results.every(Boolean) : results.some(Boolean);
}

/** The question rules of a slide that hold for this answer, in order. */
export function firingQuestionRules(rules: readonly QuestionRule[], value: unknown): QuestionRule[] {
  return rules.filter((r) =>
    matches(
      r.match,
      r.conditions.map((c) => conditionHolds(c, value)),
    ),
  );
}

/** Survey action rules (on complete) that hold, given every answer by slide id. */
export function firingSurveyRules(rules: readonly SurveyRule[], answers: ReadonlyMap<string, unknown>): SurveyRule[] {
  return rules.filter(
    (r) =>
      r.on === 'complete' &&
      matches(
        r.match ?? 'all',
        (r.conditions ?? []).map((c) => conditionHolds(c, answers.get(c.slideId))),
      ),
  );
}

/** What the widget does next: the first navigation action among the firing rules. */
export function navigation(fired: readonly { action: Action }[]): Action | undefined {
  return fired.map((r) => r.action).find((a) => a.type !== 'trigger-webhook');
}

/** A human description of a rule's condition, for alert emails. */
export function describeConditions(
  match: 'all' | 'any' | undefined,
  conditions: readonly (Condition & { slideId?: string })[],
  slideTitle: (id: string) => string,
): string {
  if (!conditions.length) return 'always';
  const parts = conditions.map((c) => {
    const subject = c.slideId ? `the answer to "${slideTitle(c.slideId)}"` : 'the answer';
    return c.op === 'answered'
      ? `${subject} is given`
      : `${subject} ${c.op.replace('-', ' ')} ${JSON.stringify(c.value)}`;
  });
  return parts.join(match === 'any' ? ' or ' : ' and ');
}
