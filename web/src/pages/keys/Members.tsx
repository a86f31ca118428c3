import { useState } from 'react';
import type { Role } from '../../api/types';
import { Badge, ConfirmButton, ErrorNote, StatusNote } from '../../ui/components';
import { useAction } from '../../ui/hooks';
import { useSession } from '../../ui/session';
import { keysApi, noHigher, roleLabel, type ApiKey } from './keys-api';

type Member = { email: string; role: Role; active: number; total: number };

/** One entry per member email, from the account's keys (every member has at least one). */
function membersOf(keys: ApiKey[]): Member[] {
  const byEmail = new Map<string, Member>();
  for (const k of keys) {
    const m = byEmail.get(k.email) ?? { email: k.email, role: k.role, active: 0, total: 0 };
    m.total += 1;
    if (!k.revokedAt) m.active += 1;
    byEmail.set(k.email, m);
  }
  return [...byEmail.values()].sort((a, b) => a.email.localeCompare(b.email));
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function Members({
  keys,
  error,
  me,
  onRemoved,
}: {
  keys: ApiKey[] | undefined;
  error: string | null;
  me: string | null;
  onRemoved: (email: string) => void;
}) {
  const { account } = useSession();
  const [done, setDone] = useState<string | null>(null);
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <p>
        Removing a member ends their access to {account.accountName} at once. A member left in no account also has every
        key revoked. The last owner stays.
      </p>
      <ErrorNote>{error}</ErrorNote>
      {!keys && !error && <StatusNote>Loading members…</StatusNote>}
      {done && <StatusNote>{done}</StatusNote>}
      {keys && (
        <ul className="members">
          {membersOf(keys).map((m) => (
            <MemberItem
              key={m.email}
              member={m}
              you={m.email === me}
              canRemove={noHigher(m.role, account.role)}
              onRemoved={(revokedKeys) => {
                setDone(
                  `Removed ${m.email} from ${account.accountName}; ${plural(revokedKeys, 'key', 'keys')} revoked.`,
                );
                onRemoved(m.email);
              }}
            />
          ))}
        </ul>
      )}
    </section>
  );
}

function MemberItem({
  member: m,
  you,
  canRemove,
  onRemoved,
}: {
  member: Member;
  you: boolean;
  canRemove: boolean;
  onRemoved: (revokedKeys: number) => void;
}) {
  const { api, account } = useSession();
  const remove = useAction(async () => {
    const { data } = await keysApi(api).del('/members', { accountId: account.accountId, email: m.email });
    onRemoved(data.revokedKeys);
  });
  return (
    <li className="member">
      <div className="member-who">
        <span className="url">{m.email}</span>
        <Badge tone="neutral">{roleLabel(m.role)}</Badge>
        {you && <Badge tone="warn">you</Badge>}
        <span className="muted small">
          {m.active} of {plural(m.total, 'key', 'keys')} active
        </span>
      </div>
      {canRemove ? (
        <ConfirmButton
          label={`Remove member ${m.email}`}
          busy={remove.busy}
          onConfirm={remove.go}
          prompt={
            you ? (
              <>
                <strong>This is you.</strong> Removing yourself ends your access to {account.accountName} here.
              </>
            ) : (
              <>
                Remove {m.email} from {account.accountName}? Their access ends at once.
              </>
            )
          }
        >
          Remove member
        </ConfirmButton>
      ) : (
        <span className="muted small">outranks you</span>
      )}
      <ErrorNote>{remove.error}</ErrorNote>
    </li>
  );
}
