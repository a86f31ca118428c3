import { notFound } from '../../domain/errors.js';
import { requireAccount } from '../access.js';
import type { Caller, Deps, KeyView, Page, PageRequest, Store } from '../ports/index.js';

/** Who acts: an API caller (checked against the account), or the operator at the CLI (trusted). */
export type Actor = Caller | 'operator';

export async function requireAccountExists(store: Store, accountId: string): Promise<void> {
  if (!(await store.accounts.get(accountId))) throw notFound('account');
}

/** The keys of an account's members (owner, admin): a short prefix to tell them apart, never the key. */
export async function listKeys(deps: Deps, actor: Actor, accountId: string, page: PageRequest): Promise<Page<KeyView>> {
  if (actor === 'operator') await requireAccountExists(deps.store, accountId);
  else await requireAccount(deps.store, actor, accountId, 'manage_account');
  return actor === 'operator'
    ? deps.store.keys.listForAccount(accountId, page)
    : deps.store.keys.listForAccount(accountId, page, actor.userId, !!actor.accountId);
}
