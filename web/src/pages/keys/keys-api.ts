import type { BodyOf, QueryOf, Role } from '../../api/types';
import type { Api, QueryArgs } from '../../ui/api';

// The key and member routes declare no response schemas: their answers are written here by
// hand. Paths, query parameters and bodies are still checked against the OpenAPI document.

/** A key as GET /keys lists it: its first characters, never the key. */
export type ApiKey = {
  id: string;
  prefix: string | null;
  email: string;
  role: Role;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

export type CreatedKey = { userId: string; apiKey: string; role: Role };

export type RemovedMember = { accountId: string; email: string; removed: true; revokedKeys: number };

type KeyPage = { data: ApiKey[]; hasNextPage: boolean; endCursor: string | null };

export type KeysApi = {
  get(path: '/keys', query: QueryArgs<QueryOf<'get', '/keys'>>): Promise<KeyPage>;
  post(path: '/keys', body: BodyOf<'post', '/keys'>): Promise<{ data: CreatedKey }>;
  del(path: '/keys', query: QueryArgs<QueryOf<'delete', '/keys'>>): Promise<{ data: { id: string; revoked: true } }>;
  del(path: '/members', query: QueryArgs<QueryOf<'delete', '/members'>>): Promise<{ data: RemovedMember }>;
};

/** The dashboard's one client (bearer key, problem documents), typed for these routes. */
export const keysApi = (api: Api): KeysApi => api as unknown as KeysApi;

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
