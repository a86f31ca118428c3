import { describe, expect, it } from 'vitest';
import type { Action, Condition, QuestionRule, SurveyRule } from '../../src/domain/logic.js';
import {
  conditionHolds,
  describeConditions,
  firingQuestionRules,
  firingSurveyRules,
  navigation,
} from '../../src/domain/logic-eval.js';

const holds = (op: Condition['op'], value: unknown, answer: unknown) =>
  conditionHolds(value === undefined ? { op } : { op, value }, answer);

describe('conditionHolds: equals', () => {
  it('compares strings case-insensitively and ignoring surrounding spaces', () => {
    expect(holds('equals', 'Yes', 'Yes')).toBe(true);
    expect(holds('equals', 'yes', 'YES')).toBe(true);
    expect(holds('equals', 'Blue', ' blue ')).toBe(true);
    expect(holds('equals', 'Blue', 'Blues')).toBe(false);
    expect(holds('equals', 'Blue', 'Red')).toBe(false);
  });

  it('compares numbers and booleans exactly', () => {
    expect(holds('equals', 5, 5)).toBe(true);
    expect(holds('equals', 5, 4)).toBe(false);
    expect(holds('equals', true, true)).toBe(true);
    expect(holds('equals', true, false)).toBe(false);
  });

  it('compares a number with a number written as text by its value, as gt and lt do', () => {
    // A rule saved as text (the dashboard's value field) against a rating, and the other way round.
    expect(holds('equals', '5', 5)).toBe(true);
    expect(holds('equals', ' 5.0 ', 5)).toBe(true);
    expect(holds('equals', 5, '5')).toBe(true);
    expect(holds('equals', '5', 4)).toBe(false);
    expect(holds('equals', '', 0)).toBe(false);
    expect(holds('equals', 'five', 5)).toBe(false);
    expect(holds('not-equals', '5', 5)).toBe(false);
    expect(holds('not-equals', '4', 5)).toBe(true);
    // Text against text stays text: "05" is not "5".
    expect(holds('equals', '5', '05')).toBe(false);
  });

  it('matches a single-item array answer against a scalar, and only a single-item one', () => {
    expect(holds('equals', 'Red', ['red'])).toBe(true);
    expect(holds('equals', 'Red', ['Blue'])).toBe(false);
    expect(holds('equals', 'Red', ['Red', 'Blue'])).toBe(false);
  });

  it('compares arrays as sets of the same items', () => {
    expect(holds('equals', ['Red', 'Blue'], ['Blue', 'Red'])).toBe(true);
    expect(holds('equals', ['Red', 'Blue'], ['Red'])).toBe(false);
    expect(holds('equals', ['Red'], ['Red', 'Blue'])).toBe(false);
  });

  it('compares the items of arrays as scalars compare: case, spaces, numbers written as text', () => {
    expect(holds('equals', ['red', 'blue'], ['Red', ' Blue '])).toBe(true);
    expect(holds('not-equals', ['red', 'blue'], ['Red', 'Blue'])).toBe(false);
    expect(holds('equals', ['5', 'red'], [5, 'RED'])).toBe(true);
    // Each item matches one of its own: a repeated rule value is not two answers.
    expect(holds('equals', ['red', 'red'], ['Red', 'Blue'])).toBe(false);
    // Paired as a whole, whatever the order: 5 equals "5" and "05", which differ from each other.
    expect(holds('equals', ['05', '5'], [5, '05'])).toBe(true);
    expect(holds('equals', ['5', '05'], [5, '05'])).toBe(true);
  });

  it('never holds for an unanswered question', () => {
    for (const none of [undefined, null, '', []]) expect(holds('equals', '', none)).toBe(false);
    expect(holds('equals', 'x', undefined)).toBe(false);
  });
});

describe('conditionHolds: not-equals', () => {
  it('is the negation of equals for answered questions', () => {
    expect(holds('not-equals', 'Yes', 'No')).toBe(true);
    expect(holds('not-equals', 'Yes', 'yes')).toBe(false);
    expect(holds('not-equals', 'Red', ['Red'])).toBe(false);
    expect(holds('not-equals', 'Red', ['Red', 'Blue'])).toBe(true);
    expect(holds('not-equals', 3, 4)).toBe(true);
    expect(holds('not-equals', 3, 3)).toBe(false);
  });

  it('does not hold for an unanswered question', () => {
    expect(holds('not-equals', 'Yes', undefined)).toBe(false);
    expect(holds('not-equals', 'Yes', '')).toBe(false);
    expect(holds('not-equals', 'Yes', [])).toBe(false);
  });
});

describe('conditionHolds: contains', () => {
  it('finds a substring in a string answer, case-insensitively', () => {
    expect(holds('contains', 'price', 'The PRICE was too high')).toBe(true);
    expect(holds('contains', 'price', 'Too expensive')).toBe(false);
    expect(holds('contains', 'x', undefined)).toBe(false);
  });

  it('finds an item in an array answer', () => {
    expect(holds('contains', 'red', ['Blue', 'Red'])).toBe(true);
    expect(holds('contains', 'Green', ['Blue', 'Red'])).toBe(false);
    // An item, not a substring of an item.
    expect(holds('contains', 'Re', ['Blue', 'Red'])).toBe(false);
  });

  it('compares items as the rules compare values: text whatever its case and spaces, others exactly', () => {
    expect(holds('contains', ' RED ', ['blue', 'red'])).toBe(true);
    expect(holds('contains', 2, ['2', 3])).toBe(false);
    expect(holds('contains', 3, ['2', 3])).toBe(true);
    expect(holds('contains', true, [true])).toBe(true);
    // Arrays within are compared item by item, in any order; NaN equals nothing.
    expect(holds('contains', [['a', 'b']], [['b', 'a']])).toBe(true);
    expect(holds('contains', [['a']], [['b']])).toBe(false);
    expect(holds('contains', Number.NaN, [Number.NaN])).toBe(false);
  });

  it('with an array value, needs every item present', () => {
    expect(holds('contains', ['Red', 'Blue'], ['Blue', 'Green', 'Red'])).toBe(true);
    expect(holds('contains', ['Red', 'Blue'], ['Blue', 'Green'])).toBe(false);
  });

  it('does not apply to numbers', () => {
    expect(holds('contains', '5', 15)).toBe(false);
  });
});

describe('conditionHolds: answered', () => {
  it('holds for any given answer and not for missing or empty ones', () => {
    for (const given of ['x', 0, false, true, ['a'], 5]) expect(holds('answered', undefined, given)).toBe(true);
    for (const none of [undefined, null, '', []]) expect(holds('answered', undefined, none)).toBe(false);
  });
});

describe('conditionHolds: gt and lt', () => {
  it('compare numbers', () => {
    expect(holds('gt', 3, 4)).toBe(true);
    expect(holds('gt', 3, 3)).toBe(false);
    expect(holds('gt', 3, 2)).toBe(false);
    expect(holds('lt', 3, 2)).toBe(true);
    expect(holds('lt', 3, 3)).toBe(false);
    expect(holds('lt', 3, 4)).toBe(false);
    expect(holds('gt', 0, 0.5)).toBe(true);
    expect(holds('lt', 0, -1)).toBe(true);
  });

  it('accept numeric strings on either side', () => {
    expect(holds('gt', '7', 8)).toBe(true);
    expect(holds('gt', 7, '8')).toBe(true);
    expect(holds('lt', '7', '6.5')).toBe(true);
    // Numerically, not as text: as text '10' < '7'.
    expect(holds('lt', '10', '7')).toBe(true);
    expect(holds('gt', '7', '10')).toBe(true);
    expect(holds('lt', '7', '10')).toBe(false);
  });

  it('do not hold for non-numeric or missing answers', () => {
    expect(holds('gt', 3, 'lots')).toBe(false);
    expect(holds('lt', 3, 'lots')).toBe(false);
    expect(holds('gt', 'many', 4)).toBe(false);
    expect(holds('gt', -1, undefined)).toBe(false);
    expect(holds('lt', 1, undefined)).toBe(false);
    expect(holds('lt', 1, null)).toBe(false);
    expect(holds('lt', 1, '')).toBe(false);
  });

  it('read a list as a number only when it holds one item', () => {
    expect(holds('gt', 5, ['7'])).toBe(true);
    expect(holds('gt', 5, ['7', '8'])).toBe(false);
    expect(holds('lt', 9, ['7', '8'])).toBe(false);
    expect(holds('gt', 5, [])).toBe(false);
    expect(holds('gt', 5, [['7']])).toBe(false);
  });
});

const skipTo = (slideId: string): Action => ({ type: 'skip-to', slideId });
const hook = (url: string): Action => ({ type: 'trigger-webhook', url });

describe('firingQuestionRules: match all / any', () => {
  const between = (match: 'all' | 'any'): QuestionRule => ({
    match,
    conditions: [
      { op: 'gt', value: 3 },
      { op: 'lt', value: 7 },
    ],
    action: skipTo('sld_b'),
  });

  it('all needs every condition', () => {
    expect(firingQuestionRules([between('all')], 5)).toHaveLength(1);
    expect(firingQuestionRules([between('all')], 8)).toHaveLength(0);
    expect(firingQuestionRules([between('all')], 2)).toHaveLength(0);
  });

  it('any needs one condition', () => {
    const outside: QuestionRule = {
      match: 'any',
      conditions: [
        { op: 'lt', value: 3 },
        { op: 'gt', value: 7 },
      ],
      action: skipTo('sld_b'),
    };
    expect(firingQuestionRules([outside], 8)).toHaveLength(1);
    expect(firingQuestionRules([outside], 1)).toHaveLength(1);
    expect(firingQuestionRules([outside], 5)).toHaveLength(0);
  });

  it('a rule with no conditions always fires, with either match', () => {
    const always: QuestionRule[] = [
      { match: 'all', conditions: [], action: { type: 'end-survey' } },
      { match: 'any', conditions: [], action: hook('https://a.example.com/') },
    ];
    expect(firingQuestionRules(always, 'anything')).toEqual(always);
    expect(firingQuestionRules(always, undefined)).toEqual(always);
  });

  it('returns the firing rules in their order', () => {
    const rules: QuestionRule[] = [
      { match: 'all', conditions: [{ op: 'equals', value: 'No' }], action: { type: 'end-survey' } },
      { match: 'all', conditions: [{ op: 'answered' }], action: hook('https://a.example.com/') },
      { match: 'all', conditions: [{ op: 'equals', value: 'Yes' }], action: skipTo('sld_c') },
    ];
    expect(firingQuestionRules(rules, 'yes').map((r) => r.action.type)).toEqual(['trigger-webhook', 'skip-to']);
    expect(firingQuestionRules(rules, 'no').map((r) => r.action.type)).toEqual(['end-survey', 'trigger-webhook']);
  });
});

describe('firingSurveyRules', () => {
  const answers = new Map<string, unknown>([
    ['sld_a', 'Yes'],
    ['sld_b', 9],
    ['sld_c', ['Red', 'Blue']],
  ]);

  it('evaluates each condition against the answer of its own slide', () => {
    const rules: SurveyRule[] = [
      {
        on: 'complete',
        conditions: [
          { slideId: 'sld_a', op: 'equals', value: 'yes' },
          { slideId: 'sld_b', op: 'gt', value: 8 },
        ],
        action: hook('https://one.example.com/'),
      },
      {
        on: 'complete',
        conditions: [
          { slideId: 'sld_a', op: 'equals', value: 'yes' },
          { slideId: 'sld_b', op: 'gt', value: 9 },
        ],
        action: hook('https://two.example.com/'),
      },
      {
        on: 'complete',
        match: 'any',
        conditions: [
          { slideId: 'sld_b', op: 'gt', value: 9 },
          { slideId: 'sld_c', op: 'contains', value: 'red' },
        ],
        action: hook('https://three.example.com/'),
      },
      {
        on: 'complete',
        conditions: [{ slideId: 'sld_missing', op: 'answered' }],
        action: hook('https://four.example.com/'),
      },
    ];
    expect(firingSurveyRules(rules, answers).map((r) => (r.action as { url: string }).url)).toEqual([
      'https://one.example.com/',
      'https://three.example.com/',
    ]);
  });

  it('defaults to match all, and fires a rule without conditions on completion', () => {
    const rules: SurveyRule[] = [
      { on: 'complete', action: hook('https://always.example.com/') },
      { on: 'complete', conditions: [], action: hook('https://empty.example.com/') },
      {
        on: 'complete',
        conditions: [
          { slideId: 'sld_a', op: 'answered' },
          { slideId: 'sld_b', op: 'lt', value: 5 },
        ],
        action: hook('https://never.example.com/'),
      },
    ];
    expect(firingSurveyRules(rules, answers)).toHaveLength(2);
    expect(firingSurveyRules(rules, new Map())).toHaveLength(2);
  });
});

describe('navigation', () => {
  it('takes the first firing action that is not a webhook trigger', () => {
    expect(
      navigation([
        { action: hook('https://a.example.com/') },
        { action: skipTo('sld_x') },
        { action: { type: 'end-survey' } },
      ]),
    ).toEqual(skipTo('sld_x'));
    expect(navigation([{ action: { type: 'end-survey' } }, { action: skipTo('sld_x') }])).toEqual({
      type: 'end-survey',
    });
    expect(
      navigation([
        { action: hook('https://a.example.com/') },
        { action: { type: 'continue' } },
        { action: skipTo('sld_x') },
      ]),
    ).toEqual({ type: 'continue' });
  });

  it('is undefined when nothing fired or only webhooks fired', () => {
    expect(navigation([])).toBeUndefined();
    expect(
      navigation([{ action: hook('https://a.example.com/') }, { action: hook('https://b.example.com/') }]),
    ).toBeUndefined();
  });

  it('works on what firingQuestionRules returns', () => {
    const rules: QuestionRule[] = [
      { match: 'all', conditions: [{ op: 'answered' }], action: hook('https://a.example.com/') },
      { match: 'all', conditions: [{ op: 'lt', value: 3 }], action: { type: 'end-survey' } },
      { match: 'all', conditions: [{ op: 'gt', value: 2 }], action: skipTo('sld_happy') },
    ];
    expect(navigation(firingQuestionRules(rules, 1))).toEqual({ type: 'end-survey' });
    expect(navigation(firingQuestionRules(rules, 5))).toEqual(skipTo('sld_happy'));
  });
});

describe('describeConditions (alert emails)', () => {
  const title = (id: string) => ({ sld_a: 'Would you recommend us?', sld_b: 'Score' })[id] ?? id;

  it('describes question and survey conditions in words', () => {
    expect(describeConditions('all', [], title)).toBe('always');
    expect(describeConditions('all', [{ op: 'gt', value: 8 }], title)).toBe('the answer gt 8');
    expect(describeConditions('any', [{ op: 'answered' }, { op: 'not-equals', value: 'No' }], title)).toBe(
      'the answer is given or the answer not equals "No"',
    );
    expect(
      describeConditions(
        undefined,
        [
          { slideId: 'sld_a', op: 'equals', value: 'Yes' },
          { slideId: 'sld_b', op: 'lt', value: 3 },
        ],
        title,
      ),
    ).toBe('the answer to "Would you recommend us?" equals "Yes" and the answer to "Score" lt 3');
  });
});
