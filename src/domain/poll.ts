import { DomainError, invalid } from './errors.js';
import type { SurveyRule } from './logic.js';
import { deepMerge } from './merge.js';
import { SPEC_DEFAULTS, type AccountDefaults } from './poll-defaults.js';
import { stripHtml, trimStrings } from './sanitize.js';
import type { Slide } from './slide.js';
import { cleanLanguageSettings, cleanTranslations } from './translations.js';

type Obj = Record<string, unknown>;

export type Schedule = { type: 'immediate' | 'scheduled'; startAt?: string; endAt?: string };
export type LanguageSettings = {
  defaultLanguage: string;
  languages: Record<string, { enabled: boolean; translations: Record<string, string> }>;
};

/** Everything about a poll that lives in its settings document (not id, owner, title, visibility). */
export type PollBody = {
  pageRules: string[];
  pageExcludeRules: string[] | null;
  settings: Obj & { isSynthetic: boolean; anonymous: boolean; apiOnly: boolean };
  displaySettings: Obj;
  emailDisplaySettings: Obj;
  smsDisplaySettings: Obj;
  pageDisplaySettings: Obj | null;
  visibilitySettings: Obj;
  targetingSettings: Obj | null;
  schedule: Schedule | null;
  languageSettings: LanguageSettings | null;
  actionLogic: SurveyRule[];
};

export type Poll = PollBody & {
  id: string;
  accountId: string;
  title: string;
  isVisible: boolean;
  slides: Slide[];
  createdAt: Date;
  updatedAt: Date;
};

export type PollInput = {
  title: string;
  isSynthetic?: boolean;
  pageRules?: string[];
  pageExcludeRules?: string[];
  settings?: Obj;
  displaySettings?: Obj;
  emailDisplaySettings?: Obj;
  smsDisplaySettings?: Obj;
  pageDisplaySettings?: Obj;
  visibilitySettings?: Obj;
  targetingSettings?: Obj;
  schedule?: Schedule;
  languageSettings?: LanguageSettings;
  actionLogic?: SurveyRule[];
};

/** Caps of a poll's languageSettings: the request schema's, and a translations merge's result. */
export const MAX_LANGUAGES = 100;
export const MAX_TRANSLATIONS = 2000;
/** The most a poll's languageSettings may hold as JSON: `GET /poll` and `GET /polls` answer it whole. */
export const MAX_LANGUAGE_SETTINGS_BYTES = 1_048_576;

export function cleanTitle(raw: string): string {
  const title = stripHtml(raw);
  if (!title) throw invalid('/title', 'must not be empty once HTML is removed');
  return title;
}

export function checkSchedule(schedule: Schedule | null | undefined): void {
  if (!schedule) return;
  if (schedule.type === 'scheduled' && !schedule.startAt && !schedule.endAt) {
    throw invalid('/schedule', 'a scheduled poll needs startAt or endAt');
  }
  // The schema's date-time format admits a leap second (23:59:60), which is no instant here:
  // unchecked, it would pass the order check below and leave the poll's opening undefined. It
  // also admits an offset of hours alone (`+05`), which no Date reads.
  for (const field of ['startAt', 'endAt'] as const) {
    const at = schedule[field];
    if (at !== undefined && Number.isNaN(Date.parse(at)))
      throw invalid(
        `/schedule/${field}`,
        'must be a date-time that exists, its offset written ±hh:mm (no leap second)',
      );
  }
  if (schedule.startAt && schedule.endAt && Date.parse(schedule.startAt) >= Date.parse(schedule.endAt)) {
    throw invalid('/schedule/endAt', 'must be after startAt');
  }
}

/** The synthetic flag a request sends, at the top level, in settings, or in both (which must agree). */
function sentSynthetic(req: { isSynthetic?: boolean; settings?: Obj }): boolean | undefined {
  const top = req.isSynthetic;
  const inSettings = req.settings?.isSynthetic as boolean | undefined;
  if (top !== undefined && inSettings !== undefined && top !== inSettings) {
    throw invalid('/isSynthetic', 'disagrees with settings.isSynthetic');
  }
  return top ?? inSettings;
}

/**
 * Texts the schema requires non-empty must stay non-empty once trimmed, as titles do (README,
 * API overview): the poll's, and of these the account-level defaults' too.
 */
export function checkTrimmedText(
  req: Pick<PollInput, 'pageRules' | 'pageExcludeRules' | 'targetingSettings'> & {
    displaySettings?: Obj;
    emailDisplaySettings?: Obj;
    smsDisplaySettings?: Obj;
  },
): void {
  const each = (path: string, list: unknown) =>
    Array.isArray(list) ? list.map((v: unknown, i) => [`${path}/${i}`, v] as const) : [];
  const targeting = req.targetingSettings as Obj | undefined;
  const empty = [
    ['/displaySettings/shape', req.displaySettings?.shape] as const,
    ['/emailDisplaySettings/subject', req.emailDisplaySettings?.subject] as const,
    ['/smsDisplaySettings/message', req.smsDisplaySettings?.message] as const,
    ...each('/pageRules', req.pageRules),
    ...each('/pageExcludeRules', req.pageExcludeRules),
    ...each('/targetingSettings/browsers', targeting?.browsers),
    ...each('/targetingSettings/referrers', targeting?.referrers),
    ...each('/targetingSettings/ipAddresses', targeting?.ipAddresses),
  ].filter(([, value]) => value === '');
  if (empty.length) {
    const errors = empty.map(([path]) => ({ path: String(path), message: 'must not be empty once trimmed' }));
    throw new DomainError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), errors);
  }
}

/**
 * Builds a new poll: built-in defaults ← account-level settings ← request (objects merge
 * deeply, arrays replace). A new poll is hidden and has no slides.
 */
export function buildPollBody(input: PollInput, account: AccountDefaults): PollBody {
  const req = trimStrings(input);
  checkTrimmedText(req);
  const settings = deepMerge({ ...SPEC_DEFAULTS.settings }, req.settings, {
    isSynthetic: sentSynthetic(req) ?? false,
  });
  const body: PollBody = {
    pageRules: req.pageRules ?? [],
    pageExcludeRules: req.pageExcludeRules ?? null,
    settings: settings as PollBody['settings'],
    displaySettings: deepMerge({ ...SPEC_DEFAULTS.displaySettings }, account.displaySettings, req.displaySettings),
    emailDisplaySettings: deepMerge(
      { ...SPEC_DEFAULTS.emailDisplaySettings },
      account.emailDisplaySettings,
      req.emailDisplaySettings,
    ),
    smsDisplaySettings: deepMerge(
      { ...SPEC_DEFAULTS.smsDisplaySettings },
      account.smsDisplaySettings,
      req.smsDisplaySettings,
    ),
    pageDisplaySettings: req.pageDisplaySettings ?? null,
    visibilitySettings: deepMerge(
      { ...SPEC_DEFAULTS.visibilitySettings },
      account.visibilitySettings,
      req.visibilitySettings,
    ),
    targetingSettings: settleTargeting(req.targetingSettings ?? null),
    schedule: req.schedule ?? null,
    languageSettings: cleanLanguageSettings(req.languageSettings) ?? null,
    actionLogic: req.actionLogic ?? [],
  };
  checkSchedule(body.schedule);
  checkLanguageSettingsSize(body.languageSettings, null);
  return body;
}

/** The most keys `targetingSettings.metadata` holds, as stored (updates merge into it). */
export const MAX_TARGETING_METADATA_KEYS = 100;

/**
 * `targetingSettings.metadata` merges key by key on update, so a key set to null is removed (as
 * in a JSON merge patch), and the merged map may hold MAX_TARGETING_METADATA_KEYS at most (409
 * limit_reached) unless it does not grow: the limit on one request alone would let updates pile
 * keys up for ever, and a poll that holds more already may still be updated and trimmed.
 */
function settleTargeting(t: Obj | null, before: Obj | null = null): Obj | null {
  const metadata = t?.metadata;
  if (!t || typeof metadata !== 'object' || metadata === null) return t;
  const kept = Object.fromEntries(Object.entries(metadata).filter(([, v]) => v !== null));
  const count = Object.keys(kept).length;
  const had = before?.metadata && typeof before.metadata === 'object' ? Object.keys(before.metadata).length : 0;
  if (count > MAX_TARGETING_METADATA_KEYS && count > had)
    throw new DomainError(
      'limit_reached',
      `targetingSettings.metadata holds at most ${MAX_TARGETING_METADATA_KEYS} keys`,
      [
        {
          path: '/targetingSettings/metadata',
          message: `would hold ${count} keys with those stored, of at most ${MAX_TARGETING_METADATA_KEYS}; set a key to null to remove it`,
        },
      ],
    );
  return { ...t, metadata: kept };
}

export type PollPatch = Partial<Omit<PollInput, 'title'>> & { title?: string; isVisible?: boolean };

/**
 * Applies an update: settings objects merge into what is stored, `languageSettings` and
 * arrays replace whole, `isSynthetic` never changes.
 */
export function applyPollPatch(current: PollBody, patch: PollPatch): PollBody {
  const p = trimStrings(patch);
  checkTrimmedText(p);
  const wanted = sentSynthetic(p);
  if (wanted !== undefined && wanted !== current.settings.isSynthetic) {
    throw new DomainError('immutable_field', 'isSynthetic cannot change after creation', [
      { path: '/settings/isSynthetic', message: 'immutable after creation' },
    ]);
  }
  const mergeOrKeep = (cur: Obj | null, next: Obj | undefined) =>
    next === undefined ? cur : deepMerge(cur ?? {}, next);
  const body: PollBody = {
    ...current,
    pageRules: p.pageRules ?? current.pageRules,
    pageExcludeRules: p.pageExcludeRules ?? current.pageExcludeRules,
    settings: deepMerge(current.settings, p.settings, { isSynthetic: current.settings.isSynthetic }),
    displaySettings: deepMerge(current.displaySettings, p.displaySettings),
    emailDisplaySettings: deepMerge(current.emailDisplaySettings, p.emailDisplaySettings),
    smsDisplaySettings: deepMerge(current.smsDisplaySettings, p.smsDisplaySettings),
    pageDisplaySettings: mergeOrKeep(current.pageDisplaySettings, p.pageDisplaySettings),
    visibilitySettings: deepMerge(current.visibilitySettings, p.visibilitySettings),
    targetingSettings: settleTargeting(
      mergeOrKeep(current.targetingSettings, p.targetingSettings),
      current.targetingSettings,
    ),
    schedule: p.schedule ?? current.schedule,
    languageSettings: cleanLanguageSettings(p.languageSettings) ?? current.languageSettings,
    actionLogic: p.actionLogic ?? current.actionLogic,
  };
  checkSchedule(body.schedule);
  if (p.languageSettings) checkLanguageSettingsSize(body.languageSettings, current.languageSettings);
  return body;
}

/**
 * Merges one language's translations; every other language is left as it was. A merge may not
 * take the poll past MAX_LANGUAGES, a language past MAX_TRANSLATIONS, or all of them past
 * MAX_LANGUAGE_SETTINGS_BYTES (409 limit_reached).
 */
export function mergeTranslations(
  current: LanguageSettings | null,
  language: string,
  translations: Record<string, string>,
): LanguageSettings {
  const base: LanguageSettings = current ?? { defaultLanguage: language, languages: {} };
  const existing = base.languages[language];
  // A stored key with surrounding spaces is matched by its trimmed form: a merge updates it, not adds one beside it.
  const stored = Object.fromEntries(Object.entries(existing?.translations ?? {}).map(([k, v]) => [k.trim() || k, v]));
  const merged = { ...stored, ...cleanTranslations(translations, '/translations') };
  const languageCount = Object.keys(base.languages).length + (existing ? 0 : 1);
  if (!existing && languageCount > MAX_LANGUAGES) {
    throw new DomainError('limit_reached', `a poll has at most ${MAX_LANGUAGES} languages`, [
      { path: '/language', message: `would be language ${languageCount} of at most ${MAX_LANGUAGES}` },
    ]);
  }
  const count = Object.keys(merged).length;
  if (count > MAX_TRANSLATIONS && count > Object.keys(existing?.translations ?? {}).length) {
    throw new DomainError('limit_reached', `a language has at most ${MAX_TRANSLATIONS} translations`, [
      { path: '/translations', message: `would make ${count} translations, of at most ${MAX_TRANSLATIONS}` },
    ]);
  }
  const result = {
    ...base,
    languages: { ...base.languages, [language]: { enabled: existing?.enabled ?? true, translations: merged } },
  };
  checkLanguageSettingsSize(result, base, '/translations');
  return result;
}

/** languageSettings may hold at most MAX_LANGUAGE_SETTINGS_BYTES as JSON, unless they do not grow (409 limit_reached). */
function checkLanguageSettingsSize(
  next: LanguageSettings | null,
  before: LanguageSettings | null,
  path = '/languageSettings',
): void {
  const size = (l: LanguageSettings | null) => (l ? Buffer.byteLength(JSON.stringify(l)) : 0);
  const bytes = size(next);
  if (bytes > MAX_LANGUAGE_SETTINGS_BYTES && bytes > size(before)) {
    throw new DomainError('limit_reached', `a poll's translations hold at most ${MAX_LANGUAGE_SETTINGS_BYTES} bytes`, [
      { path, message: `would make ${bytes} bytes, of at most ${MAX_LANGUAGE_SETTINGS_BYTES}` },
    ]);
  }
}
