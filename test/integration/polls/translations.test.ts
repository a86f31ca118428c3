import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_LANGUAGE_SETTINGS_BYTES, MAX_LANGUAGES, MAX_TRANSLATIONS } from '../../../src/domain/poll.js';
import {
  acme,
  acmeReader,
  call,
  createPoll,
  expectProblem,
  paths,
  rival,
  usePollsApi,
  type Json,
} from '../../support/polls-api.js';

/**
 * Route tests for translations (src/app/polls/{get,update}-translations.ts): GET /poll/translations,
 * POST /poll/translations/update, and POST /poll/update replacing the whole languageSettings.
 */

usePollsApi();

describe('translations', () => {
  let poll: Json & { id: string };
  beforeAll(async () => {
    poll = await createPoll(acme, {
      languageSettings: {
        defaultLanguage: 'en',
        languages: {
          en: { enabled: true, translations: { title: 'Hello', q1: 'How was it?' } },
          fr: { enabled: false, translations: { title: 'Bonjour' } },
        },
      },
    });
  });

  it('GET /poll/translations answers one language', async () => {
    const res = await call('GET', `/poll/translations?pollId=${poll.id}&language=fr`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { pollId: poll.id, language: 'fr', translations: { title: 'Bonjour' } } });
    const reader = await call('GET', `/poll/translations?pollId=${poll.id}&language=en`, acmeReader);
    expect(reader.json().data.translations).toEqual({ title: 'Hello', q1: 'How was it?' });
  });

  it('an unknown language is 404, a malformed one 400', async () => {
    expectProblem(await call('GET', `/poll/translations?pollId=${poll.id}&language=de`, acme.key), 404, 'not_found');
    expectProblem(
      await call('GET', `/poll/translations?pollId=${poll.id}&language=EN_us`, acme.key),
      400,
      'validation_failed',
    );
    expectProblem(await call('GET', `/poll/translations?pollId=${poll.id}`, acme.key), 400, 'validation_failed');
  });

  it('POST /poll/translations/update merges that language and leaves the others untouched', async () => {
    const res = await call('POST', '/poll/translations/update', acme.key, {
      pollId: poll.id,
      language: 'en',
      translations: { q1: ' How did it go? ', q2: 'Anything else?' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      pollId: poll.id,
      language: 'en',
      translations: { title: 'Hello', q1: 'How did it go?', q2: 'Anything else?' },
    });
    const fr = await call('GET', `/poll/translations?pollId=${poll.id}&language=fr`, acme.key);
    expect(fr.json().data.translations).toEqual({ title: 'Bonjour' });
    const stored = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
    expect(stored.languageSettings).toEqual({
      defaultLanguage: 'en',
      languages: {
        en: { enabled: true, translations: { title: 'Hello', q1: 'How did it go?', q2: 'Anything else?' } },
        fr: { enabled: false, translations: { title: 'Bonjour' } },
      },
    });
  });

  it('a new language is added beside the others', async () => {
    const res = await call('POST', '/poll/translations/update', acme.key, {
      pollId: poll.id,
      language: 'pt-BR',
      translations: { title: 'Olá' },
    });
    expect(res.statusCode).toBe(200);
    const stored = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
    expect(Object.keys(stored.languageSettings.languages).sort()).toEqual(['en', 'fr', 'pt-BR']);
    expect(stored.languageSettings.languages['pt-BR']).toEqual({ enabled: true, translations: { title: 'Olá' } });
  });

  it('refuses malformed bodies and callers who may not write', async () => {
    expectProblem(
      await call('POST', '/poll/translations/update', acme.key, {
        pollId: poll.id,
        language: 'en',
        translations: { title: 42 },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await call('POST', '/poll/translations/update', acme.key, { pollId: poll.id, language: 'en' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await call('POST', '/poll/translations/update', acmeReader, {
        pollId: poll.id,
        language: 'en',
        translations: { title: 'R' },
      }),
      403,
      'role_forbidden',
    );
    expectProblem(
      await call('POST', '/poll/translations/update', rival.key, {
        pollId: poll.id,
        language: 'en',
        translations: { title: 'R' },
      }),
      404,
      'not_found',
    );
    expectProblem(await call('GET', `/poll/translations?pollId=${poll.id}&language=en`, rival.key), 404, 'not_found');
    const en = await call('GET', `/poll/translations?pollId=${poll.id}&language=en`, acme.key);
    expect(en.json().data.translations.title).toBe('Hello');
  });

  it('merges of different languages at the same time all survive', async () => {
    const target = await createPoll(acme, { title: 'Concurrent translations' });
    const langs = ['de', 'es', 'it', 'nl', 'pl', 'sv'];
    const res = await Promise.all(
      langs.map((language) =>
        call('POST', '/poll/translations/update', acme.key, {
          pollId: target.id,
          language,
          translations: { title: `t-${language}` },
        }),
      ),
    );
    expect(res.map((r) => r.statusCode)).toEqual(langs.map(() => 200));
    const stored = (await call('GET', `/poll?pollId=${target.id}`, acme.key)).json().data;
    expect(Object.keys(stored.languageSettings.languages).sort()).toEqual(langs);
  });

  // A merge keeps languageSettings within the caps a whole one is held to, so it can be sent back.
  it(`a merge past ${MAX_LANGUAGES} languages is 409 limit_reached; the poll still round-trips`, async () => {
    const codes = Array.from({ length: MAX_LANGUAGES }, (_, i) =>
      String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26)),
    );
    const languageSettings = {
      defaultLanguage: 'aa',
      languages: Object.fromEntries(codes.map((c) => [c, { enabled: true, translations: { title: c } }])),
    };
    const full = await createPoll(acme, { title: 'Many languages', languageSettings });
    const body = { pollId: full.id, language: 'zz', translations: { title: 'zz' } };
    const problem = expectProblem(
      await call('POST', '/poll/translations/update', acme.key, body),
      409,
      'limit_reached',
    );
    expect(paths(problem)).toEqual(['/language']);
    const existing = { pollId: full.id, language: 'aa', translations: { q1: 'more' } };
    expect((await call('POST', '/poll/translations/update', acme.key, existing)).statusCode).toBe(200);
    const stored = (await call('GET', `/poll?pollId=${full.id}`, acme.key)).json().data;
    expect(Object.keys(stored.languageSettings.languages)).toHaveLength(MAX_LANGUAGES);
    const back = { pollId: full.id, languageSettings: stored.languageSettings };
    expect((await call('POST', '/poll/update', acme.key, back)).statusCode).toBe(200);
  });

  it(`a merge past ${MAX_TRANSLATIONS} keys in a language is 409 limit_reached`, async () => {
    const keys = (n: number, prefix: string) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 'v']));
    const target = await createPoll(acme, {
      title: 'Many keys',
      languageSettings: { defaultLanguage: 'en', languages: { en: { enabled: true, translations: keys(1500, 'a') } } },
    });
    const body = { pollId: target.id, language: 'en', translations: keys(600, 'b') };
    const problem = expectProblem(
      await call('POST', '/poll/translations/update', acme.key, body),
      409,
      'limit_reached',
    );
    expect(paths(problem)).toEqual(['/translations']);
    const en = await call('GET', `/poll/translations?pollId=${target.id}&language=en`, acme.key);
    expect(Object.keys(en.json().data.translations)).toHaveLength(1500);
    const fits = { pollId: target.id, language: 'en', translations: keys(500, 'b') };
    expect((await call('POST', '/poll/translations/update', acme.key, fits)).statusCode).toBe(200);
  });

  it(`merges that would take a poll's translations past ${MAX_LANGUAGE_SETTINGS_BYTES} bytes are 409 limit_reached`, async () => {
    const target = await createPoll(acme, { title: 'Long texts' });
    const merge = (language: string, translations: Record<string, string>) =>
      call('POST', '/poll/translations/update', acme.key, { pollId: target.id, language, translations });
    // 200 keys of 2,000 characters: about 400 KB a merge, each within the body and key caps.
    const batch = (prefix: string) =>
      Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`${prefix}${i}`, 'x'.repeat(2000)]));
    for (const lang of ['de', 'fr']) expect((await merge(lang, batch(lang))).statusCode).toBe(200);
    expect(paths(expectProblem(await merge('it', batch('it')), 409, 'limit_reached'))).toEqual(['/translations']);
    // Replacing a text with one no longer is still taken.
    expect((await merge('de', { de0: 'shorter' })).statusCode).toBe(200);
  });

  it('POST /poll/update with languageSettings replaces the whole object', async () => {
    const res = await call('POST', '/poll/update', acme.key, {
      pollId: poll.id,
      languageSettings: {
        defaultLanguage: 'de',
        languages: { de: { enabled: true, translations: { title: 'Hallo' } } },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.languageSettings).toEqual({
      defaultLanguage: 'de',
      languages: { de: { enabled: true, translations: { title: 'Hallo' } } },
    });
    for (const gone of ['en', 'fr', 'pt-BR'])
      expectProblem(
        await call('GET', `/poll/translations?pollId=${poll.id}&language=${gone}`, acme.key),
        404,
        'not_found',
      );
    const de = await call('GET', `/poll/translations?pollId=${poll.id}&language=de`, acme.key);
    expect(de.json().data.translations).toEqual({ title: 'Hallo' });
  });
});
