import { rolesFor } from '../../domain/access.js';
import { comparableAddress } from '../../domain/email-address.js';
import { DomainError } from '../../domain/errors.js';
import { deepMerge } from '../../domain/merge.js';
import { checkTrimmedText } from '../../domain/poll.js';
import { ACCOUNT_LEVEL_OBJECTS, type AccountDefaults } from '../../domain/poll-defaults.js';
import { trimStrings } from '../../domain/sanitize.js';
import { requireAccountLocked } from '../access.js';
import type { Caller, Deps, Store } from '../ports/index.js';
import { withoutLowerMembers } from '../alerts/recipients.js';
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
  const listed =
    p.notificationRecipients === undefined
      ? current.notificationRecipients
      : p.notificationRecipients && onePerMailbox(p.notificationRecipients);
  // An empty list is unset, as one emptied by a member's removal is: alerts go to the owner.
  const recipients = listed?.length ? listed : null;
  if (p.notificationRecipients) await refuseBelowWebhooks(store, patch.accountId, p.notificationRecipients);
  await store.accounts.setDefaults(patch.accountId, defaults, recipients, deps.clock.now());
  return { accountId: patch.accountId, ...defaults, notificationRecipients: recipients };
}

/**
 * Failure alerts name the endpoints' URLs: a member whose role may not see them is refused as a
 * recipient, naming the address, rather than left out of every email unsaid (alerts/recipients.ts).
 */
async function refuseBelowWebhooks(store: Store, accountId: string, given: readonly string[]): Promise<void> {
  const kept = new Set(await withoutLowerMembers(store, accountId, given));
  const refused = [...given.entries()].filter(([, address]) => !kept.has(address));
  if (!refused.length) return;
  const needs = rolesFor('manage_webhooks').join(', ');
  throw new DomainError(
    'validation_failed',
    `${refused.map(([, a]) => a).join(', ')}: alerts name webhook URLs, which this member's role may not see (needs one of: ${needs})`,
    refused.map(([i]) => ({
      path: `/notificationRecipients/${i}`,
      message: 'a member whose role may not see webhook URLs',
    })),
  );
}

/** Each mailbox once, as first listed (lower case): both forms of an internationalised domain are one. */
function onePerMailbox(addresses: readonly string[]): string[] {
  const seen = new Map<string, string>();
  for (const a of addresses) {
    const mailbox = comparableAddress(a);
    if (!seen.has(mailbox)) seen.set(mailbox, a.toLowerCase());
  }
  return [...seen.values()];
}
