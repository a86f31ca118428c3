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

export const DeliveryListQuery = Strict({
  webhookId: Type.Optional(AnyId),
  pollId: Type.Optional(AnyId),
  status: Type.Optional(DeliveryStatus),
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  ...PageQuery,
});

export const DeliveryQuery = Strict({ deliveryId: AnyId });

export const Metadata = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { maxProperties: 100 });
