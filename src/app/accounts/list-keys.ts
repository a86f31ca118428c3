import { requireAccount, requireAccountExists, type Actor } from '../access.js';
import type { Deps, KeyView, Page, PageRequest } from '../ports/index.js';

/** The keys of an account's members (owner, admin): a short prefix to tell them apart, never the key. */
export async function listKeys(deps: Deps, actor: Actor, accountId: string, page: PageRequest): Promise<Page<KeyView>> {
  if (actor === 'operator') await requireAccountExists(deps.store, accountId);
  else await requireAccount(deps.store, actor, accountId, 'manage_account');
  return actor === 'operator'
    ? deps.store.keys.listForAccount(accountId, page)
    : deps.store.keys.listForAccount(accountId, page, actor.userId, !!actor.accountId);
}
