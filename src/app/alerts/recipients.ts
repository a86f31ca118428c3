import { ROLES, rolesFor } from '../../domain/access.js';
import { comparableAddress } from '../../domain/email-address.js';
import type { Store } from '../ports/index.js';

/** Roles that may not see webhook URLs, which failure alerts name. */
export const BELOW_WEBHOOKS = ROLES.filter((r) => !rolesFor('manage_webhooks').includes(r));

/**
 * Where an account's failure alerts go: its notificationRecipients, or its first owner. A listed
 * address that is a member whose role may not see webhook URLs (an editor, a read-only member)
 * is left out, whenever it was listed or joined: the alerts name the endpoints' URLs (README).
 * Addresses that are no member's (an operations mailbox) stay.
 */
export async function recipientsFor(store: Store, accountId: string): Promise<string[]> {
  const account = await store.accounts.get(accountId);
  if (!account?.notificationRecipients?.length) {
    const owner = await store.users.ownerEmail(accountId);
    return owner ? [owner] : [];
  }
  const below = new Set((await store.users.memberEmails(accountId, BELOW_WEBHOOKS)).map(comparableAddress));
  return account.notificationRecipients.filter((a) => !below.has(comparableAddress(a)));
}
