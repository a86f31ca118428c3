import { Type } from '@sinclair/typebox';
import { MAX_LANGUAGES, MAX_TRANSLATIONS } from '../../domain/poll.js';
import { Color, DateTime, Keyed, Lenient, Literals, ShortText, Strict } from './common.js';

export const Bool = Type.Optional(Type.Boolean());

export const Opt = Type.Optional;

export const Int = (minimum: number, maximum: number) => Type.Optional(Type.Integer({ minimum, maximum }));

export const OpenType = Literals('page', 'site');

export const List = <T extends Parameters<typeof Type.Array>[0]>(item: T, maxItems: number) =>
  Opt(Type.Array(item, { maxItems }));

export const LANGUAGE = '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$';

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
  position: Opt(
    Type.Tuple([Type.Integer({ minimum: 0, maximum: 10000 }), Type.Integer({ minimum: 0, maximum: 10000 })]),
  ),
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

export const TargetingSettings = Lenient({
  percentage: Opt(Type.Number({ minimum: 0, maximum: 100 })),
  countries: List(Type.String({ pattern: '^[A-Za-z]{2}$' }), 300),
  browsers: List(Type.String({ minLength: 1, maxLength: 40 }), 50),
  devices: List(Literals('desktop', 'mobile', 'tablet'), 3),
  referrers: List(Type.String({ minLength: 1, maxLength: 2048 }), 100),
  ipAddresses: List(Type.String({ minLength: 1, maxLength: 64 }), 1000),
  metadata: Opt(
    // null removes a key on update (domain/poll.ts, settleTargeting).
    Keyed(
      '^.{1,100}$',
      Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean(), Type.Null()]),
      100,
    ),
  ),
});

export const Schedule = Lenient({
  type: Literals('immediate', 'scheduled'),
  startAt: Opt(DateTime),
  endAt: Opt(DateTime),
});

export const LanguageCode = Type.String({
  pattern: LANGUAGE,
  maxLength: 35,
  description: 'BCP 47 language tag, e.g. en or pt-BR',
});

export const TranslationMap = Keyed('^.{1,200}$', Type.String({ maxLength: 10000 }), MAX_TRANSLATIONS);

export const LanguageSettings = Strict({
  defaultLanguage: LanguageCode,
  languages: Keyed(LANGUAGE, Strict({ enabled: Type.Boolean(), translations: TranslationMap }), MAX_LANGUAGES),
});
