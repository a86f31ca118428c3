import { ROLES, rolesFor } from '../../domain/access.js';
import { comparableAddress } from '../../domain/email-address.js';
import type { Store } from '../ports/index.js';

/** Roles that may not see webhook URLs, which failure alerts name. */
const BELOW_WEBHOOKS = ROLES.filter((r) => !rolesFor('manage_webhooks').includes(r));

/**
 * Where an account's failure alerts go: its notificationRecipients, or its first owner. A listed
 * address that is a member whose role may not see webhook URLs (an editor, a read-only member)
 * is left out, whenever it was listed or joined: the alerts name the endpoints' URLs (README).
 * Addresses that are no member's (an operations mailbox) stay; with none left, the owner.
 */
export async function recipientsFor(store: Store, accountId: string): Promise<string[]> {
  const account = await store.accounts.get(accountId);
  const listed = account?.notificationRecipients ?? [];
  if (listed.length) {
    const kept = await withoutLowerMembers(store, accountId, listed);
    if (kept.length) return kept;
  }
  // None listed, or none left: the owner, as for an unset list.
  const owner = await store.users.ownerEmail(accountId);
  return owner ? [owner] : [];
}

/** `addresses` less those of the account's members whose role may not see webhook URLs. */
export async function withoutLowerMembers(store: Store, accountId: string, addresses: readonly string[]) {
  const below = new Set((await store.users.memberEmails(accountId, BELOW_WEBHOOKS)).map(comparableAddress));
  return addresses.filter((a) => !below.has(comparableAddress(a)));
}
