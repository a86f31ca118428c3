import { ApiError } from '../../ui/api';
import { Badge, ConfirmButton, ErrorNote, Pager, RoleNotice, StatusNote, TableWrap, When } from '../../ui/components';
import { useAction, useCursorPages, useLoad } from '../../ui/hooks';
import { useSession } from '../../ui/session';
import { useAccountUsage } from '../../ui/usage';
import { allKeys, KEY_ROLES, keysApi, noHigher, roleLabel, type ApiKey } from './keys-api';
import { Members } from './Members';
import { NewKey } from './NewKey';
import { comparableAddress } from '../../ui/address';
import './keys.css';

export type KeysPageProps = {
  /** The key this dashboard is signed in with: its row is marked, and revoking it signs out. */
  sessionKey: string;
  onSignOut: (message: string) => void;
  /** The signed-in member's own memberships may have changed: list the accounts again. */
  onAccountsChanged: () => void;
};

/** The account's API keys and members (owners and admins): list, create, revoke, remove. */
export function KeysPage(props: KeysPageProps) {
  const { account } = useSession();
  if (!KEY_ROLES.includes(account.role)) {
    return <RoleNotice title="Keys" who="Keys and members are managed by owners and admins" />;
  }
  return <AccountKeys {...props} />;
}

function AccountKeys({ sessionKey, onSignOut, onAccountsChanged }: KeysPageProps) {
  const { api, account } = useSession();
  const keys = keysApi(api);
  const pages = useCursorPages();
  const list = useLoad(
    () => keys.get('/keys', { accountId: account.accountId, startCursor: pages.cursor, limit: 20 }),
    `${account.accountId}:${pages.cursor}`,
  );
  // Every key, for the member list: a member appears once, whichever page their keys are on.
  const every = useLoad(() => allKeys(keys, account.accountId), account.accountId);
  // The account's quotas of keys and members, and how much of them it uses.
  const usage = useAccountUsage();

  // A prefix is the key's first characters: the session key starts with its own row's.
  const isSession = (k: ApiKey) => !!k.prefix && sessionKey.startsWith(k.prefix);
  const me = every.data?.find(isSession)?.email ?? null;
  const members = new Map((every.data ?? []).map((k) => [comparableAddress(k.email), k.role] as const));
  const isMe = (email: string) => me !== null && comparableAddress(email) === comparableAddress(me);

  const reload = () => {
    list.reload();
    every.reload();
    usage.reload();
  };

  /** After a revoke: a key that no longer works is this dashboard's own, so sign out. */
  const afterRevoke = async () => {
    try {
      await api.get('/accounts');
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        onSignOut('You revoked the key this dashboard was signed in with. Sign in with another key.');
        return;
      }
    }
    reload();
  };

  const rows = list.data?.data ?? [];
  return (
    <>
      <h1>Keys</h1>
      <p>
        The API keys of {account.accountName}&apos;s members. A key is shown once, when it is created; this list shows
        only its first characters.
      </p>
      {usage.figures && (
        <p data-testid="key-usage">
          Live keys made for this account: {usage.figures.liveKeys.used} of {usage.figures.liveKeys.quota}. Members:{' '}
          {usage.figures.members.used} of {usage.figures.members.quota}.
        </p>
      )}
      <ErrorNote>{usage.error}</ErrorNote>
      <NewKey
        // Unknown while every key is read, and after a read that failed (what an earlier read
        // found may miss a member made since): a key's role becomes its member's, so a member's
        // role must be known before one is made.
        members={every.loading ? 'reading' : every.error ? 'unread' : every.data ? members : 'reading'}
        onCreated={reload}
        // A key made for oneself sets one's own role: the accounts are listed again once the key
        // shown is dismissed, or left behind (listing them shows nothing else meanwhile).
        onDismissed={(email) => isMe(email) && onAccountsChanged()}
      />

      <h2 id="keys-title">API keys</h2>
      <ErrorNote>{list.error}</ErrorNote>
      {list.loading && !list.data && <StatusNote>Loading keys…</StatusNote>}
      {list.data && rows.length === 0 && <p>No keys.</p>}
      {rows.length > 0 && (
        <TableWrap label="API keys">
          <table className="keys stack">
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Member</th>
                <th scope="col">Role</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((k) => (
                <KeyRow
                  key={k.id}
                  k={k}
                  session={isSession(k)}
                  canRevoke={noHigher(k.role, account.role)}
                  onRevoked={afterRevoke}
                />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {(list.data?.hasNextPage || pages.page > 0) && (
        <Pager
          label="Keys"
          page={pages.page}
          hasNext={list.data?.hasNextPage ?? false}
          onFirst={pages.first}
          onPrev={pages.prev}
          onNext={() => pages.next(list.data?.endCursor ?? null)}
        />
      )}

      <Members
        keys={every.data}
        error={every.error}
        me={me}
        onRemoved={(email) => (isMe(email) ? onAccountsChanged() : reload())}
      />
    </>
  );
}

function KeyRow({
  k,
  session,
  canRevoke,
  onRevoked,
}: {
  k: ApiKey;
  session: boolean;
  canRevoke: boolean;
  onRevoked: () => Promise<void>;
}) {
  const { api } = useSession();
  const name = k.prefix ? `${k.prefix}…` : k.id;
  const revoke = useAction(async () => {
    await keysApi(api).del('/keys', { keyId: k.id });
    await onRevoked();
  });
  return (
    <tr className={session ? 'session-key' : undefined}>
      <td data-label="Key">
        <span>
          <code>{name}</code>
          {session && <Badge tone="neutral">this dashboard</Badge>}
          {!k.limited && <Badge tone="neutral">all their accounts</Badge>}
        </span>
      </td>
      <td data-label="Member" className="email">
        {k.email}
      </td>
      <td data-label="Role">{roleLabel(k.role)}</td>
      <td data-label="Created">
        <When at={k.createdAt} />
      </td>
      <td data-label="Last used">
        <When at={k.lastUsedAt} />
      </td>
      <td data-label="Status" className="key-status">
        {k.revokedAt ? (
          <span>
            <Badge tone="bad">revoked</Badge> <When at={k.revokedAt} />
          </span>
        ) : (
          <div className="actions">
            <Badge tone="good">active</Badge>
            {canRevoke ? (
              <ConfirmButton
                label={`Revoke key ${name} of ${k.email}`}
                busy={revoke.busy}
                onConfirm={revoke.go}
                prompt={
                  session ? (
                    <>
                      <strong>This is the key this dashboard is signed in with.</strong> Revoking it signs you out here
                      at once; signing in again needs another key.
                    </>
                  ) : k.limited ? (
                    <>
                      Revoke {name} of {k.email}? Its next request is refused; this cannot be undone.
                    </>
                  ) : (
                    <>
                      Revoke {name} of {k.email}? It is the member&apos;s own key. Where it opens other accounts of
                      theirs that you do not administer, it is withdrawn from this account and your other accounts where
                      you may revoke it, and keeps opening those others; a withdrawn key stays withdrawn if the member
                      is removed and added again. This cannot be undone.
                    </>
                  )
                }
              >
                Revoke
              </ConfirmButton>
            ) : (
              <span className="muted small">its member outranks you</span>
            )}
          </div>
        )}
        <ErrorNote>{revoke.error}</ErrorNote>
      </td>
    </tr>
  );
}
