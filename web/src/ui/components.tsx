import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { useSession } from './session';

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

/**
 * The second step of an action that sends something: what will happen, then Confirm or Cancel.
 * Confirm takes focus when it appears, so Enter confirms and Escape (or Cancel) steps back.
 */
export function ConfirmStep({
  children,
  busy = false,
  confirmLabel = 'Confirm',
  onConfirm,
  onCancel,
}: {
  children: ReactNode;
  busy?: boolean;
  confirmLabel?: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const confirm = useRef<HTMLButtonElement>(null);
  const id = useId();
  useEffect(() => confirm.current?.focus(), []);
  return (
    <div
      className="confirm"
      role="group"
      aria-labelledby={id}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !busy) onCancel();
        // Enter held down on the button that opened the step repeats onto Confirm, which has
        // the focus: only a fresh press confirms.
        if (e.key === 'Enter' && e.repeat) e.preventDefault();
      }}
    >
      <p id={id}>{children}</p>
      <div className="actions">
        <button type="button" className="primary" ref={confirm} onClick={onConfirm} disabled={busy}>
          {busy ? 'Sending…' : confirmLabel}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/** A button whose action waits for a ConfirmStep; focus returns to the button when the step closes. */
export function ConfirmButton({
  children,
  label,
  prompt,
  busy,
  disabled,
  onConfirm,
}: {
  children: ReactNode;
  /** The button's accessible name, when its text alone is ambiguous on the page. */
  label?: string;
  prompt: ReactNode;
  busy: boolean;
  disabled?: boolean;
  onConfirm: () => Promise<unknown>;
}) {
  const [asking, setAsking] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const close = () => {
    setAsking(false);
    // After the step unmounts; the button itself may be gone by then (a resent delivery is no longer finished).
    setTimeout(() => button.current?.focus(), 0);
  };
  return (
    <>
      <button
        type="button"
        ref={button}
        aria-label={label}
        aria-expanded={asking}
        disabled={disabled || asking}
        onClick={() => setAsking(true)}
      >
        {children}
      </button>
      {asking && (
        <ConfirmStep busy={busy} onCancel={close} onConfirm={() => void onConfirm().finally(close)}>
          {prompt}
        </ConfirmStep>
      )}
    </>
  );
}

/** A page the caller's role may not see: its title, who may (`who`), and the caller's role here. */
export function RoleNotice({ title, who }: { title: string; who: string }) {
  const { account } = useSession();
  return (
    <>
      <h1>{title}</h1>
      <p className="notice">
        {who}; your role in {account.accountName} is {account.role.replace('_', ' ')}.
      </p>
    </>
  );
}
