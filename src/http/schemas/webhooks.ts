import { Type } from '@sinclair/typebox';
import { AnyId, DateTime, HttpsUrl, Literals, PageQuery, Strict } from './common.js';

export const CreateWebhookBody = Strict({
  pollId: AnyId,
  url: HttpsUrl,
  deliveryRule: Literals('partial', 'complete'),
});

export const WebhookListQuery = Strict({ pollId: Type.Optional(AnyId), accountId: Type.Optional(AnyId), ...PageQuery });

export const DeleteWebhookQuery = Strict({ id: AnyId });

export const DeliveryStatus = Literals('pending', 'in_flight', 'delivered', 'rejected', 'given_up', 'cancelled');

const STATUS = '(pending|in_flight|delivered|rejected|given_up|cancelled)';

export const DeliveryListQuery = Strict({
  webhookId: Type.Optional(AnyId),
  pollId: Type.Optional(AnyId),
  accountId: Type.Optional(AnyId),
  status: Type.Optional(
    Type.String({
      pattern: `^${STATUS}(,${STATUS})*$`,
      maxLength: 200,
      description:
        'one status, or several separated by commas: pending, in_flight, delivered, rejected, given_up, cancelled',
    }),
  ),
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  ...PageQuery,
});

export const DeliveryQuery = Strict({ deliveryId: AnyId });

export const UpdateWebhookBody = Strict({
  webhookId: AnyId,
  url: Type.Optional(HttpsUrl),
  deliveryRule: Type.Optional(Literals('partial', 'complete')),
  paused: Type.Optional(Type.Boolean()),
});

export const ResendBody = Strict({ deliveryId: AnyId });

export const RecoverBody = Strict({
  webhookId: Type.Optional(AnyId),
  pollId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: 'the logic-triggered targets of this poll' }),
  ),
  since: DateTime,
  until: Type.Optional(DateTime),
});

export const TestEventBody = Strict({ webhookId: AnyId });

export const Metadata = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { maxProperties: 100 });
