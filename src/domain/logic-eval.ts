import type { Action, Condition, QuestionRule, SurveyRule } from './logic.js';

const isAnswered = (v: unknown) => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);

/** A value as the comparisons read it: strings by their trimmed lower case, anything else as it is. */
const key = (v: unknown): unknown => (typeof v === 'string' ? `s:${v.trim().toLowerCase()}` : v);

/**
 * An answer made ready for many conditions: its items as comparison keys, and its text in lower
 * case, each worked out once. A slide's rules may hold a hundred values (checkRules): each is a
 * lookup, not a pass over the answer.
 */
type PreparedAnswer = { value: unknown; keys?: Set<unknown>; lower?: string };

const prepareAnswer = (value: unknown): PreparedAnswer => ({ value });

const keysOf = (a: PreparedAnswer): Set<unknown> => (a.keys ??= new Set((a.value as unknown[]).map(key)));
const lowerOf = (a: PreparedAnswer): string => (a.lower ??= (a.value as string).toLowerCase());

/**
 * Equal as the rules read it: the same items (in any order), the same text whatever its case, or
 * the same number whether written as one or as text (a rule saved as "5" against a rating of 5,
 * as gt and lt read them).
 */
function sameValue(a: PreparedAnswer, b: unknown): boolean {
  const v = a.value;
  if (Array.isArray(v) && Array.isArray(b)) return sameItems(v, b);
  if (typeof v === 'number' && typeof b === 'string') return sameNumber(v, b);
  if (typeof v === 'string' && typeof b === 'number') return sameNumber(b, v);
  return key(v) === key(b);
}

/**
 * The same items, each paired with one of its own, as scalars compare (case, spaces, numbers as
 * text). A matching, not first-fit: 5 equals both "5" and "05", which differ from each other.
 */
function sameItems(v: unknown[], b: unknown[]): boolean {
  if (v.length !== b.length) return false;
  const items = v.map(prepareAnswer);
  const pairedWith = new Array<number>(b.length).fill(-1);
  const place = (i: number, tried: Set<number>): boolean => {
    for (let j = 0; j < b.length; j++) {
      if (tried.has(j) || !sameValue(items[i]!, b[j])) continue;
      tried.add(j);
      if (pairedWith[j] === -1 || place(pairedWith[j]!, tried)) {
        pairedWith[j] = i;
        return true;
      }
    }
    return false;
  };
  return items.every((_, i) => place(i, new Set()));
}

const sameNumber = (n: number, text: string): boolean => text.trim() !== '' && Number(text) === n;

/** One condition against an answer value, in the shapes respondents send (checkAnswerValue, answer.ts). */
export const conditionHolds = (c: Condition, value: unknown): boolean => holds(c, prepareAnswer(value));

function holds(c: Condition, a: PreparedAnswer): boolean {
  const value = a.value;
  switch (c.op) {
    case 'answered':
      return isAnswered(value);
    case 'equals':
      if (!isAnswered(value)) return false;
      return Array.isArray(value) && !Array.isArray(c.value)
        ? value.length === 1 && sameValue(prepareAnswer(value[0]), c.value)
        : sameValue(a, c.value);
    case 'not-equals':
      return isAnswered(value) && !holds({ op: 'equals', value: c.value }, a);
    case 'contains':
      if (Array.isArray(value)) {
        const wanted: unknown[] = Array.isArray(c.value) ? c.value : [c.value];
        // Scalars are looked up; an array among them (or NaN, which equals nothing) is compared item by item.
        if (wanted.some((x) => Array.isArray(x) || Number.isNaN(x)) || value.some(Array.isArray))
          return wanted.every((x) => value.some((v) => sameValue(prepareAnswer(v), x)));
        const keys = keysOf(a);
        return wanted.every((x) => keys.has(key(x)));
      }
      return typeof value === 'string' && typeof c.value === 'string' && lowerOf(a).includes(c.value.toLowerCase());
    case 'gt':
    case 'lt': {
      // A list is a number only when it holds one item, as equals reads it; more are none.
      const one = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
      if (Array.isArray(one) || (one !== undefined && typeof one === 'object')) return false;
      const x = typeof one === 'number' ? one : Number(one);
      const y = typeof c.value === 'number' ? c.value : Number(c.value);
      if (!isAnswered(one) || Number.isNaN(x) || Number.isNaN(y)) return false;
      return c.op === 'gt' ? x > y : x < y;
    }
  }
}

function matches(match: 'all' | 'any', results: boolean[]): boolean {
  if (!results.length) return true;
  return match === 'all' ? results.every(Boolean) : results.some(Boolean);
}

/** The question rules of a slide that hold for this answer, in order. */
export function firingQuestionRules(rules: readonly QuestionRule[], value: unknown): QuestionRule[] {
  const a = prepareAnswer(value);
  return rules.filter((r) =>
    matches(
      r.match,
      r.conditions.map((c) => holds(c, a)),
    ),
  );
}

/** Survey action rules (on complete) that hold, given every answer by slide id. */
export function firingSurveyRules(rules: readonly SurveyRule[], answers: ReadonlyMap<string, unknown>): SurveyRule[] {
  const prepared = new Map<string, PreparedAnswer>();
  const answerOf = (slideId: string) => {
    let a = prepared.get(slideId);
    if (!a) prepared.set(slideId, (a = prepareAnswer(answers.get(slideId))));
    return a;
  };
  return rules.filter(
    (r) =>
      r.on === 'complete' &&
      matches(
        r.match ?? 'all',
        (r.conditions ?? []).map((c) => holds(c, answerOf(c.slideId))),
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
