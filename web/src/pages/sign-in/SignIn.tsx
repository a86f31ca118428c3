import { useState, type FormEvent } from 'react';
import type { Membership } from '../../api/types';
import { createApi, errorText } from '../../ui/api';
import { ErrorNote } from '../../ui/components';
import { IDLE_MS } from '../../ui/session';
import './sign-in.css';

/** Asks for an API key and checks it with GET /accounts before keeping it. */
export function SignIn({
  notice,
  onSignedIn,
}: {
  notice?: string | null;
  onSignedIn: (key: string, accounts: Membership[]) => void;
}) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return setError('Enter an API key.');
    setBusy(true);
    setError(null);
    try {
      const { data } = await createApi(k).get('/accounts');
      onSignedIn(k, data);
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };

  return (
    <main id="main" className="signin">
      <h1>Canvass dashboard</h1>
      <p>
        Sign in with an API key (cvk_…). It is kept only in this browser tab until you sign out; the page opened again
        after {IDLE_MS / 60_000} minutes without use asks for it again.
      </p>
      {notice && <p className="notice">{notice}</p>}
      <form onSubmit={submit} className="card">
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={key}
          onChange={(e) => setKey(e.target.value)}
          aria-describedby="api-key-help"
          required
        />
        <small id="api-key-help">
          On the first start of an embedded server the owner key is printed once on its output.
        </small>
        <ErrorNote>{error}</ErrorNote>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
