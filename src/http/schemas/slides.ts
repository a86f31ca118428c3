import { Type } from '@sinclair/typebox';
import { SLIDE_TYPES } from '../../domain/slide.js';
import { Literals, Strict } from './common.js';
import { QuestionLogic } from './logic.js';

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
