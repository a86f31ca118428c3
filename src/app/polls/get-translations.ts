import { notFound } from '../../domain/errors.js';
import { requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';

export type Translations = { pollId: string; language: string; translations: Record<string, string> };

export async function getTranslations(
  deps: Deps,
  caller: Caller,
  pollId: string,
  language: string,
): Promise<Translations> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  const entry = poll.languageSettings?.languages[language];
  if (!entry) throw notFound(`language "${language}" of this poll`);
  return { pollId, language, translations: entry.translations };
}
