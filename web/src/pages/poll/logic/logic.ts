import { webhookTarget } from '../../../ui/roles';
import type { LogicAction, LogicCondition, LogicOp, LogicRule, Slide, SlideType } from '../../../api/types';

const OP_TEXT: Record<LogicOp, string> = {
  equals: 'equals',
  'not-equals': 'does not equal',
  contains: 'contains',
  answered: 'is answered',
  gt: 'is greater than',
  lt: 'is less than',
};

export const opLabel = (op: LogicOp) => OP_TEXT[op];

export function describeCondition(c: LogicCondition): string {
  if (c.op === 'answered') return 'the answer is answered';
  return `the answer ${OP_TEXT[c.op]} ${JSON.stringify(c.value)}`;
}

/** `role`: the caller's, which decides how a webhook URL reads (ui/roles.ts). */
export function describeAction(a: LogicAction, slides: Slide[], role: string): string {
  switch (a.type) {
    case 'continue':
      return 'continue to the next slide';
    case 'end-survey':
      return 'end the survey';
    case 'skip-to': {
      const target = slides.find((s) => s.id === a.slideId);
      return `skip to ${target ? `“${target.title}”` : a.slideId}`;
    }
    case 'trigger-webhook':
      return `send a webhook to ${webhookTarget(a.url, role)}`;
  }
}

export function describeRule(rule: LogicRule, slides: Slide[], role: string): string {
  const conds = rule.conditions.map(describeCondition);
  const when =
    conds.length === 0
      ? 'Always'
      : conds.length === 1
        ? `If ${conds[0]}`
        : `If ${rule.match === 'all' ? 'all' : 'any'} of: ${conds.join('; ')}`;
  return `${when} → ${describeAction(rule.action, slides, role)}`;
}

export const CHOICE_TYPES: SlideType[] = ['question', 'checkbox', 'dropdown', 'binary'];
const NUMERIC_TYPES: SlideType[] = ['star-rating', 'range'];

/** A condition value as the API compares it: numbers for numeric slides and gt/lt, true/false for consent. */
export function conditionValue(op: LogicOp, raw: string, type: SlideType): LogicCondition['value'] {
  if (op === 'answered') return undefined;
  const t = raw.trim();
  if ((op === 'gt' || op === 'lt' || NUMERIC_TYPES.includes(type)) && t !== '' && !Number.isNaN(Number(t)))
    return Number(t);
  if (type === 'legal-consent' && (t === 'true' || t === 'false')) return t === 'true';
  return t;
}
