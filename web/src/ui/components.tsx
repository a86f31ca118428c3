import type { ReactNode } from 'react';

export function ErrorNote({ children }: { children: ReactNode }) {
  if (!children) return null;
  return (
    <p className="error" role="alert">
      {children}
    </p>
  );
}

/** A polite live region: screen readers hear "Saved", "Loading…" without losing focus. */
export function StatusNote({ children }: { children: ReactNode }) {
  return (
    <p className="status" role="status" aria-live="polite">
      {children}
    </p>
  );
}

export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span className="muted">—</span>;
  const d = new Date(at);
  return (
    <time dateTime={at} title={at}>
      {d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' })}
    </time>
  );
}

export function Badge({ tone, children }: { tone: 'good' | 'bad' | 'warn' | 'neutral'; children: ReactNode }) {
  return <span className={`badge badge-${tone}`}>{children}</span>;
}

/** Pages through a cursor list: a stack of the cursors that opened each page so far. */
export function Pager({
  label,
  page,
  hasNext,
  onFirst,
  onPrev,
  onNext,
}: {
  label: string;
  page: number;
  hasNext: boolean;
  onFirst: () => void;
  onPrev: () => void;
  onNext: () => void;
}) {
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={onFirst} disabled={page === 0}>
        First
      </button>
      <button type="button" onClick={onPrev} disabled={page === 0}>
        Previous
      </button>
      <span>Page {page + 1}</span>
      <button type="button" onClick={onNext} disabled={!hasNext}>
        Next
      </button>
    </nav>
  );
}

/** The ISO string of a datetime-local input's value (read as local time), or undefined. */
export function isoFromLocal(value: string): string | undefined {
  if (!value) return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

export const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** A table's scroll container: a named region that takes focus, so the keyboard can scroll it too. */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
