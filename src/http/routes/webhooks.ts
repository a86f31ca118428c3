import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../app/ports/index.js';
import { getDelivery } from '../../app/webhooks/get-delivery.js';
import { listDeliveries } from '../../app/webhooks/list-deliveries.js';
import { createWebhook } from '../../app/webhooks/create-webhook.js';
import { deleteWebhook } from '../../app/webhooks/delete-webhook.js';
import { listWebhooks } from '../../app/webhooks/list-webhooks.js';
import { callerOf } from '../auth.js';
import { queryInstant } from '../validation.js';
import {
  CreateWebhookBody,
  DeleteWebhookQuery,
  DeliveryListQuery,
  DeliveryQuery,
  WebhookListQuery,
} from '../schemas/webhooks.js';

const tags = ['webhooks'];

export const webhookRoutes =
  (deps: Deps): FastifyPluginAsync =>
  async (root) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/webhooks',
      { schema: { tags, summary: 'List webhooks of a poll or an account', querystring: WebhookListQuery } },
      async (req) => {
        const { startCursor, limit, ...filter } = req.query;
        return listWebhooks(deps, callerOf(req), filter, { startCursor, limit });
      },
    );
    app.post(
      '/webhooks',
      {
        schema: {
          tags,
          summary: 'Create a webhook; the first one of an account also returns its signing secret, once',
          body: CreateWebhookBody,
        },
      },
      async (req, reply) => {
        const { webhook, signingSecret } = await createWebhook(deps, callerOf(req), req.body);
        return reply.status(201).send({ data: webhook, ...(signingSecret ? { signingSecret } : {}) });
      },
    );
    app.delete(
      '/webhooks',
      {
        schema: {
          tags,
          summary: 'Delete a webhook and cancel its pending deliveries',
          querystring: DeleteWebhookQuery,
        },
      },
      async (req) => ({
        data: await deleteWebhook(deps, callerOf(req), req.query.id),
      }),
    );
    app.get(
      '/webhooks/deliveries',
      {
        schema: { tags, summary: 'Delivery log of a webhook or a poll, newest first', querystring: DeliveryListQuery },
      },
      async (req) => {
        const { startCursor, limit, createdAfter, createdBefore, ...filter } = req.query;
        const times = {
          createdAfter: queryInstant(createdAfter, 'createdAfter'),
          createdBefore: queryInstant(createdBefore, 'createdBefore'),
        };
        return listDeliveries(deps, callerOf(req), { ...filter, ...times }, { startCursor, limit });
      },
    );
    app.get(
      '/webhooks/delivery',
      { schema: { tags, summary: 'One delivery with its payload and every attempt', querystring: DeliveryQuery } },
      async (req) => ({
        data: await getDelivery(deps, callerOf(req), req.query.deliveryId),
      }),
    );
  };
