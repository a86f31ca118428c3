import { beforeAll, describe, expect, it } from 'vitest';
import {
  acme,
  acmeReader,
  call,
  createPoll,
  expectProblem,
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
