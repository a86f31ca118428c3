import { Type } from '@sinclair/typebox';
import { CONDITION_OPS, type QuestionRule, type SurveyRule } from '../../domain/logic.js';
import { httpsUrl, Literals, Outgoing, Strict } from './common.js';

export const Action = Type.Union([
  Strict({ type: Type.Literal('continue') }),
  Strict({ type: Type.Literal('skip-to'), slideId: Type.String({ minLength: 1, maxLength: 100 }) }),
  Strict({ type: Type.Literal('end-survey') }),
  Strict({
    type: Type.Literal('trigger-webhook'),
    url: httpsUrl('a public https:// URL; shown as https://host/*** to roles that may not manage webhooks (README)'),
  }),
]);

const Value = Type.Union([
  Type.String({ maxLength: 1000 }),
  Type.Number(),
  Type.Boolean(),
  Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100 }),
]);
const Op = Literals(...CONDITION_OPS);
const Match = Literals('all', 'any');

export const QuestionLogic = Type.Array(
  Strict({
    match: Match,
    conditions: Type.Array(Strict({ op: Op, value: Type.Optional(Value) }), { maxItems: 20 }),
    action: Action,
  }),
  { maxItems: 50, description: "question logic: rules on this slide's answer" },
);

export const ActionLogic = Type.Array(
  Strict({
    on: Type.Literal('complete'),
    match: Type.Optional(Match),
    conditions: Type.Optional(
      Type.Array(
        Strict({ slideId: Type.String({ minLength: 1, maxLength: 100 }), op: Op, value: Type.Optional(Value) }),
        { maxItems: 20 },
      ),
    ),
    action: Action,
  }),
  { maxItems: 50, description: 'survey action logic, evaluated when a respondent completes the poll' },
);

// ---- Answers ----------------------------------------------------------------------------------
// Rules as saved: what the request schemas took (webhook URLs normalised), typed as the domain's.

export const QuestionRules = Type.Unsafe<QuestionRule[]>(Outgoing(QuestionLogic));

export const SurveyRules = Type.Unsafe<SurveyRule[]>(Outgoing(ActionLogic));
