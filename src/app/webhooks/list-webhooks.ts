import { DomainError } from '../../domain/errors.js';
import { inNamedAccount, requireAccount, requirePoll } from '../access.js';
import type { Caller, Deps, Page, PageRequest } from '../ports/index.js';
import { type WebhookView, view } from './webhook-view.js';

export async function listWebhooks(
  deps: Deps,
  caller: Caller,
  filter: { pollId?: string; accountId?: string },
  page: PageRequest,
): Promise<Page<WebhookView>> {
  let accountId: string;
  if (filter.pollId) {
    accountId = (await requirePoll(deps.store, caller, filter.pollId, 'manage_webhooks')).accountId;
    inNamedAccount(filter.accountId, accountId, 'poll');
  } else if (filter.accountId)
    accountId = (await requireAccount(deps.store, caller, filter.accountId, 'manage_webhooks')).accountId;
  else
    throw new DomainError('validation_failed', 'give pollId or accountId', [
      { path: 'query:/pollId', message: 'pollId or accountId is required' },
    ]);
  const result = await deps.store.webhooks.list(filter, page);
  const endpoints = await deps.store.endpoints.getMany(
    accountId,
    result.data.map((w) => w.id),
  );
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  return { ...result, data: result.data.map((w) => view(w, byId.get(w.id))) };
}
