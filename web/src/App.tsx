import { useEffect, useMemo, useRef, useState } from 'react';
import type { Membership } from './api/types';
import { AlertsPage } from './pages/alerts/AlertsPage';
import { DeliveriesPage } from './pages/deliveries/DeliveriesPage';
import { KEY_ROLES } from './pages/keys/keys-api';
import { KeysPage } from './pages/keys/KeysPage';
import { PollPage } from './pages/poll/PollPage';
import { PollsPage } from './pages/polls/PollsPage';
import { SignIn } from './pages/sign-in/SignIn';
import { AccountSwitcher } from './ui/AccountSwitcher';
import { SigningSecret } from './ui/SigningSecret';
import { ApiError, createApi, errorText } from './ui/api';
import { useFocusWhen } from './ui/hooks';
import { ErrorNote, StatusNote } from './ui/components';
import { Link, navigate, useRoute, BASE } from './ui/router';
import {
  SessionContext,
  forget,
  IDLE_MS,
  markUsed,
  planServed,
  restoredKey,
  storeAccount,
  storedAccount,
  storedKey,
  storeKey,
} from './ui/session';

export function App() {
  // The key kept in the tab as the page opened: read as it first renders, and an expired one
  // forgotten once rendered (a read that forgets would find nothing the second time StrictMode
  // renders, and lose the notice).
  const [restored] = useState(() => restoredKey());
  useEffect(() => {
    if (restored.expired) forget();
  }, [restored]);
  const [key, setKey] = useState<string | null>(restored.expired ? null : restored.key);
  const [accounts, setAccounts] = useState<Membership[] | null>(null);
  const [accountId, setAccountId] = useState<string | null>(() => storedAccount());
  const [notice, setNotice] = useState<string | null>(
    restored.expired
      ? `Signed out: the key went unused for ${IDLE_MS / 60_000} minutes in this tab. Sign in again.`
      : null,
  );
  const [loadError, setLoadError] = useState<string | null>(null);
  const [loadAttempt, setLoadAttempt] = useState(0);
  const route = useRoute();
  const main = useRef<HTMLElement>(null);

  // A click or a key pressed is use: the key kept stays good for IDLE_MS after the last one.
  useEffect(() => {
    if (!key) return;
    let last = 0;
    const used = () => {
      if (Date.now() - last < 10_000) return;
      last = Date.now();
      markUsed(last);
    };
    window.addEventListener('pointerdown', used, true);
    window.addEventListener('keydown', used, true);
    return () => {
      window.removeEventListener('pointerdown', used, true);
      window.removeEventListener('keydown', used, true);
    };
  }, [key]);

  // The account's signing secret, shown once, with the account it signs for.
  const [secret, setSecret] = useState<{ value: string; accountId: string | null } | null>(null);
  // Dismissed, its panel goes: focus moves to the page rather than its body.
  useFocusWhen(!secret, main);
  // A key revoked while the dashboard is open signs it out at its next call, on any page.
  const api = useMemo(
    () =>
      key
        ? createApi(key, {
            // An answer that lands after its key signed out (and another perhaps signed in) is
            // not shown: the secret is its account's, not the tab's next user's.
            onSigningSecret: (value, forAccount) => {
              if (storedKey() === key) setSecret({ value, accountId: forAccount });
            },
            // Nor does a late 401 of a key signed out sign out the next one.
            onUnauthorized: () => {
              if (storedKey() === key) signOut('That API key is no longer accepted; sign in again.');
            },
            onNotFound: () => checkMembership.current(),
          })
        : null,
    [key],
  );

  // After a 404, the accounts are listed again (one check at a time, one in 10 s at most: a
  // page that refreshes a deleted poll's log would ask every few seconds): an account the key
  // no longer opens is left, with a notice, rather than answering "not found" on every page.
  const checking = useRef(false);
  const lastCheck = useRef(0);
  const shownAccount = useRef<string | null>(null);
  const checkMembership = useRef<() => void>(() => {});
  checkMembership.current = () => {
    if (!api || !accounts || checking.current || Date.now() - lastCheck.current < 10_000) return;
    checking.current = true;
    lastCheck.current = Date.now();
    const current = accounts.find((a) => a.accountId === accountId) ?? accounts[0];
    api
      .get('/accounts')
      .then(({ data }) => {
        if (!current || data.some((a) => a.accountId === current.accountId)) return;
        // The user moved to another account meanwhile: that one is theirs to leave.
        if (shownAccount.current !== current.accountId) return;
        setAccounts(data);
        if (data[0]) storeAccount(data[0].accountId);
        setAccountId(data[0]?.accountId ?? null);
        setLeft(`You are no longer a member of ${current.accountName}.`);
        navigate(`${BASE}/`);
      })
      .catch(() => {})
      .finally(() => (checking.current = false));
  };
  const [left, setLeft] = useState<string | null>(null);

  // A key kept from earlier in this tab: check it again and list its accounts.
  useEffect(() => {
    if (!api || accounts) return;
    api.get('/accounts').then(
      ({ data }) => setAccounts(data),
      (err: unknown) => {
        if (err instanceof ApiError && err.status === 401)
          signOut('That API key is no longer accepted; sign in again.');
        else setLoadError(errorText(err));
      },
    );
  }, [api, accounts, loadAttempt]);

  // Move focus to the page when the page (not a section of it) changes.
  const pageKey = route.name === 'poll' ? `poll:${route.pollId}` : route.name;
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus();
  }, [pageKey]);

  function signOut(message: string | null = null) {
    forget();
    setLeft(null);
    setKey(null);
    setAccounts(null);
    setAccountId(null);
    setSecret(null);
    setNotice(message);
  }

  if (!key || !api) {
    return (
      <SignIn
        notice={notice}
        onSignedIn={(k, list) => {
          setSecret(null);
          storeKey(k);
          setKey(k);
          setAccounts(list);
          setNotice(null);
        }}
      />
    );
  }
  if (!accounts) {
    return (
      <main id="main">
        {loadError ? (
          // A failure that is not the key's (a 429, a 503, a timeout) may pass: try again, or leave.
          <>
            <ErrorNote>{loadError}</ErrorNote>
            <div className="actions">
              <button type="button" onClick={() => (setLoadError(null), setLoadAttempt((n) => n + 1))}>
                Try again
              </button>
              <button type="button" onClick={() => signOut()}>
                Sign out
              </button>
            </div>
          </>
        ) : (
          <StatusNote>Loading your accounts…</StatusNote>
        )}
      </main>
    );
  }
  const account = accounts.find((a) => a.accountId === accountId) ?? accounts[0];
  shownAccount.current = account?.accountId ?? null;
  if (!account) {
    return (
      <main id="main">
        <p>This key&apos;s user is not a member of any account.</p>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </main>
    );
  }

  const switchAccount = (id: string) => {
    storeAccount(id);
    setAccountId(id);
    setLeft(null);
    // A signing secret shown once stays until dismissed: its panel names the account it signs
    // for, and it is never shown again.
    navigate(`${BASE}/`);
  };

  return (
    <SessionContext.Provider value={{ api, account }}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to={{ name: 'polls' }} className="brand">
          Canvass
        </Link>
        <nav aria-label="Main">
          <Link to={{ name: 'polls' }} current={route.name === 'polls' || route.name === 'poll'}>
            Polls
          </Link>
          <Link to={{ name: 'alerts' }} current={route.name === 'alerts'}>
            Alerts
          </Link>
          <Link to={{ name: 'deliveries' }} current={route.name === 'deliveries'}>
            Delivery log
          </Link>
          {KEY_ROLES.includes(account.role) && (
            <Link to={{ name: 'keys' }} current={route.name === 'keys'}>
              Keys
            </Link>
          )}
        </nav>
        <AccountSwitcher accounts={accounts} current={account} onChange={switchAccount} />
        <button type="button" className="signout" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main} tabIndex={-1} key={account.accountId}>
        {left && (
          <p className="notice" role="status">
            {left}
          </p>
        )}
        {secret && (
          <SigningSecret
            secret={secret.value}
            accountName={accounts.find((a) => a.accountId === secret.accountId)?.accountName ?? null}
            onDismiss={() => setSecret(null)}
          />
        )}
        {!planServed(account.plan) && (
          <p className="notice">
            {account.accountName} is on the {account.plan} plan: the API serves premium accounts and up, so most of this
            dashboard will answer &quot;plan required&quot;.
          </p>
        )}
        {route.name === 'polls' && <PollsPage />}
        {route.name === 'poll' && <PollPage key={route.pollId} pollId={route.pollId} section={route.section} />}
        {route.name === 'alerts' && <AlertsPage />}
        {route.name === 'deliveries' && <DeliveriesPage />}
        {route.name === 'keys' && (
          <KeysPage sessionKey={key} onSignOut={signOut} onAccountsChanged={() => setAccounts(null)} />
        )}
      </main>
    </SessionContext.Provider>
  );
}
