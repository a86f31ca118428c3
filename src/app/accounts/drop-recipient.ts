import { addressForms, comparableAddress } from '../../domain/email-address.js';
import type { Store } from '../ports/index.js';

/**
 * Takes an address off the account's failure-alert recipients, whose emails name its endpoints'
 * URLs, and off the emails still to be sent to it again. A list left empty falls back to the
 * owner, as an unset one does (docs/operations.md).
 */
export async function dropRecipient(store: Store, accountId: string, email: string, now: Date): Promise<void> {
  const address = email.trim().toLowerCase();
  // Compared as a mail server would: a member's internationalised domain (ann@exämple.de) and
  // the same address listed in ASCII (ann@xn--exmple-cua.de) are one recipient.
  const same = comparableAddress(address);
  // Nor is an email the mail server deferred for them sent to them again, in any form.
  for (const form of addressForms(address)) await store.alerts.dropDeferredRecipient(accountId, form, now);
  const account = await store.accounts.get(accountId);
  const recipients = account?.notificationRecipients;
  if (!account || !recipients?.some((r) => comparableAddress(r) === same)) return;
  const left = recipients.filter((r) => comparableAddress(r) !== same);
  await store.accounts.setDefaults(account.id, account.defaults, left.length ? left : null, now);
}
