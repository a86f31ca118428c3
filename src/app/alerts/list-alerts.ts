import type { AlertEmail } from '../../domain/alert-email.js';
import { requireAccount } from '../access.js';
import type { Caller, Deps, Page, PageRequest } from '../ports/index.js';

export async function listAlerts(
  deps: Deps,
  caller: Caller,
  accountId: string,
  page: PageRequest,
): Promise<Page<AlertEmail>> {
  // An alert reports a webhook's failures and names its endpoint: webhook management, seen by the
  // roles that see the webhooks, their health and their deliveries.
  await requireAccount(deps.store, caller, accountId, 'manage_webhooks');
  return deps.store.alerts.list(accountId, page);
}
