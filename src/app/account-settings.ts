import { deepMerge } from '../domain/merge.js';
import { ACCOUNT_LEVEL_OBJECTS, type AccountDefaults } from '../domain/poll-defaults.js';
import { trimStrings } from '../domain/sanitize.js';
import { notFound } from '../domain/errors.js';
import { requireAccount } from './access.js';
import type { AccountMembership, Caller, Deps, Store } from './ports.js';

export type AccountSettings = AccountDefaults & { accountId: string; notificationRecipients: string[] | null };

export type AccountSettingsPatch = AccountDefaults & { accountId: string; notificationRecipients?: string[] | null };

async function read(store: Store, accountId: string): Promise<AccountSettings> {
  const account = await store.accounts.get(accountId);
  if (!account) throw notFound('account');
  return { accountId, ...account.defaults, notificationRecipients: account.notificationRecipients };
}

export async function getAccountSettings(deps: Deps, caller: Caller, accountId: string): Promise<AccountSettings> {
  await requireAccount(deps.store, caller, accountId, 'read');
  return read(deps.store, accountId);
}

/** Account-level defaults merge into what is stored; new polls pick them up under their own request. */
export async function updateAccountSettings(deps: Deps, caller: Caller, patch: AccountSettingsPatch): Promise<AccountSettings> {
  return deps.store.transaction((store) => updateLocked(store, deps, caller, patch));
}

async function updateLocked(store: Store, deps: Deps, caller: Caller, patch: AccountSettingsPatch): Promise<AccountSettings> {
  await requireAccount(store, caller, patch.accountId, 'manage_account');
  // Concurrent patches merge one after another instead of overwriting each other.
  await store.accounts.lock(patch.accountId);
  const current = await read(store, patch.accountId);
  const p = trimStrings(patch);
  const defaults: AccountDefaults = {};
  for (const key of ACCOUNT_LEVEL_OBJECTS) {
    const merged = deepMerge(current[key] ?? {}, p[key]);
    if (Object.keys(merged).length) defaults[key] = merged;
  }
  const recipients =
    p.notificationRecipients === undefined ? current.notificationRecipients : p.notificationRecipients === null ? null : [...new Set(p.notificationRecipients.map((e) => e.toLowerCase()))];
  await store.accounts.setDefaults(patch.accountId, defaults, recipients, deps.clock.now());
  return { accountId: patch.accountId, ...defaults, notificationRecipients: recipients };
}

export async function listMyAccounts(deps: Deps, caller: Caller): Promise<AccountMembership[]> {
  return deps.store.users.memberships(caller.userId);
}
