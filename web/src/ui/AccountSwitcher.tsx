import type { Membership } from '../api/types';

const roleLabel = (r: string) => r.replace('_', ' ');

/** The accounts the key's user belongs to, each with the user's role and the account's plan. */
export function AccountSwitcher({
  accounts,
  current,
  onChange,
}: {
  accounts: Membership[];
  current: Membership;
  onChange: (accountId: string) => void;
}) {
  return (
    <div className="account-switcher">
      <label htmlFor="account">Account</label>
      <select
        id="account"
        value={current.accountId}
        onChange={(e) => onChange(e.target.value)}
        disabled={accounts.length < 2}
      >
        {accounts.map((a) => (
          <option key={a.accountId} value={a.accountId}>
            {a.accountName} — {roleLabel(a.role)}, {a.plan}
          </option>
        ))}
      </select>
    </div>
  );
}
