import { Type } from '@sinclair/typebox';
import { Id, Instant, Nullable, Outgoing, Strict } from './common.js';
import { ActionLogic, SurveyRules } from './logic.js';
import {
  Bool,
  DisplaySettings,
  EmailDisplaySettings,
  LanguageCode,
  LanguageSettings,
  Opt,
  PageDisplaySettings,
  Schedule,
  Settings,
  SmsDisplaySettings,
  TargetingSettings,
  TranslationMap,
  VisibilitySettings,
} from './settings.js';
import { Slide } from './slides.js';

const PathRule = Type.String({ minLength: 1, maxLength: 500 });

/** Fields a poll request may set (create, commit, update). */
export const PollWritable = {
  pageRules: Opt(Type.Array(PathRule, { maxItems: 100 })),
  pageExcludeRules: Opt(Type.Array(PathRule, { maxItems: 100 })),
  settings: Opt(Settings),
  displaySettings: Opt(DisplaySettings),
  emailDisplaySettings: Opt(EmailDisplaySettings),
  smsDisplaySettings: Opt(SmsDisplaySettings),
  pageDisplaySettings: Opt(PageDisplaySettings),
  visibilitySettings: Opt(VisibilitySettings),
  targetingSettings: Opt(TargetingSettings),
  schedule: Opt(Schedule),
  languageSettings: Opt(LanguageSettings),
  actionLogic: Opt(ActionLogic),
};

export const AccountId = Type.String({ minLength: 1, maxLength: 100 });

const Title = Type.String({ minLength: 1, maxLength: 500 });

export const CreatePollBody = Strict({
  accountId: AccountId,
  title: Title,
  dryRun: Bool,
  isSynthetic: Bool,
  ...PollWritable,
});

export const CommitBody = Strict({
  data: Strict({
    id: Id('poll'),
    accountId: AccountId,
    title: Title,
    isVisible: Opt(Type.Literal(false)),
    slides: Opt(Type.Array(Type.Never(), { maxItems: 0 })),
    createdAt: Opt(Type.String({ maxLength: 40 })),
    updatedAt: Opt(Type.String({ maxLength: 40 })),
    ...PollWritable,
    // Previews carry null for the optional objects they did not set.
    pageExcludeRules: Opt(Type.Union([Type.Array(PathRule, { maxItems: 100 }), Type.Null()])),
    pageDisplaySettings: Opt(Type.Union([PageDisplaySettings, Type.Null()])),
    targetingSettings: Opt(Type.Union([TargetingSettings, Type.Null()])),
    schedule: Opt(Type.Union([Schedule, Type.Null()])),
    languageSettings: Opt(Type.Union([LanguageSettings, Type.Null()])),
  }),
});

export const UpdatePollBody = Strict({
  pollId: Type.String({ minLength: 1, maxLength: 100 }),
  title: Opt(Title),
  isVisible: Bool,
  isSynthetic: Bool,
  ...PollWritable,
});

export const TranslationsBody = Strict({
  pollId: Type.String({ minLength: 1, maxLength: 100 }),
  language: LanguageCode,
  translations: TranslationMap,
});

export const ResearchBody = Strict({
  pollId: Type.String({ minLength: 1, maxLength: 100 }),
  participants: Opt(Type.Integer({ minimum: 1, maximum: 1000 })),
  seed: Opt(Type.Integer({ minimum: 0, maximum: 2147483647 })),
  idempotencyKey: Opt(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'sent again with the same key, the request is answered 200 with the run it made, not a second run',
    }),
  ),
});

// ---- Answers ----------------------------------------------------------------------------------
// Settings objects answer every key they hold (spec defaults, account defaults, the request's).

const PollFields = {
  id: Type.String(),
  accountId: Type.String(),
  title: Type.String(),
  isVisible: Type.Boolean(),
  pageRules: Type.Array(Type.String()),
  pageExcludeRules: Nullable(Type.Array(Type.String())),
  settings: Outgoing(Settings),
  displaySettings: Outgoing(DisplaySettings),
  emailDisplaySettings: Outgoing(EmailDisplaySettings),
  smsDisplaySettings: Outgoing(SmsDisplaySettings),
  pageDisplaySettings: Nullable(Outgoing(PageDisplaySettings)),
  visibilitySettings: Outgoing(VisibilitySettings),
  targetingSettings: Nullable(Outgoing(TargetingSettings)),
  schedule: Nullable(Outgoing(Schedule)),
  languageSettings: Nullable(Outgoing(LanguageSettings)),
  actionLogic: SurveyRules,
  createdAt: Instant,
  updatedAt: Instant,
};

/** A poll as a list shows it: everything but its slides. */
export const PollItem = Type.Object(PollFields, { title: 'PollItem' });

/** A poll with its slides, in order. */
export const Poll = Type.Object({ ...PollFields, slides: Type.Array(Slide) }, { title: 'Poll' });

export const PollDeleted = Type.Object(
  {
    id: Type.String(),
    deleted: Type.Literal(true),
    cancelledDeliveries: Type.Integer({ description: 'pending deliveries of the poll that were cancelled' }),
  },
  { title: 'PollDeleted' },
);

export const Translations = Type.Object(
  {
    pollId: Type.String(),
    language: Type.String(),
    translations: Outgoing(TranslationMap),
  },
  { title: 'Translations' },
);

/** A research run: synthetic respondents made for a synthetic poll. */
export const ResearchRun = Type.Object(
  {
    id: Type.String(),
    pollId: Type.String(),
    accountId: Type.String(),
    participants: Type.Integer(),
    seed: Type.Integer({ description: 'the same seed makes the same answers' }),
    responsesCreated: Type.Integer(),
    createdAt: Instant,
  },
  { title: 'ResearchRun' },
);
