import type { Deps } from '../ports/index.js';
import { createAccount } from './create-account.js';

/** First start of an empty embedded database: a Default premium account to try things with. */
export async function seedDefaultAccount(deps: Deps) {
  if ((await deps.store.accounts.count()) > 0) return undefined;
  return createAccount(deps, { name: 'Default', ownerEmail: 'owner@localhost', plan: 'premium' });
}
