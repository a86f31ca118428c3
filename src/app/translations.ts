import { notFound } from '../domain/errors.js';
import { mergeTranslations } from '../domain/poll.js';
import { requirePoll, requirePollForUpdate } from './access.js';
import type { Caller, Deps } from './ports.js';

export type Translations = { pollId: string; language: string; translations: Record<string, string> };

export async function getTranslations(deps: Deps, caller: Caller, pollId: string, language: string): Promise<Translations> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  const entry = poll.languageSettings?.languages[language];
  if (!entry) throw notFound(`language "${language}" of this poll`);
  return { pollId, language, translations: entry.translations };
}

/** Merges one language; the others are untouched (SPEC §4.2). */
export async function updateTranslations(deps: Deps, caller: Caller, input: Translations): Promise<Translations> {
  return deps.store.transaction(async (store) => {
    const poll = await requirePollForUpdate(store, caller, input.pollId);
    const languageSettings = mergeTranslations(poll.languageSettings, input.language, input.translations);
    await store.polls.update(poll.id, { title: poll.title, isVisible: poll.isVisible, body: { ...poll, languageSettings }, updatedAt: deps.clock.now() });
    return { pollId: poll.id, language: input.language, translations: languageSettings.languages[input.language]!.translations };
  });
}
