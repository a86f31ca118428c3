import { mergeTranslations } from '../../domain/poll.js';
import { requirePollForUpdate } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import type { Translations } from './get-translations.js';

/** Merges one language's translations, with the poll locked; every other language stays as stored. */
export async function updateTranslations(deps: Deps, caller: Caller, input: Translations): Promise<Translations> {
  return deps.store.transaction(async (store) => {
    const poll = await requirePollForUpdate(store, caller, input.pollId);
    const languageSettings = mergeTranslations(poll.languageSettings, input.language, input.translations);
    await store.polls.update(poll.id, {
      title: poll.title,
      isVisible: poll.isVisible,
      body: { ...poll, languageSettings },
      updatedAt: deps.clock.now(),
    });
    return {
      pollId: poll.id,
      language: input.language,
      translations: languageSettings.languages[input.language]!.translations,
    };
  });
}
