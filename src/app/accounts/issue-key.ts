import { hashApiKey, keyPrefix, newApiKey } from '../../domain/api-key.js';
import { addressForms, comparableAddress } from '../../domain/email-address.js';
import { newId, newOpaqueId } from '../../domain/ids.js';
import type { Store } from '../ports/index.js';

/**
 * A new key for the user: limited to `accountId` when given, else good in every account of
 * theirs; `createdBy` is the API caller who made it, with their key `createdWith` (revoked
 * with their access to the account, and with the key it was made with).
 */
export async function issueKey(
  store: Store,
  userId: string,
  now: Date,
  accountId: string | null = null,
  createdBy: string | null = null,
  createdWith: string | null = null,
): Promise<string> {
  const apiKey = newApiKey();
  await store.keys.insert({
    id: newId('key', now.getTime()),
    userId,
    keyHash: hashApiKey(apiKey),
    prefix: keyPrefix(apiKey),
    accountId,
    createdAt: now,
    createdBy,
    createdWith,
  });
  return apiKey;
}

/**
 * The user of an address, made if new. An address with its domain in Unicode or in ASCII
 * (punycode) is one user: found under either form, and stored as first given.
 */
export async function userFor(store: Store, email: string, now: Date): Promise<string> {
  const normalised = email.trim().toLowerCase();
  const mailbox = comparableAddress(normalised);
  const existing = await store.users.findByEmail(addressForms(normalised), mailbox);
  if (existing) return existing.id;
  return store.users.insertOrFind({ id: newOpaqueId('usr'), email: normalised, mailbox, createdAt: now });
}
