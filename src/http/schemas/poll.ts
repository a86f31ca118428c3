import { Type } from '@sinclair/typebox';
import { Color, DateTime, Id, Keyed, Lenient, Literals, ShortText, Strict } from './common.js';
import { ActionLogic } from './logic.js';

const Bool = Type.Optional(Type.Boolean());
const Opt = Type.Optional;
const Int = (minimum: number, maximum: number) => Type.Optional(Type.Integer({ minimum, maximum }));
const PathRule = Type.String({ minLength: 1, maxLength: 500 });

export const Settings = Lenient({
  showCounter: Bool,
  allowResubmissions: Bool,
  notifyOnComplete: Bool,
  urlDependant: Bool,
  automaticallySwitchSlides: Bool,
  autoClose: Bool,
  allowEdits: Bool,
  apiOnly: Bool,
  isSynthetic: Bool,
  anonymous: Bool,
});

export const DisplaySettings = Lenient({
  backgroundColor: Opt(Color),
  actionColor: Opt(Color),
  notificationColor: Opt(Color),
  fontColor: Opt(Color),
  fontFamily: Opt(ShortText(100)),
  showLink: Bool,
  align: Opt(Literals('left', 'right', 'center')),
  borderRadius: Int(0, 100),
  borderWidth: Int(0, 20),
  maxWidth: Int(100, 4000),
  maxHeight: Int(100, 4000),
  position: Opt(Type.Tuple([Type.Integer({ minimum: 0, maximum: 10000 }), Type.Integer({ minimum: 0, maximum: 10000 })])),
  shape: Opt(Type.String({ minLength: 1, maxLength: 40 })),
  hideLauncher: Bool,
  showCounter: Bool,
});

export const EmailDisplaySettings = Lenient({
  subject: Opt(Type.String({ minLength: 1, maxLength: 200 })),
  backgroundColor: Opt(Color),
  foregroundColor: Opt(Color),
  buttonColor: Opt(Color),
  buttonFontColor: Opt(Color),
  fontColor: Opt(Color),
  fontFamily: Opt(ShortText(100)),
  showLink: Bool,
  linkType: Opt(Literals('input', 'button', 'link')),
  header: Opt(ShortText(2000)),
  body: Opt(ShortText(10000)),
  footer: Opt(ShortText(2000)),
});

export const SmsDisplaySettings = Lenient({ message: Opt(Type.String({ minLength: 1, maxLength: 1600 })) });

export const PageDisplaySettings = Lenient({
  backgroundColor: Opt(Color),
  foregroundColor: Opt(Color),
  fontColor: Opt(Color),
  buttonColor: Opt(Color),
  buttonFontColor: Opt(Color),
  fontFamily: Opt(ShortText(100)),
  layout: Opt(Literals('centered', 'left', 'split')),
  logoUrl: Opt(ShortText(2048)),
});

const OpenType = Literals('page', 'site');
export const VisibilitySettings = Lenient({
  autoOpenDevice: Bool,
  autoOpenDuration: Int(0, 86400),
  autoOpenPosition: Int(0, 100),
  autoOpenDurationType: Opt(OpenType),
  renderOnExitIntent: Bool,
  renderDuration: Bool,
  renderPosition: Bool,
  renderDevice: Bool,
  renderDurationType: Opt(OpenType),
  hideAfterSubmission: Bool,
  hideAfterClose: Bool,
  showAfterSubmission: Bool,
  openAttempts: Bool,
});

const List = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number) => Opt(Type.Array(item, { maxItems }));
export const TargetingSettings = Lenient({
  percentage: Opt(Type.Number({ minimum: 0, maximum: 100 })),
  countries: List(Type.String({ pattern: '^[A-Za-z]{2}$' }), 300),
  browsers: List(Type.String({ minLength: 1, maxLength: 40 }), 50),
  devices: List(Literals('desktop', 'mobile', 'tablet'), 3),
  referrers: List(Type.String({ minLength: 1, maxLength: 2048 }), 100),
  ipAddresses: List(Type.String({ minLength: 1, maxLength: 64 }), 1000),
  metadata: Opt(Keyed('^.{1,100}$', Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean()]), 100)),
});

export const Schedule = Lenient({
  type: Literals('immediate', 'scheduled'),
  startAt: Opt(DateTime),
  endAt: Opt(DateTime),
});

const LANGUAGE = '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$';
export const LanguageCode = Type.String({ pattern: LANGUAGE, maxLength: 35, description: 'BCP 47 language tag, e.g. en or pt-BR' });
export const TranslationMap = Keyed('^.{1,200}$', Type.String({ maxLength: 10000 }), 2000);
export const LanguageSettings = Strict({
  defaultLanguage: LanguageCode,
  languages: Keyed(LANGUAGE, Strict({ enabled: Type.Boolean(), translations: TranslationMap }), 100),
});

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

const AccountId = Type.String({ minLength: 1, maxLength: 100 });
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

export const AccountSettingsBody = Strict({
  accountId: AccountId,
  displaySettings: Opt(DisplaySettings),
  emailDisplaySettings: Opt(EmailDisplaySettings),
  smsDisplaySettings: Opt(SmsDisplaySettings),
  visibilitySettings: Opt(VisibilitySettings),
  notificationRecipients: Opt(Type.Union([Type.Array(Type.String({ format: 'email', maxLength: 320 }), { maxItems: 50 }), Type.Null()])),
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
