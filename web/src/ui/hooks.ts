import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { errorText } from './api';

export type Loaded<T> = { data: T | undefined; error: string | null; loading: boolean; reload: () => void };

/**
 * Runs `load` when `key` changes (and on reload()); a late answer for an old key is dropped.
 * Data is only ever this key's (rows of another filter or page are never shown under this one);
 * a failed reload keeps what it had, with the error.
 */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{
    data: T | undefined;
    dataKey: string | null;
    error: string | null;
    loading: boolean;
  }>({ data: undefined, dataKey: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, dataKey: key, error: null, loading: false }),
      (err: unknown) =>
        live &&
        setState((s) => ({
          ...(s.dataKey === key ? { data: s.data, dataKey: key } : { data: undefined, dataKey: null }),
          error: errorText(err),
          loading: false,
        })),
    );
    return () => {
      live = false;
    };
    // `load` is recreated on each render; `key` says when what it loads has changed.
  }, [key, tick]);
  // Loading from the render the reload is asked in, not only once its effect has run: a refresh
  // that skips a tick while a load is out (the delivery log's) must not see the gap between the two.
  const reload = useCallback(() => {
    setState((s) => ({ ...s, loading: true }));
    setTick((t) => t + 1);
  }, []);
  // Another key's data is never handed out, even while this key loads: a pager would read the
  // last page's cursor from it, and a Next clicked then open a page of the old filter.
  const data = state.dataKey === key ? state.data : undefined;
  return { data, error: state.error, loading: state.loading, reload };
}

/**
 * `rows` shown as still loading until `labels` has first loaded, so that a table never shows an id
 * (a slide's, a webhook's, a poll's) that then turns into its name. A failed `labels` load lets the
 * rows through with their ids and its error; a failed `rows` load is shown at once.
 */
export function afterLabels<T>(rows: Loaded<T>, labels: Loaded<unknown>): Loaded<T> {
  if (labels.loading && labels.data === undefined && !rows.error) return { ...rows, data: undefined, loading: true };
  return { ...rows, error: rows.error ?? labels.error };
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

/** Cursor paging state: the startCursor of each page opened so far (null for the first). */
export function useCursorPages() {
  const [stack, setStack] = useState<(string | null)[]>([null]);
  const page = stack.length - 1;
  return {
    page,
    cursor: stack[page] ?? null,
    first: () => setStack([null]),
    prev: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    // A second click before the page changed opens it once, not twice.
    next: (endCursor: string | null) =>
      endCursor && setStack((s) => (s[s.length - 1] === endCursor ? s : [...s, endCursor])),
  };
}

/**
 * Moves focus to `target` whenever `when` turns true, not at the first render: the control that
 * had it (a dialog's button, say) unmounts, and focus would fall back to the page's body.
 */
export function useFocusWhen(when: boolean, target: RefObject<HTMLElement | null>): void {
  // The value before, not a first-render flag: StrictMode runs a mount's effect twice.
  const before = useRef(when);
  useEffect(() => {
    if (when && !before.current) target.current?.focus();
    before.current = when;
  }, [when]);
}
