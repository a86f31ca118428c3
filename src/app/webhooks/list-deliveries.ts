import { DomainError, notFound } from '../../domain/errors.js';
import { requireAccount, requirePoll } from '../access.js';
import type { Delivery, DeliveryStatus } from '../../domain/delivery.js';
import type { Caller, Deps, Page, PageRequest } from '../ports/index.js';

export type DeliveryView = Omit<Delivery, 'body' | 'endpointId'>;

export const summary = ({ body: _b, endpointId: _e, ...rest }: Delivery): DeliveryView => rest;

export async function listDeliveries(
  deps: Deps,
  caller: Caller,
  filter: { webhookId?: string; pollId?: string; status?: DeliveryStatus; createdAfter?: Date; createdBefore?: Date },
  page: PageRequest,
): Promise<Page<DeliveryView>> {
  let accountId: string;
  if (filter.webhookId) {
    const w = await deps.store.webhooks.get(filter.webhookId);
    // A deleted webhook's log stays readable through its poll.
    if (!w) throw notFound('webhook');
    accountId = (
      await requireAccount(deps.store, caller, w.accountId, 'manage_webhooks').catch((e: unknown) => {
        throw e instanceof DomainError && e.code === 'not_found' ? notFound('webhook') : e;
      })
    ).accountId;
  } else if (filter.pollId) {
    accountId = (await requirePoll(deps.store, caller, filter.pollId, 'manage_webhooks')).accountId;
  } else {
    throw new DomainError('validation_failed', 'give webhookId or pollId', [
      { path: 'query:/webhookId', message: 'webhookId or pollId is required' },
    ]);
  }
  const result = await deps.store.deliveries.list({ accountIds: [accountId], ...filter }, page);
  return { ...result, data: result.data.map(summary) };
}
