import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../app/ports/index.js';
import { getDelivery } from '../../app/webhooks/get-delivery.js';
import { listDeliveries } from '../../app/webhooks/list-deliveries.js';
import { createWebhook } from '../../app/webhooks/create-webhook.js';
import { deleteWebhook } from '../../app/webhooks/delete-webhook.js';
import { listWebhooks } from '../../app/webhooks/list-webhooks.js';
import { recoverDeliveries } from '../../app/webhooks/recover-deliveries.js';
import { resendDelivery } from '../../app/webhooks/resend-delivery.js';
import { sendTestEvent } from '../../app/webhooks/send-test-event.js';
import { updateWebhook } from '../../app/webhooks/update-webhook.js';
import type { DeliveryStatus } from '../../domain/delivery.js';
import { callerOf } from '../auth.js';
import { bodyBound, queryEnd, queryInstant } from '../validation.js';
import { Answers, Data, DataWithSecret, Page } from '../schemas/common.js';
import {
  CreateWebhookBody,
  DeleteWebhookQuery,
  Delivery,
  DeliveryDetail,
  DeliveryListQuery,
  DeliveryQuery,
  RecoverBody,
  Recovery,
  ResendBody,
  TestEventBody,
  UpdateWebhookBody,
  Webhook,
  WebhookDeleted,
  WebhookListQuery,
} from '../schemas/webhooks.js';

const tags = ['webhooks'];

export const webhookRoutes =
  (deps: Deps): FastifyPluginAsync =>
  async (root) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/webhooks',
      {
        schema: {
          tags,
          summary: 'List webhooks of a poll or an account',
          querystring: WebhookListQuery,
          response: Answers({ 200: Page(Webhook) }),
        },
      },
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
          response: Answers({ 201: DataWithSecret(Webhook) }),
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
          response: Answers({ 200: Data(WebhookDeleted) }),
        },
      },
      async (req) => ({
        data: await deleteWebhook(deps, callerOf(req), req.query.id),
      }),
    );
    app.get(
      '/webhooks/deliveries',
      {
        schema: {
          tags,
          summary: 'Delivery log of a webhook, a poll or an account, newest first',
          querystring: DeliveryListQuery,
          response: Answers({ 200: Page(Delivery) }),
        },
      },
      async (req) => {
        const { startCursor, limit, createdAfter, createdBefore, status, ...filter } = req.query;
        const times = {
          createdAfter: queryInstant(createdAfter, 'createdAfter'),
          createdBefore: queryEnd(createdBefore, 'createdBefore'),
        };
        const statuses = status ? ([...new Set(status.split(','))] as DeliveryStatus[]) : undefined;
        return listDeliveries(deps, callerOf(req), { ...filter, ...times, statuses }, { startCursor, limit });
      },
    );
    app.get(
      '/webhooks/delivery',
      {
        schema: {
          tags,
          summary: 'One delivery with its payload and every attempt',
          querystring: DeliveryQuery,
          response: Answers({ 200: Data(DeliveryDetail) }),
        },
      },
      async (req) => ({
        data: await getDelivery(deps, callerOf(req), req.query.deliveryId),
      }),
    );
    app.post(
      '/webhooks/update',
      {
        schema: {
          tags,
          summary: 'Change a webhook: URL (pending retries follow it), delivery rule, or pause and resume',
          body: UpdateWebhookBody,
          response: Answers({ 200: Data(Webhook) }),
        },
      },
      async (req) => ({ data: await updateWebhook(deps, callerOf(req), req.body) }),
    );
    app.post(
      '/webhooks/delivery/resend',
      {
        schema: {
          tags,
          summary: 'Send a finished delivery again: same id and body, next attempt number, a fresh retry ladder',
          body: ResendBody,
          response: Answers({ 202: Data(Delivery) }),
        },
      },
      async (req, reply) =>
        reply.status(202).send({ data: await resendDelivery(deps, callerOf(req), req.body.deliveryId) }),
    );
    app.post(
      '/webhooks/recover',
      {
        schema: {
          tags,
          summary:
            'Resend every rejected or given-up delivery of a webhook (or of a poll’s logic targets) made in a time window',
          body: RecoverBody,
          response: Answers({ 202: Data(Recovery) }),
        },
      },
      async (req, reply) => {
        const { since, until, ...target } = req.body;
        const window = { since: bodyBound(since, 'since')!, until: bodyBound(until, 'until') };
        return reply.status(202).send({ data: await recoverDeliveries(deps, callerOf(req), { ...target, ...window }) });
      },
    );
    app.post(
      '/webhooks/test',
      {
        schema: {
          tags,
          summary: 'Send a signed test event (a made-up respondent, metadata.test) to a webhook',
          body: TestEventBody,
          response: Answers({ 202: Data(Delivery) }),
        },
      },
      async (req, reply) =>
        reply.status(202).send({ data: await sendTestEvent(deps, callerOf(req), req.body.webhookId) }),
    );
  };
