import { useEffect, useId, useRef, useState } from 'react';
import type { Role } from '../../api/types';
import { ErrorNote } from '../../ui/components';
import { useAction, useFocusWhen } from '../../ui/hooks';
import { useSession } from '../../ui/session';
import { comparableAddress } from '../../ui/address';
import { keysApi, noHigher, roleLabel, ROLES_BY_RANK } from './keys-api';

type Created = { email: string; role: Role; apiKey: string };

/**
 * The New key form: a member (added if new) and a role no higher than the signed-in member's.
 * The role sent becomes the member's: an existing member's own is offered first, and another
 * one is named as the change it makes.
 */
export function NewKey({
  onCreated,
  onDismissed,
  members,
}: {
  /** Called with the member's email once the key is made. */
  onCreated: (email: string) => void;
  /** Called with the member's email once the key shown has been dismissed. */
  onDismissed: (email: string) => void;
  /**
   * The account's members and their roles, by comparableAddress; or why they are not known yet.
   * No key is made meanwhile: its role would become a member's unseen (an admin made read-only).
   */
  members: ReadonlyMap<string, Role> | 'reading' | 'unread';
}) {
  const { api, account } = useSession();
  const roles = ROLES_BY_RANK.filter((r) => noHigher(r, account.role));
  const [email, setEmail] = useState('');
  const known = typeof members !== 'string';
  const existing = known ? members.get(comparableAddress(email)) : undefined;
  // A member above the caller keeps their role: the API refuses any key for them.
  const above = existing !== undefined && !roles.includes(existing);
  // A role the user picked; until then, an existing member's own, or the lowest: a higher one is a choice.
  const [chosen, setChosen] = useState<Role | null>(null);
  const role = chosen ?? (existing && roles.includes(existing) ? existing : 'read_only');
  const [created, setCreated] = useState<Created | null>(null);
  // A key still shown when the form goes (the user moved to another page) counts as dismissed:
  // it cannot be shown again either way.
  const shownFor = useRef<string | null>(null);
  // The key stored, its panel goes: focus returns to the form, for the next key.
  const emailInput = useRef<HTMLInputElement>(null);
  useFocusWhen(!created, emailInput);
  const dismissed = useRef(onDismissed);
  dismissed.current = onDismissed;
  useEffect(
    () => () => {
      if (shownFor.current) dismissed.current(shownFor.current);
    },
    [],
  );
  const create = useAction(async () => {
    const { data } = await keysApi(api).post('/keys', { accountId: account.accountId, email: email.trim(), role });
    const who = email.trim().toLowerCase();
    setCreated({ email: who, role: data.role, apiKey: data.apiKey });
    shownFor.current = who;
    setEmail('');
    setChosen(null);
    onCreated(who);
  });
  return (
    <>
      <form
        className="card new-key"
        aria-labelledby="new-key-title"
        onSubmit={(e) => {
          e.preventDefault();
          void create.go();
        }}
      >
        <h2 id="new-key-title">New key</h2>
        <div className="new-key-fields">
          <div>
            <label htmlFor="new-key-email">Member email</label>
            {/* Text, not type="email": browsers refuse the internationalised addresses the API takes. */}
            <input
              ref={emailInput}
              id="new-key-email"
              type="text"
              inputMode="email"
              required
              autoComplete="off"
              spellCheck={false}
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              aria-describedby="new-key-help"
            />
          </div>
          <div>
            <label htmlFor="new-key-role">Role</label>
            <select
              id="new-key-role"
              value={role}
              onChange={(e) => setChosen(e.target.value as Role)}
              aria-describedby="new-key-help"
            >
              {roles.map((r) => (
                <option key={r} value={r}>
                  {roleLabel(r)}
                </option>
              ))}
            </select>
          </div>
        </div>
        <small id="new-key-help">
          A new email becomes a member of {account.accountName}. A member who has keys already gets one more, and this
          role becomes theirs. No role above yours ({roleLabel(account.role)}).
        </small>
        {!known && (
          <p data-testid="new-key-members-unknown">
            {members === 'reading'
              ? 'Reading the members, to tell whether this email is one and with which role…'
              : 'The members could not be read, so a key could change a member’s role unseen: reload the page to make one.'}
          </p>
        )}
        {existing && (
          <p className={existing === role ? undefined : 'role-change'} data-testid="new-key-member-role">
            {above
              ? `${email.trim()} is a member as ${roleLabel(existing)}, above your role: only a member of that role or higher can make them a key.`
              : existing === role
                ? `${email.trim()} is a member as ${roleLabel(existing)}; the key keeps that role.`
                : `${email.trim()} is a member as ${roleLabel(existing)}: this key makes them ${roleLabel(role)}.`}
          </p>
        )}
        <ErrorNote>{create.error}</ErrorNote>
        <button type="submit" className="primary" disabled={create.busy || !!created || !known || above}>
          {create.busy ? 'Creating…' : 'Create key'}
        </button>
        {created && <small>Store the key below before creating another.</small>}
      </form>
      {created && (
        <KeyShownOnce
          created={created}
          onDismiss={() => {
            setCreated(null);
            shownFor.current = null;
            onDismissed(created.email);
          }}
        />
      )}
    </>
  );
}

/** A new key, returned once by POST /keys: shown here once, never again. */
function KeyShownOnce({ created, onDismiss }: { created: Created; onDismiss: () => void }) {
  const [copied, setCopied] = useState<boolean | 'failed'>(false);
  const title = useId();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.apiKey);
      setCopied(true);
    } catch {
      // No clipboard outside a secure context, or one the user refused: the key is shown once.
      setCopied('failed');
    }
  };
  return (
    <div className="secret-once" role="alert" aria-labelledby={title}>
      <h3 id={title}>New API key — shown only this once</h3>
      <p>
        For <strong className="url">{created.email}</strong> as {roleLabel(created.role)}. Store it now: Canvass keeps
        only its hash and will not show it again. Anyone holding it acts as this member.
      </p>
      <code className="secret" data-testid="new-api-key">
        {created.apiKey}
      </code>
      <div className="actions">
        <button type="button" onClick={() => void copy()}>
          {copied === true ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDismiss}>
          I have stored it
        </button>
      </div>
      {copied === 'failed' && (
        <p className="error" role="alert">
          The browser would not copy it: select the key above and copy it by hand.
        </p>
      )}
    </div>
  );
}
