import { Type } from '@sinclair/typebox';
import { SLIDE_TYPES } from '../../domain/slide.js';
import { Instant, Literals, Nullable, Outgoing, Strict } from './common.js';
import { QuestionLogic, QuestionRules } from './logic.js';

const Answers = Type.Array(
  Strict({
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    title: Type.String({ minLength: 1, maxLength: 500 }),
  }),
  { maxItems: 100 },
);
const SlideType = Literals(...SLIDE_TYPES);

const SlideFields = {
  subtitle: Type.Optional(Type.String({ maxLength: 2000 })),
  answers: Type.Optional(Answers),
  multi: Type.Optional(Type.Boolean()),
  idx: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
  logic: Type.Optional(QuestionLogic),
};

export const CreateSlideBody = Strict({
  pollId: Type.String({ minLength: 1, maxLength: 100 }),
  type: SlideType,
  title: Type.String({ minLength: 1, maxLength: 1000 }),
  ...SlideFields,
});

export const UpdateSlideBody = Strict({
  slideId: Type.String({ minLength: 1, maxLength: 100 }),
  type: Type.Optional(SlideType),
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
  ...SlideFields,
});

// ---- Answers ----------------------------------------------------------------------------------

/** A slide as stored: answers with their ids, logic with webhook URLs in normalised form. */
export const Slide = Type.Object(
  {
    id: Type.String(),
    pollId: Type.String(),
    accountId: Type.String(),
    idx: Type.Integer({ description: "the slide's place in the poll, from 0" }),
    type: Outgoing(SlideType),
    title: Type.String(),
    subtitle: Nullable(Type.String()),
    answers: Type.Array(Type.Object({ id: Type.String(), title: Type.String() })),
    multi: Type.Boolean(),
    logic: QuestionRules,
    createdAt: Instant,
    updatedAt: Instant,
  },
  { title: 'Slide' },
);

/** A poll's slides, in order. */
export const Slides = Type.Array(Slide);

export const SlideDeleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) }, { title: 'SlideDeleted' });
