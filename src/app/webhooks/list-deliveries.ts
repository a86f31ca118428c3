import { DomainError, notFound } from '../../domain/errors.js';
import { CREATED, checkWindow } from '../../domain/time-window.js';
import { inNamedAccount, requireAccount, requirePoll } from '../access.js';
import type { Delivery, DeliveryStatus } from '../../domain/delivery.js';
import type { Caller, Deps, Page, PageRequest } from '../ports/index.js';

export type DeliveryView = Omit<Delivery, 'body' | 'endpointId'>;

export const summary = ({ body: _b, endpointId: _e, ...rest }: Delivery): DeliveryView => rest;

export async function listDeliveries(
  deps: Deps,
  caller: Caller,
  filter: {
    webhookId?: string;
    pollId?: string;
    accountId?: string;
    statuses?: DeliveryStatus[];
    createdAfter?: Date;
    createdBefore?: Date;
  },
  page: PageRequest,
): Promise<Page<DeliveryView>> {
  checkWindow({ start: filter.createdAfter, end: filter.createdBefore }, CREATED);
  let accountId: string;
  if (filter.webhookId) {
    const w = await deps.store.webhooks.get(filter.webhookId);
    // A deleted webhook's log stays readable through its poll.
    // A webhook named beside another poll matches nothing: a 404, not an empty log.
    if (!w || (filter.pollId !== undefined && filter.pollId !== w.pollId)) throw notFound('webhook');
    accountId = (
      await requireAccount(deps.store, caller, w.accountId, 'manage_webhooks').catch((e: unknown) => {
        throw e instanceof DomainError && e.code === 'not_found' ? notFound('webhook') : e;
      })
    ).accountId;
  } else if (filter.pollId) {
    accountId = (await requirePoll(deps.store, caller, filter.pollId, 'manage_webhooks')).accountId;
  } else if (filter.accountId) {
    // The whole account's log.
    accountId = (await requireAccount(deps.store, caller, filter.accountId, 'manage_webhooks')).accountId;
  } else {
    throw new DomainError('validation_failed', 'give webhookId, pollId or accountId', [
      { path: 'query:/webhookId', message: 'webhookId, pollId or accountId is required' },
    ]);
  }
  inNamedAccount(filter.accountId, accountId, filter.webhookId ? 'webhook' : 'poll');
  const { accountId: _a, ...rest } = filter;
  const result = await deps.store.deliveries.list({ accountIds: [accountId], ...rest }, page, false);
  return { ...result, data: result.data.map(summary) };
}
