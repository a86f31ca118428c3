import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { deepMerge } from '../../src/domain/merge.js';
import { ACCOUNT_LEVEL_OBJECTS, POS_RULES, SPEC_DEFAULTS, SURFACE_RULES } from '../../src/domain/poll-defaults.js';
import {
  applyPollPatch,
  buildPollBody,
  checkSchedule,
  cleanTitle,
  MAX_LANGUAGE_SETTINGS_BYTES,
  MAX_LANGUAGES,
  MAX_TRANSLATIONS,
  mergeTranslations,
  type LanguageSettings,
  type PollBody,
} from '../../src/domain/poll.js';
import { stripHtml, trimStrings } from '../../src/domain/sanitize.js';
import { checkPosRule, isPosPoll } from '../../src/domain/slide.js';
import { SPEC_TABLES } from '../support/spec-tables.js';

function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}

const languages = (): LanguageSettings => ({
  defaultLanguage: 'en',
  languages: {
    en: { enabled: true, translations: { title: 'Hello', q1: 'How was it?' } },
    fr: { enabled: false, translations: { title: 'Bonjour' } },
  },
});

describe('languageSettings size', () => {
  // Over 1 MiB as JSON: more than an HTTP body holds, so only a caller other than the API sends it.
  const big = (): LanguageSettings => ({
    defaultLanguage: 'en',
    languages: { en: { enabled: true, translations: { a: 'x'.repeat(MAX_LANGUAGE_SETTINGS_BYTES) } } },
  });

  it('is held to MAX_LANGUAGE_SETTINGS_BYTES on create and on update, unless an update does not grow it', () => {
    expect(thrown(() => buildPollBody({ title: 'x', languageSettings: big() }, {})).code).toBe('limit_reached');
    const current = buildPollBody({ title: 'x' }, {});
    expect(thrown(() => applyPollPatch(current, { languageSettings: big() })).errors).toEqual([
      { path: '/languageSettings', message: expect.stringContaining(`of at most ${MAX_LANGUAGE_SETTINGS_BYTES}`) },
    ]);
    const over = { ...current, languageSettings: big() };
    expect(applyPollPatch(over, { title: 'y' }).languageSettings).toEqual(big());
    expect(applyPollPatch(over, { languageSettings: languages() }).languageSettings).toEqual(languages());
  });
});

describe('poll defaults', () => {
  it('fills every object of a bare request with the spec tables', () => {
    const body = buildPollBody({ title: 'x' }, {});
    expect(body.settings).toEqual({ ...SPEC_TABLES.settings, isSynthetic: false, anonymous: false });
    expect(body.displaySettings).toEqual(SPEC_TABLES.displaySettings);
    expect(body.emailDisplaySettings).toEqual(SPEC_TABLES.emailDisplaySettings);
    expect(body.smsDisplaySettings).toEqual(SPEC_TABLES.smsDisplaySettings);
    expect(body.visibilitySettings).toEqual(SPEC_TABLES.visibilitySettings);
  });

  it('leaves the objects without spec defaults empty and pageRules an empty list', () => {
    const body = buildPollBody({ title: 'x' }, {});
    expect(body.pageRules).toEqual([]);
    expect(body.pageExcludeRules).toBeNull();
    expect(body.pageDisplaySettings).toBeNull();
    expect(body.targetingSettings).toBeNull();
    expect(body.schedule).toBeNull();
    expect(body.languageSettings).toBeNull();
    expect(body.actionLogic).toEqual([]);
  });

  it('the exported constant matches the spec tables', () => {
    const { isSynthetic, anonymous, ...settings } = SPEC_DEFAULTS.settings;
    expect(settings).toEqual(SPEC_TABLES.settings);
    expect([isSynthetic, anonymous]).toEqual([false, false]);
    for (const key of ACCOUNT_LEVEL_OBJECTS) expect(SPEC_DEFAULTS[key]).toEqual(SPEC_TABLES[key]);
  });

  it('names the storefront surface rules', () => {
    expect(SURFACE_RULES).toEqual({
      thankYou: '/(.)/thank_you',
      orderStatus: '/:order_number/orders/:variable',
      checkout: '/checkouts/(.)',
      customerAccounts: '/account',
      posPostPurchase: '/pos/post-purchase',
      posHome: '/pos/home',
    });
    expect([...POS_RULES].sort()).toEqual(['/pos/home', '/pos/post-purchase']);
  });

  it('building a poll never changes the defaults for the next one', () => {
    const first = buildPollBody(
      { title: 'x', displaySettings: { position: [1, 2] } },
      { displaySettings: { align: 'left' } },
    );
    (first.displaySettings.position as number[]).push(99);
    first.settings.showCounter = false;
    const second = buildPollBody({ title: 'y' }, {});
    expect(second.displaySettings).toEqual(SPEC_TABLES.displaySettings);
    expect(second.settings.showCounter).toBe(true);
  });
});

describe('merge order: spec defaults ← account-level settings ← request', () => {
  const account = {
    displaySettings: { backgroundColor: '#000000', actionColor: '#111111', position: [5, 5] },
    emailDisplaySettings: { subject: 'Account subject' },
    smsDisplaySettings: { message: 'Account message' },
    visibilitySettings: { hideAfterClose: false },
  };

  it('account settings override spec defaults for the account-level objects', () => {
    const body = buildPollBody({ title: 'x' }, account);
    expect(body.displaySettings).toEqual({
      ...SPEC_TABLES.displaySettings,
      backgroundColor: '#000000',
      actionColor: '#111111',
      position: [5, 5],
    });
    expect(body.emailDisplaySettings).toEqual({ ...SPEC_TABLES.emailDisplaySettings, subject: 'Account subject' });
    expect(body.smsDisplaySettings).toEqual({ message: 'Account message' });
    expect(body.visibilitySettings).toEqual({ ...SPEC_TABLES.visibilitySettings, hideAfterClose: false });
  });

  it('the request overrides both, key by key', () => {
    const body = buildPollBody(
      {
        title: 'x',
        displaySettings: { actionColor: '#222222', position: [1, 2] },
        smsDisplaySettings: { message: 'Request message' },
      },
      account,
    );
    expect(body.displaySettings).toEqual({
      ...SPEC_TABLES.displaySettings,
      backgroundColor: '#000000',
      actionColor: '#222222',
      position: [1, 2],
    });
    expect(body.smsDisplaySettings).toEqual({ message: 'Request message' });
    expect(body.emailDisplaySettings.subject).toBe('Account subject');
  });

  it('arrays replace rather than merge element by element', () => {
    const body = buildPollBody(
      { title: 'x', displaySettings: { position: [7] } },
      { displaySettings: { position: [5, 5, 5] } },
    );
    expect(body.displaySettings.position).toEqual([7]);
  });

  it('nested objects merge deeply', () => {
    const body = buildPollBody(
      { title: 'x', displaySettings: { theme: { dark: { bg: '#000' } } } },
      { displaySettings: { theme: { dark: { fg: '#fff' }, light: { bg: '#eee' } } } },
    );
    expect(body.displaySettings.theme).toEqual({ dark: { fg: '#fff', bg: '#000' }, light: { bg: '#eee' } });
  });

  it('settings are not account-level: only spec defaults ← request', () => {
    const body = buildPollBody({ title: 'x', settings: { showCounter: false, anonymous: true } }, {
      settings: { apiOnly: true },
    } as never);
    expect(body.settings).toEqual({ ...SPEC_TABLES.settings, showCounter: false, isSynthetic: false, anonymous: true });
  });

  it('the account defaults object is not modified', () => {
    const acct = { displaySettings: { backgroundColor: '#000000' } };
    buildPollBody({ title: 'x', displaySettings: { backgroundColor: '#ffffff' } }, acct);
    expect(acct).toEqual({ displaySettings: { backgroundColor: '#000000' } });
  });
});

describe('synthetic flag at creation', () => {
  it('is stored as settings.isSynthetic', () => {
    expect(buildPollBody({ title: 'x', isSynthetic: true }, {}).settings.isSynthetic).toBe(true);
    expect(buildPollBody({ title: 'x', settings: { isSynthetic: true } }, {}).settings.isSynthetic).toBe(true);
    expect(buildPollBody({ title: 'x', isSynthetic: false }, {}).settings.isSynthetic).toBe(false);
  });

  it('refuses a request where the two places disagree', () => {
    const e = thrown(() => buildPollBody({ title: 'x', isSynthetic: true, settings: { isSynthetic: false } }, {}));
    expect(e.code).toBe('validation_failed');
    expect(e.errors?.[0]?.path).toBe('/isSynthetic');
  });
});

describe('sanitising', () => {
  it('trims every string of the request, however deep', () => {
    const body = buildPollBody(
      {
        title: 'x',
        pageRules: ['  /pos/home  ', '/a '],
        smsDisplaySettings: { message: '  Hi there \n' },
        emailDisplaySettings: { subject: '\tSubject ' },
        targetingSettings: { countries: [' DE '], metadata: { plan: ' gold ' } },
      },
      { displaySettings: {} },
    );
    expect(body.pageRules).toEqual(['/pos/home', '/a']);
    expect(body.smsDisplaySettings.message).toBe('Hi there');
    expect(body.emailDisplaySettings.subject).toBe('Subject');
    expect(body.targetingSettings).toEqual({ countries: ['DE'], metadata: { plan: 'gold' } });
  });

  it('trimStrings leaves non-strings alone', () => {
    expect(trimStrings({ a: 1, b: true, c: null, d: [' x ', 2], e: { f: ' y ' } })).toEqual({
      a: 1,
      b: true,
      c: null,
      d: ['x', 2],
      e: { f: 'y' },
    });
  });

  it.each([
    ['  Checkout feedback  ', 'Checkout feedback'],
    ['<b>Checkout</b> feedback', 'Checkout feedback'],
    ['<script>alert(1)</script>Hi', 'alert(1)Hi'],
    ['<scr<b>ipt>x</scr</b>ipt>', 'x'],
    ['<a href="https://x.example">Link</a> text', 'Link text'],
    ['Line<br/>break', 'Linebreak'],
    ['  many   \n spaces  ', 'many spaces'],
    ['Fish &amp; chips', 'Fish & chips'],
    ['a < b and c > d', 'a < b and c > d'],
    ['5 <3 hearts', '5 <3 hearts'],
  ])('title %j → %j', (raw, clean) => {
    expect(cleanTitle(raw)).toBe(clean);
  });

  it.each(['', '   ', '<p></p>', '<div><span> </span></div>', '&nbsp;', '<img src=x onerror=alert(1)>'])(
    'a title that is empty once HTML is removed (%j) is an error',
    (raw) => {
      const e = thrown(() => cleanTitle(raw));
      expect(e.code).toBe('validation_failed');
      expect(e.errors).toEqual([{ path: '/title', message: expect.any(String) }]);
    },
  );

  it('refuses required texts that are empty once trimmed, naming each path, on create and update', () => {
    const blank = {
      emailDisplaySettings: { subject: '  ' },
      smsDisplaySettings: { message: '\n\t' },
      pageRules: ['/ok', ' '],
      pageExcludeRules: ['\u00a0'],
    };
    const paths = [
      '/emailDisplaySettings/subject',
      '/smsDisplaySettings/message',
      '/pageRules/1',
      '/pageExcludeRules/0',
    ];
    for (const e of [
      thrown(() => buildPollBody({ title: 'x', ...blank }, {})),
      thrown(() => applyPollPatch(buildPollBody({ title: 'x' }, {}), blank)),
    ]) {
      expect(e.code).toBe('validation_failed');
      expect(e.errors?.map((f) => f.path)).toEqual(paths);
    }
  });

  it('never leaves markup in a title, even markup written as entities', () => {
    for (const raw of [
      '&lt;script&gt;alert(1)&lt;/script&gt;Hi',
      '&lt;img src=x onerror=alert(1)&gt;Hi',
      '<b>&lt;i&gt;Hi&lt;/i&gt;</b>',
    ]) {
      const out = stripHtml(raw);
      expect(out).not.toMatch(/<\/?[a-zA-Z!][^<>]*>/);
      expect(out).toContain('Hi');
    }
  });

  it('drops the opening < of a tag left unclosed, written as it is or as entities', () => {
    expect(stripHtml('Thanks <img src=x onerror=alert(document.cookie)//')).toBe(
      'Thanks img src=x onerror=alert(document.cookie)//',
    );
    expect(stripHtml('&lt;img src=x onerror=alert(1)//')).toBe('img src=x onerror=alert(1)//');
    expect(stripHtml('Rate us <svg/onload=alert(1) ')).toBe('Rate us svg/onload=alert(1)');
    expect(stripHtml('&<lt;img src=x onerror=alert(1)//')).not.toMatch(/<[a-zA-Z!/?]/);
    // Plain text comparisons keep their signs.
    expect(stripHtml('1 < 2 and 3 > 2, x <5')).toBe('1 < 2 and 3 > 2, x <5');
    // A run of openers goes whole; markup nested past a few rounds loses every `<`.
    expect(stripHtml(`${'<'.repeat(9999)}a`)).toBe('a');
    expect(stripHtml(`${'&amp;'.repeat(50)}lt;script>alert(1)`)).not.toContain('<');
    expect(stripHtml(`<a${'<b>'.repeat(20)}>x`)).not.toMatch(/<[a-zA-Z!/?]/);
  });
});

describe('applyPollPatch', () => {
  const stored = (): PollBody => ({
    ...buildPollBody(
      {
        title: 'x',
        pageRules: ['/a', '/b'],
        displaySettings: { backgroundColor: '#000000' },
        targetingSettings: { percentage: 50, countries: ['DE', 'FR'] },
        languageSettings: languages(),
      },
      { displaySettings: { actionColor: '#111111' } },
    ),
  });

  it('merges settings objects into what is stored', () => {
    const next = applyPollPatch(stored(), {
      settings: { showCounter: false },
      displaySettings: { align: 'left' },
      targetingSettings: { countries: ['US'] },
    });
    expect(next.settings).toEqual({
      ...SPEC_TABLES.settings,
      showCounter: false,
      isSynthetic: false,
      anonymous: false,
    });
    expect(next.displaySettings).toEqual({
      ...SPEC_TABLES.displaySettings,
      backgroundColor: '#000000',
      actionColor: '#111111',
      align: 'left',
    });
    expect(next.targetingSettings).toEqual({ percentage: 50, countries: ['US'] });
  });

  it('keeps what the patch does not name', () => {
    const before = stored();
    const next = applyPollPatch(before, {});
    expect(next).toEqual(before);
  });

  it('replaces arrays whole', () => {
    expect(applyPollPatch(stored(), { pageRules: ['/c'] }).pageRules).toEqual(['/c']);
    expect(applyPollPatch(stored(), { pageRules: [] }).pageRules).toEqual([]);
  });

  it('merges into objects that were unset', () => {
    const next = applyPollPatch(stored(), {
      pageDisplaySettings: { layout: 'split' },
      schedule: { type: 'immediate' },
    });
    expect(next.pageDisplaySettings).toEqual({ layout: 'split' });
    expect(next.schedule).toEqual({ type: 'immediate' });
  });

  it('replaces languageSettings whole: languages not included are gone', () => {
    const next = applyPollPatch(stored(), {
      languageSettings: {
        defaultLanguage: 'de',
        languages: { de: { enabled: true, translations: { title: 'Hallo' } } },
      },
    });
    expect(next.languageSettings).toEqual({
      defaultLanguage: 'de',
      languages: { de: { enabled: true, translations: { title: 'Hallo' } } },
    });
  });

  it('trims strings of the patch', () => {
    const next = applyPollPatch(stored(), { smsDisplaySettings: { message: '  Hi  ' }, pageRules: [' /x '] });
    expect(next.smsDisplaySettings.message).toBe('Hi');
    expect(next.pageRules).toEqual(['/x']);
  });

  it.each([
    ['isSynthetic: true on a normal poll', { isSynthetic: true }, false],
    ['settings.isSynthetic: true on a normal poll', { settings: { isSynthetic: true } }, false],
    ['isSynthetic: false on a synthetic poll', { isSynthetic: false }, true],
    ['settings.isSynthetic: false on a synthetic poll', { settings: { isSynthetic: false, showCounter: false } }, true],
  ])('refuses %s with immutable_field', (_why, patch, synthetic) => {
    const current = buildPollBody({ title: 'x', isSynthetic: synthetic }, {});
    const e = thrown(() => applyPollPatch(current, patch));
    expect(e.code).toBe('immutable_field');
    expect(e.errors?.[0]?.path).toBe('/settings/isSynthetic');
  });

  it.each([
    ['isSynthetic: false with settings.isSynthetic: true, on a normal poll', false, false, true],
    ['isSynthetic: true with settings.isSynthetic: false, on a normal poll', false, true, false],
    ['isSynthetic: true with settings.isSynthetic: false, on a synthetic poll', true, true, false],
    ['isSynthetic: false with settings.isSynthetic: true, on a synthetic poll', true, false, true],
  ])('refuses %s: the two places must agree', (_why, synthetic, top, inSettings) => {
    const current = buildPollBody({ title: 'x', isSynthetic: synthetic }, {});
    const e = thrown(() => applyPollPatch(current, { isSynthetic: top, settings: { isSynthetic: inSettings } }));
    expect(e.code).toBe('validation_failed');
    expect(e.errors?.[0]?.path).toBe('/isSynthetic');
  });

  it('accepts isSynthetic restated with its current value', () => {
    const current = buildPollBody({ title: 'x', isSynthetic: true }, {});
    expect(
      applyPollPatch(current, { isSynthetic: true, settings: { isSynthetic: true, autoClose: true } }).settings,
    ).toMatchObject({ isSynthetic: true, autoClose: true });
  });

  it('checks the schedule it ends with', () => {
    const current = applyPollPatch(stored(), { schedule: { type: 'scheduled', startAt: '2026-01-01T00:00:00Z' } });
    expect(
      thrown(() =>
        applyPollPatch(current, {
          schedule: { type: 'scheduled', startAt: '2026-02-01T00:00:00Z', endAt: '2026-01-15T00:00:00Z' },
        }),
      ).code,
    ).toBe('validation_failed');
  });

  it('does not modify the stored body it was given', () => {
    const before = stored();
    const copy = structuredClone(before);
    applyPollPatch(before, {
      displaySettings: { align: 'left' },
      settings: { autoClose: true },
      targetingSettings: { percentage: 10 },
    });
    expect(before).toEqual(copy);
  });
});

describe('mergeTranslations', () => {
  it('merges into one language and leaves the others untouched', () => {
    const current = languages();
    const next = mergeTranslations(current, 'en', { q1: 'How did it go?', q2: 'Anything else?' });
    expect(next).toEqual({
      defaultLanguage: 'en',
      languages: {
        en: { enabled: true, translations: { title: 'Hello', q1: 'How did it go?', q2: 'Anything else?' } },
        fr: { enabled: false, translations: { title: 'Bonjour' } },
      },
    });
    expect(current).toEqual(languages());
  });

  it('keeps a language disabled when merging into it', () => {
    expect(mergeTranslations(languages(), 'fr', { q1: 'Comment?' }).languages.fr).toEqual({
      enabled: false,
      translations: { title: 'Bonjour', q1: 'Comment?' },
    });
  });

  it('adds a new language enabled, beside the existing ones', () => {
    const next = mergeTranslations(languages(), 'pt-BR', { title: ' Olá ' });
    expect(next.languages['pt-BR']).toEqual({ enabled: true, translations: { title: 'Olá' } });
    expect(next.languages.en).toEqual(languages().languages.en);
    expect(next.languages.fr).toEqual(languages().languages.fr);
    expect(next.defaultLanguage).toBe('en');
  });

  const codes = (n: number) =>
    Array.from({ length: n }, (_, i) => String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26)));
  const keys = (n: number, prefix = 'k') => Object.fromEntries(Array.from({ length: n }, (_, i) => [prefix + i, 'v']));

  it(`refuses a new language past ${MAX_LANGUAGES} with limit_reached; existing ones still merge`, () => {
    const full: LanguageSettings = {
      defaultLanguage: 'aa',
      languages: Object.fromEntries(codes(MAX_LANGUAGES).map((c) => [c, { enabled: true, translations: {} }])),
    };
    const e = thrown(() => mergeTranslations(full, 'zz', { title: 'x' }));
    expect(e.code).toBe('limit_reached');
    expect(e.errors?.[0]?.path).toBe('/language');
    expect(mergeTranslations(full, 'aa', { title: 'x' }).languages.aa?.translations).toEqual({ title: 'x' });
  });

  it(`refuses a merge that takes a language past ${MAX_TRANSLATIONS} keys with limit_reached`, () => {
    const current: LanguageSettings = {
      defaultLanguage: 'en',
      languages: { en: { enabled: true, translations: keys(MAX_TRANSLATIONS - 1) } },
    };
    const e = thrown(() => mergeTranslations(current, 'en', { title: 'a', q1: 'b' }));
    expect(e.code).toBe('limit_reached');
    expect(e.errors?.[0]?.path).toBe('/translations');
    const atCap = mergeTranslations(current, 'en', { title: 'a', k0: 'changed' });
    expect(Object.keys(atCap.languages.en!.translations)).toHaveLength(MAX_TRANSLATIONS);
  });

  it('starts language settings when the poll had none', () => {
    expect(mergeTranslations(null, 'de', { title: 'Hallo' })).toEqual({
      defaultLanguage: 'de',
      languages: { de: { enabled: true, translations: { title: 'Hallo' } } },
    });
  });
});

describe('translations as stored', () => {
  it('strips HTML from every value and trims every key, merged or sent whole', () => {
    const merged = mergeTranslations(null, 'fr', {
      ' title ': '<script>alert(1)</script>Salut',
      q1: 'Oui <b>ou</b> non',
    });
    expect(merged.languages.fr?.translations).toEqual({ title: 'alert(1)Salut', q1: 'Oui ou non' });
    const whole = buildPollBody(
      {
        title: 'x',
        languageSettings: {
          defaultLanguage: 'fr',
          languages: { fr: { enabled: true, translations: { ' q1': '&lt;img src=x onerror=alert(1)//' } } },
        },
      },
      {},
    );
    expect(whole.languageSettings?.languages.fr?.translations).toEqual({ q1: 'img src=x onerror=alert(1)//' });
    const patched = applyPollPatch(whole, {
      languageSettings: {
        defaultLanguage: 'de',
        languages: { de: { enabled: true, translations: { 'q2 ': '<i>Ja</i>' } } },
      },
    });
    expect(patched.languageSettings?.languages.de?.translations).toEqual({ q2: 'Ja' });
  });

  it('updates a stored untrimmed key rather than adding one beside it', () => {
    const current: LanguageSettings = {
      defaultLanguage: 'fr',
      languages: { fr: { enabled: true, translations: { ' title': 'Ancien', q1: 'Oui' } } },
    };
    expect(mergeTranslations(current, 'fr', { title: 'Nouveau' }).languages.fr?.translations).toEqual({
      title: 'Nouveau',
      q1: 'Oui',
    });
  });

  it('refuses a key empty once trimmed, or one that trims to another key, naming it', () => {
    const empty = thrown(() => mergeTranslations(null, 'fr', { '  ': 'x' }));
    expect(empty.code).toBe('validation_failed');
    expect(empty.errors?.map((e) => e.path)).toEqual(['/translations/  ']);
    const twice = thrown(() => mergeTranslations(null, 'fr', { title: 'a', ' title': 'b' }));
    expect(twice.errors?.map((e) => e.path)).toEqual(['/translations/ title']);
    const whole = thrown(() =>
      buildPollBody(
        {
          title: 'x',
          languageSettings: {
            defaultLanguage: 'fr',
            languages: { fr: { enabled: true, translations: { 'a/b ': 'x', 'a/b': 'y' } } },
          },
        },
        {},
      ),
    );
    expect(whole.errors?.map((e) => e.path)).toEqual(['/languageSettings/languages/fr/translations/a~1b']);
  });
});

describe('checkSchedule', () => {
  it.each([
    ['no schedule', null],
    ['undefined', undefined],
    ['immediate', { type: 'immediate' }],
    ['scheduled with start', { type: 'scheduled', startAt: '2026-01-01T00:00:00Z' }],
    ['scheduled with end', { type: 'scheduled', endAt: '2026-01-01T00:00:00Z' }],
    [
      'scheduled with start before end',
      { type: 'scheduled', startAt: '2026-01-01T00:00:00Z', endAt: '2026-01-01T00:00:01Z' },
    ],
  ] as const)('accepts %s', (_why, schedule) => {
    expect(() => checkSchedule(schedule)).not.toThrow();
  });

  it('refuses a scheduled poll with neither date', () => {
    const e = thrown(() => checkSchedule({ type: 'scheduled' }));
    expect(e.code).toBe('validation_failed');
    expect(e.errors?.[0]?.path).toBe('/schedule');
  });

  it.each([
    ['end before start', '2026-02-01T00:00:00Z', '2026-01-01T00:00:00Z'],
    ['end equal to start', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'],
    ['same instant in another zone', '2026-01-01T01:00:00+01:00', '2026-01-01T00:00:00Z'],
  ])('refuses %s', (_why, startAt, endAt) => {
    const e = thrown(() => checkSchedule({ type: 'scheduled', startAt, endAt }));
    expect(e.code).toBe('validation_failed');
    expect(e.errors?.[0]?.path).toBe('/schedule/endAt');
  });

  it.each([
    ['a leap second to start', { startAt: '2030-12-31T23:59:60Z', endAt: '2030-01-01T00:00:00Z' }, '/schedule/startAt'],
    ['a leap second to end', { endAt: '2030-06-30T23:59:60Z' }, '/schedule/endAt'],
    ['an offset of hours alone', { startAt: '2030-01-01T10:00:00+05' }, '/schedule/startAt'],
  ])('refuses %s, which no order check could compare', (_why, dates, path) => {
    const e = thrown(() => checkSchedule({ type: 'scheduled', ...dates }));
    expect(e.code).toBe('validation_failed');
    expect(e.errors?.[0]?.path).toBe(path);
    expect(e.errors?.[0]?.message).toMatch(/±hh:mm/);
  });

  it('is applied when a poll is built', () => {
    expect(thrown(() => buildPollBody({ title: 'x', schedule: { type: 'scheduled' } }, {})).code).toBe(
      'validation_failed',
    );
  });
});

describe('checkPosRule', () => {
  it.each([['/pos/home'], ['/pos/post-purchase'], ['  /pos/home  ']])(
    'refuses a file-upload slide on a poll with rule %j',
    (rule) => {
      const e = thrown(() => checkPosRule(['/other', rule], ['question', 'file-upload']));
      expect(e.code).toBe('pos_file_upload');
    },
  );

  it.each([
    ['a point-of-sale poll without file uploads', ['/pos/home'], ['question', 'short-answer', 'thank-you']],
    [
      'a file upload on a poll without point-of-sale rules',
      ['/(.)/thank_you', '/checkouts/(.)', '/account'],
      ['file-upload'],
    ],
    ['rules that only look like point-of-sale ones', ['/pos/home/extra', '/pos', '/POS/HOME'], ['file-upload']],
    ['no rules and no slides', [], []],
  ] as const)('accepts %s', (_why, rules, types) => {
    expect(() => checkPosRule(rules, types)).not.toThrow();
  });

  it('isPosPoll recognises both surfaces', () => {
    expect(isPosPoll(['/pos/post-purchase'])).toBe(true);
    expect(isPosPoll(['/pos/home'])).toBe(true);
    expect(isPosPoll(['/account'])).toBe(false);
  });
});

describe('deepMerge', () => {
  it('merges objects key by key at every depth', () => {
    expect(deepMerge({ a: 1, n: { x: 1, y: { p: 1 } } }, { n: { y: { q: 2 }, z: 3 } })).toEqual({
      a: 1,
      n: { x: 1, y: { p: 1, q: 2 }, z: 3 },
    });
  });

  it('replaces arrays and scalars', () => {
    expect(deepMerge({ list: [1, 2, 3], s: 'a', n: 1 }, { list: [9], s: 'b', n: 0 })).toEqual({
      list: [9],
      s: 'b',
      n: 0,
    });
  });

  it('applies layers left to right, the last one winning', () => {
    expect(deepMerge({ a: 1, b: 1, c: 1 }, { b: 2, c: 2 }, undefined, { c: 3 })).toEqual({ a: 1, b: 2, c: 3 });
  });

  it('ignores undefined values but lets null and false override', () => {
    expect(deepMerge({ a: 1, b: 1, c: true }, { a: undefined, b: null, c: false })).toEqual({
      a: 1,
      b: null,
      c: false,
    });
  });

  it('lets an object replace a scalar and an array replace an object', () => {
    expect(deepMerge({ a: 1, b: { x: 1 } } as Record<string, unknown>, { a: { y: 2 }, b: [1] })).toEqual({
      a: { y: 2 },
      b: [1],
    });
  });

  it('does not modify its inputs', () => {
    const base = { n: { x: 1 }, list: [1] };
    const layer = { n: { y: 2 } };
    const out = deepMerge(base, layer);
    expect(base).toEqual({ n: { x: 1 }, list: [1] });
    expect(layer).toEqual({ n: { y: 2 } });
    expect(out.n).not.toBe(base.n);
  });
});
