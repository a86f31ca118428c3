import { deepMerge } from '../../domain/merge.js';
import { checkTrimmedText } from '../../domain/poll.js';
import { ACCOUNT_LEVEL_OBJECTS, type AccountDefaults } from '../../domain/poll-defaults.js';
import { trimStrings } from '../../domain/sanitize.js';
import { requireAccountLocked } from '../access.js';
import type { Caller, Deps, Store } from '../ports/index.js';
import { type AccountSettings, read } from './get-account-settings.js';

export type AccountSettingsPatch = AccountDefaults & { accountId: string; notificationRecipients?: string[] | null };

/** Account-level defaults merge into what is stored; new polls pick them up under their own request. */
export async function updateAccountSettings(
  deps: Deps,
  caller: Caller,
  patch: AccountSettingsPatch,
): Promise<AccountSettings> {
  return deps.store.transaction((store) => updateLocked(store, deps, caller, patch));
}

async function updateLocked(
  store: Store,
  deps: Deps,
  caller: Caller,
  patch: AccountSettingsPatch,
): Promise<AccountSettings> {
  // Concurrent patches merge one after another instead of overwriting each other.
  await requireAccountLocked(store, caller, patch.accountId, 'manage_account');
  const current = await read(store, patch.accountId);
  const p = trimStrings(patch);
  checkTrimmedText(p);
  const defaults: AccountDefaults = {};
  for (const key of ACCOUNT_LEVEL_OBJECTS) {
    const merged = deepMerge(current[key] ?? {}, p[key]);
    if (Object.keys(merged).length) defaults[key] = merged;
  }
  const recipients =
    p.notificationRecipients === undefined
      ? current.notificationRecipients
      : p.notificationRecipients === null
        ? null
        : [...new Set(p.notificationRecipients.map((e) => e.toLowerCase()))];
  await store.accounts.setDefaults(patch.accountId, defaults, recipients, deps.clock.now());
  return { accountId: patch.accountId, ...defaults, notificationRecipients: recipients };
}
