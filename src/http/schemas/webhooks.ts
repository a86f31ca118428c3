import { Type } from '@sinclair/typebox';
import {
  AnyId,
  DateTime,
  FreeForm,
  HttpsUrl,
  Instant,
  Literals,
  Nullable,
  Outgoing,
  pageQuery,
  Strict,
  StringEnum,
} from './common.js';

export const CreateWebhookBody = Strict({
  pollId: AnyId,
  url: HttpsUrl,
  deliveryRule: Literals('partial', 'complete'),
});

export const WebhookListQuery = Strict({
  pollId: Type.Optional(AnyId),
  accountId: Type.Optional(AnyId),
  ...pageQuery('whk'),
});

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
  ...pageQuery('dlv'),
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

// ---- Answers ----------------------------------------------------------------------------------

const Health = Type.Object(
  {
    state: StringEnum(['healthy', 'alerted']),
    lastSuccessAt: Nullable(Instant),
    lastGivenUpAt: Nullable(Instant),
    alertEmailsSent: Type.Integer(),
  },
  { title: 'WebhookHealth', description: "the target's health: alerted once failure-alert emails have gone out" },
);

/** A saved webhook, with the health of its target. */
export const Webhook = Type.Object(
  {
    id: Type.String(),
    accountId: Type.String(),
    pollId: Type.String(),
    url: Type.String(),
    deliveryRule: StringEnum(['partial', 'complete']),
    legacySecret: Type.String({ description: 'sent as X-Service-Secret; verify the signature instead' }),
    createdAt: Instant,
    pausedAt: Nullable(Instant),
    paused: Type.Boolean({ description: 'a paused webhook holds its deliveries until it is resumed' }),
    health: Health,
  },
  { title: 'Webhook' },
);

export const WebhookDeleted = Type.Object(
  {
    id: Type.String(),
    deleted: Type.Literal(true),
    cancelledDeliveries: Type.Integer({
      description:
        'unfinished deliveries of the webhook that were cancelled: pending ones, and ones in flight, whose attempt may still reach the endpoint but decides nothing',
    }),
  },
  { title: 'WebhookDeleted' },
);

/** One event sent to one target, as the delivery log lists it. */
export const Delivery = Type.Object(
  {
    id: Type.String(),
    accountId: Type.String(),
    pollId: Type.String(),
    webhookId: Nullable(Type.String({ description: 'null for a logic-triggered delivery' })),
    source: StringEnum(['webhook', 'question-logic', 'survey-logic']),
    url: Type.String(),
    participantId: Type.String(),
    type: StringEnum(['submitted-responses', 'completed-survey']),
    status: Outgoing(DeliveryStatus),
    attemptCount: Type.Integer(),
    nextAttemptAt: Nullable(
      Instant,
      'when the next attempt is due; for one in_flight, when its worker’s hold runs out (without a recorded result, it is sent again from then); null once finished, or while held by a paused webhook',
    ),
    createdAt: Instant,
    finishedAt: Nullable(Instant),
    test: Type.Optional(
      Type.Boolean({
        description: 'made by a test event (POST /webhooks/test), not by a respondent; a resent one stays a test',
      }),
    ),
  },
  { title: 'Delivery' },
);

export const Attempt = Type.Object(
  {
    number: Type.Integer({ description: 'from 1' }),
    sentAt: Instant,
    statusCode: Nullable(Type.Integer({ description: "the target's HTTP status; null when none came" })),
    error: Nullable(Type.String()),
    durationMs: Type.Integer(),
    responseExcerpt: Nullable(Type.String({ description: "the first KiB of the target's answer, read as UTF-8" })),
  },
  { title: 'Attempt' },
);

const DeliveryEvent = Type.Object(
  {
    kind: StringEnum(['resend', 'recover', 'test']),
    attemptNumber: Type.Integer({ description: 'the attempt that followed it' }),
    by: Nullable(Type.String({ description: 'the email of the user who asked' })),
    at: Instant,
  },
  { title: 'DeliveryEvent' },
);

/** One delivery with the payload it sends and every attempt. */
export const DeliveryDetail = Type.Object(
  {
    ...Delivery.properties,
    payload: Type.Unsafe<unknown>(FreeForm('the body it sends, parsed: the webhook payload')),
    attempts: Type.Array(Attempt),
    events: Type.Array(DeliveryEvent, { description: 'what people did to it, oldest first' }),
    test: Type.Boolean({ description: 'made by a test event, not by a respondent' }),
  },
  { title: 'DeliveryDetail' },
);

/** A recover: the deliveries it listed are resent by the scheduler, each once. */
export const Recovery = Type.Object(
  {
    resent: Type.Integer({ description: 'the rejected and given-up deliveries listed for resending' }),
  },
  { title: 'Recovery' },
);
