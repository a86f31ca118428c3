import type { Plan } from '../../domain/access.js';
import { notFound } from '../../domain/errors.js';
import type { Deps } from '../ports/index.js';

export async function setPlan(deps: Deps, accountId: string, plan: Plan) {
  if (!(await deps.store.accounts.setPlan(accountId, plan, deps.clock.now()))) throw notFound('account');
  return { accountId, plan };
}
