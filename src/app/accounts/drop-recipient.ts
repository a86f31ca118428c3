import type { Store } from '../ports/index.js';

/**
 * Takes an address off the account's failure-alert recipients, whose emails name its endpoints'
 * URLs, and off the emails still to be sent to it again. A list left empty falls back to the
 * owner, as an unset one does (docs/operations.md).
 */
export async function dropRecipient(store: Store, accountId: string, email: string, now: Date): Promise<void> {
  const address = email.trim().toLowerCase();
  // Nor is an email the mail server deferred for them sent to them again.
  await store.alerts.dropDeferredRecipient(accountId, address, now);
  const account = await store.accounts.get(accountId);
  const recipients = account?.notificationRecipients;
  if (!account || !recipients?.includes(address)) return;
  const left = recipients.filter((r) => r !== address);
  await store.accounts.setDefaults(account.id, account.defaults, left.length ? left : null, now);
}
