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

const Metadata = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown(), { maxProperties: 100 });

export const SubmitBody = Strict({
  pollId: AnyId,
  participantId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  answers: Type.Array(Strict({ slideId: AnyId, value: Type.Unknown() }), { maxItems: 200 }),
  metadata: Type.Optional(Metadata),
  participantMetadata: Type.Optional(Metadata),
  complete: Type.Optional(Type.Boolean()),
});

export const ResponsesQuery = Strict({
  pollId: Type.Optional(AnyId),
  accountId: Type.Optional(AnyId),
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  ...PageQuery,
});
export const ScopeQuery = Strict({ pollId: Type.Optional(AnyId), accountId: Type.Optional(AnyId), ...PageQuery });
export const PollPageQuery = Strict({ pollId: AnyId, ...PageQuery });
export const PollQuery = Strict({ pollId: AnyId });
