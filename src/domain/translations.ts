import { invalid, pointerStep } from './errors.js';
import type { LanguageSettings } from './poll.js';
import { stripHtml } from './sanitize.js';

/**
 * One language's translations as stored: keys trimmed, values plain text as titles are (HTML
 * stripped, README "API overview"). A key empty once trimmed, or two keys that trim to one, is a
 * 400 naming it, rather than a second key that silently never matches.
 */
export function cleanTranslations(translations: Record<string, string>, path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [raw, value] of Object.entries(translations)) {
    const key = raw.trim();
    const at = `${path}/${pointerStep(raw)}`;
    if (!key) throw invalid(at, 'a translation key must not be empty once trimmed');
    if (Object.hasOwn(out, key)) throw invalid(at, `names the key "${key}" again once trimmed`);
    out[key] = stripHtml(value);
  }
  return out;
}

/** Every language's translations cleaned as cleanTranslations does. */
export function cleanLanguageSettings(
  settings: LanguageSettings | undefined,
  path = '/languageSettings',
): LanguageSettings | undefined {
  if (!settings) return settings;
  const languages = Object.fromEntries(
    Object.entries(settings.languages).map(([code, language]) => [
      code,
      {
        ...language,
        translations: cleanTranslations(language.translations, `${path}/languages/${code}/translations`),
      },
    ]),
  );
  return { ...settings, languages };
}
