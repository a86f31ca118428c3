import { type AccountDefaults } from '../../domain/poll-defaults.js';
import { notFound } from '../../domain/errors.js';
import { requireAccount } from '../access.js';
import type { Caller, Deps, Store } from '../ports/index.js';

export type AccountSettings = AccountDefaults & { accountId: string; notificationRecipients: string[] | null };

export async function read(store: Store, accountId: string): Promise<AccountSettings> {
  const account = await store.accounts.get(accountId);
  if (!account) throw notFound('account');
  return { accountId, ...account.defaults, notificationRecipients: account.notificationRecipients };
}

export async function getAccountSettings(deps: Deps, caller: Caller, accountId: string): Promise<AccountSettings> {
  await requireAccount(deps.store, caller, accountId, 'read');
  return read(deps.store, accountId);
}
