import type { AnswerOf, ApiKey, Role } from '../../api/types';
import type { Api } from '../../ui/api';

export type { ApiKey };

type KeyPage = AnswerOf<'get', '/keys'>;

// The key and member routes' answers are typed from their response schemas like every other
// route's: the client needs nothing of its own for them.
export type KeysApi = Api;

/** The dashboard's one client (bearer key, problem documents). */
export const keysApi = (api: Api): KeysApi => api;

/** Roles, highest first: a role may give (and revoke, and remove) only its own rank and below. */
const RANK: Record<Role, number> = { owner: 0, admin: 1, billing_admin: 2, editor: 3, read_only: 4 };

export const ROLES_BY_RANK = (Object.keys(RANK) as Role[]).sort((a, b) => RANK[a] - RANK[b]);

export const noHigher = (role: Role, than: Role): boolean => RANK[role] >= RANK[than];

/** The roles that manage keys and members. */
export const KEY_ROLES: Role[] = ['owner', 'admin'];

export const roleLabel = (r: Role): string => r.replace('_', ' ');

/** Every key of the account, page after page (a member list is built from them). */
export async function allKeys(api: KeysApi, accountId: string): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  let startCursor: string | null = null;
  // At most 50 pages of 100: far more keys than an account holds.
  for (let i = 0; i < 50; i++) {
    const page: KeyPage = await api.get('/keys', { accountId, limit: 100, startCursor });
    keys.push(...page.data);
    if (!page.hasNextPage || !page.endCursor) return keys;
    startCursor = page.endCursor;
  }
  return keys;
}
