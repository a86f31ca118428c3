import type { AlertEmail } from '../../domain/alert-email.js';
import { requireAccount } from '../access.js';
import type { Caller, Deps, Page, PageRequest } from '../ports/index.js';

export async function listAlerts(
  deps: Deps,
  caller: Caller,
  accountId: string,
  page: PageRequest,
): Promise<Page<AlertEmail>> {
  await requireAccount(deps.store, caller, accountId, 'read');
  return deps.store.alerts.list(accountId, page);
}
