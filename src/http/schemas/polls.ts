import { Type } from '@sinclair/typebox';
import { Id, Strict } from './common.js';
import { ActionLogic } from './logic.js';
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
});
