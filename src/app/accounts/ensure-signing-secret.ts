import { hasWebhookAction, type Action } from '../../domain/logic.js';
import { newSigningSecret } from '../../domain/signature.js';
import type { Store } from '../ports/index.js';

/**
 * Creates the account's signing secret if it has none; returns it only when created here, so
 * it is shown exactly once, in the answer to the save that created it. Saved webhooks create
 * it; so does the first saved Trigger webhook action, or a logic-only account could never
 * verify its deliveries.
 */
export async function ensureSigningSecret(store: Store, accountId: string, now: Date): Promise<string | undefined> {
  const secret = newSigningSecret();
  return (await store.accounts.setSigningSecretIfMissing(accountId, secret, now)) ? secret : undefined;
}

export async function secretForLogic(
  store: Store,
  accountId: string,
  rules: readonly { action: Action }[],
  now: Date,
): Promise<string | undefined> {
  return hasWebhookAction(rules) ? ensureSigningSecret(store, accountId, now) : undefined;
}
