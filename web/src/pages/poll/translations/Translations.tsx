import { useEffect, useState, type FormEvent } from 'react';
import type { Poll } from '../../../api/types';
import { ErrorNote, StatusNote } from '../../../ui/components';
import { useAction } from '../../../ui/hooks';
import { useSession } from '../../../ui/session';
import './translations.css';

/** A text as shown; `loaded` is its value as last read, so a save sends only what changed here. */
type Row = { key: string; value: string; saved: boolean; loaded?: string };

const savedRows = (translations: Record<string, string>): Row[] =>
  Object.entries(translations).map(([key, value]) => ({ key, value, saved: true, loaded: value }));

// The API's language tag (src/http/schemas/settings.ts): its first part in lower case.
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/**
 * One language of a poll at a time (GET /poll/translations); saving merges that language
 * (POST /poll/translations/update) and leaves the others untouched.
 */
export function Translations({ poll, onChanged }: { poll: Poll; onChanged: () => void }) {
  const { api, account } = useSession();
  const known = Object.keys(poll.languageSettings?.languages ?? {});
  const [language, setLanguage] = useState<string>(known[0] ?? '');
  // The rows shown belong to one language: until the chosen language's texts have loaded, none
  // are shown, so another language's texts can never be saved under it.
  const [shown, setShown] = useState<{ language: string; rows: Row[] } | null>(null);
  const rows = shown?.language === language ? shown.rows : null;
  const setRows = (change: (rs: Row[]) => Row[]) => setShown((s) => s && { ...s, rows: change(s.rows) });
  const [attempt, setAttempt] = useState(0);
  const [newLanguage, setNewLanguage] = useState('');
  const [loadError, setLoadError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [languageError, setLanguageError] = useState<string | null>(null);
  const isKnown = known.includes(language);

  const choose = (code: string) => {
    setSaved(null);
    setLoadError(null);
    setLanguage(code);
  };

  useEffect(() => {
    // A language not saved yet keeps the rows the form started it with.
    if (!language || !isKnown) return;
    let live = true;
    api.get('/poll/translations', { pollId: poll.id, language }).then(
      ({ data }) => {
        if (!live) return;
        setShown({ language, rows: savedRows(data.translations) });
        setLoadError(null);
      },
      (err: unknown) => live && setLoadError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      live = false;
    };
  }, [api, poll.id, language, isKnown, attempt]);

  const save = useAction(async () => {
    if (!rows) return;
    // A save that fails shows its error alone, not beside the last one's "Saved".
    setSaved(null);
    const saving = language;
    // Only the texts changed here: the merge leaves the others as stored, so a text another
    // editor saved since this page read it is not put back to what this page shows.
    const translations: Record<string, string> = {};
    // A text left empty on a language new to this page is not sent: another editor may have
    // added the language meanwhile, and its stored text would be written over.
    for (const r of rows)
      if (r.key.trim() && (r.saved ? r.value !== r.loaded : r.value !== '' || isKnown))
        translations[r.key.trim()] = r.value;
    if (isKnown && !Object.keys(translations).length) return setSaved(`No ${saving} text changed.`);
    const { data } = await api.post('/poll/translations/update', { pollId: poll.id, language: saving, translations });
    // Another language chosen meanwhile keeps its own rows.
    setShown((s) => (s?.language === saving ? { language: saving, rows: savedRows(data.translations) } : s));
    setSaved(`Saved the ${saving} translations.`);
    if (!isKnown) onChanged();
  });

  const addLanguage = (e: FormEvent) => {
    e.preventDefault();
    const code = newLanguage.trim();
    if (!LANGUAGE.test(code))
      return setLanguageError('A language is a tag like fr or pt-BR, its first part in lower case.');
    setLanguageError(null);
    choose(code);
    // A language the poll has already shows its stored texts; only a new one starts blank.
    if (!known.includes(code)) setShown({ language: code, rows: [{ key: 'title', value: '', saved: false }] });
    setNewLanguage('');
  };

  const canWrite = account.role !== 'read_only';
  const setRow = (i: number, row: Partial<Row>) => setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...row } : r)));

  return (
    <section aria-labelledby="translations-title">
      <h2 id="translations-title">Translations</h2>
      {poll.languageSettings && <p>Default language: {poll.languageSettings.defaultLanguage}</p>}
      {known.length > 0 ? (
        <div className="inline-field">
          <label htmlFor="language">Language</label>
          <select id="language" value={language} onChange={(e) => choose(e.target.value)}>
            {known.map((l) => (
              <option key={l} value={l}>
                {l}
                {poll.languageSettings?.languages[l]?.enabled === false ? ' (disabled)' : ''}
              </option>
            ))}
            {!isKnown && language && <option value={language}>{language} (new)</option>}
          </select>
        </div>
      ) : (
        !language && <p>This poll has no translations yet.</p>
      )}
      <ErrorNote>{loadError}</ErrorNote>
      {language && !rows && loadError && (
        <button type="button" onClick={() => (setLoadError(null), setAttempt((n) => n + 1))}>
          Load the {language} texts again
        </button>
      )}
      {language && !rows && !loadError && <StatusNote>Loading the {language} texts…</StatusNote>}
      {language && rows && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void save.go();
          }}
          className="card"
        >
          <h3>{isKnown ? `Texts in ${language}` : `New language: ${language}`}</h3>
          <table className="kv">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Text</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i}>
                  <td>
                    {r.saved ? (
                      <span className="mono">{r.key}</span>
                    ) : (
                      <input
                        aria-label={`Key ${i + 1}`}
                        value={r.key}
                        onChange={(e) => setRow(i, { key: e.target.value })}
                        disabled={!canWrite}
                      />
                    )}
                  </td>
                  <td>
                    <input
                      aria-label={`Text for ${r.key || `key ${i + 1}`}`}
                      value={r.value}
                      onChange={(e) => setRow(i, { value: e.target.value })}
                      disabled={!canWrite}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {canWrite && (
            <div className="actions">
              <button type="button" onClick={() => setRows((rs) => [...rs, { key: '', value: '', saved: false }])}>
                Add a text
              </button>
              <button type="submit" className="primary" disabled={save.busy}>
                Save {language}
              </button>
            </div>
          )}
          <ErrorNote>{save.error}</ErrorNote>
          {saved && <StatusNote>{saved}</StatusNote>}
        </form>
      )}
      {canWrite && (
        <form onSubmit={addLanguage} className="inline-field">
          <label htmlFor="new-language">Add a language</label>
          <input
            id="new-language"
            value={newLanguage}
            onChange={(e) => setNewLanguage(e.target.value)}
            placeholder="fr, de, pt-BR…"
          />
          <button type="submit">Add</button>
          <ErrorNote>{languageError}</ErrorNote>
        </form>
      )}
    </section>
  );
}
