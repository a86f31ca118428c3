import { createAccount } from './app/accounts/create-account.js';
import { createKey } from './app/accounts/create-key.js';
import { listKeys } from './app/accounts/list-keys.js';
import { removeMember } from './app/accounts/remove-member.js';
import { revokeKey } from './app/accounts/revoke-key.js';
import { rotateSigningSecret } from './app/accounts/rotate-signing-secret.js';
import { setPlan } from './app/accounts/set-plan.js';
import type { Deps } from './app/ports/index.js';
import type { Plan, Role } from './domain/access.js';
import type { AdminHandler } from './http/admin-socket.js';

/** Operator commands (no caller: the operator is trusted), by name, for the CLI and the admin socket. */
export function adminHandlers(deps: Deps): Record<string, AdminHandler> {
  const str = (a: Record<string, unknown>, k: string) => String(a[k] ?? '');
  return {
    'accounts.create': (a) =>
      createAccount(deps, { name: str(a, 'name'), ownerEmail: str(a, 'ownerEmail'), plan: str(a, 'plan') as Plan }),
    'accounts.set-plan': (a) => setPlan(deps, str(a, 'accountId'), str(a, 'plan') as Plan),
    'keys.create': (a) =>
      createKey(deps, 'operator', {
        accountId: str(a, 'accountId'),
        email: str(a, 'email'),
        role: str(a, 'role') as Role,
      }),
    'keys.list': (a) =>
      listKeys(deps, 'operator', str(a, 'accountId'), {
        limit: typeof a.limit === 'number' ? a.limit : 100,
        startCursor: a.startCursor as string | undefined,
      }),
    'keys.revoke': (a) => revokeKey(deps, 'operator', str(a, 'keyId')),
    'members.remove': (a) => removeMember(deps, 'operator', { accountId: str(a, 'accountId'), email: str(a, 'email') }),
    'support.rotate-secret': (a) => rotateSigningSecret(deps, str(a, 'accountId'), { force: a.force === true }),
  };
}
