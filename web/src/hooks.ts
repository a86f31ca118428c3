import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import { errorText, type Api } from './api';
import type { Membership } from './types';

export type Session = { api: Api; account: Membership };

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in view');
  return s;
}

export type Loaded<T> = { data: T | undefined; error: string | null; loading: boolean; reload: () => void };

/** Runs `load` when `key` changes (and on reload()); a late answer for an old key is dropped. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (err: unknown) => live && setState((s) => ({ data: s.data, error: errorText(err), loading: false })),
    );
    return () => {
      live = false;
    };
    // `load` is recreated on each render; `key` says when what it loads has changed.
  }, [key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** An action with a busy flag and an error message, for forms and buttons. */
export function useAction<A extends unknown[]>(run: (...args: A) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const go = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await run(...args);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, go, setError };
}
