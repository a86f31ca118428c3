import type { EventType } from './payload.js';
import type { DeliverySource } from './webhook.js';

export type DeliveryStatus = 'pending' | 'in_flight' | 'delivered' | 'rejected' | 'given_up' | 'cancelled';

export type Delivery = {
  id: string;
  accountId: string;
  pollId: string;
  webhookId: string | null;
  endpointId: string;
  source: DeliverySource;
  url: string;
  participantId: string;
  type: EventType;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  body: string;
  createdAt: Date;
  finishedAt: Date | null;
};

export type NewDelivery = Omit<Delivery, 'status' | 'attemptCount' | 'finishedAt' | 'nextAttemptAt'> & {
  nextAttemptAt: Date;
};

/** A delivery leased to this worker for one attempt, with what signing needs right now. */
export type ClaimedDelivery = Pick<
  Delivery,
  'id' | 'accountId' | 'endpointId' | 'source' | 'url' | 'attemptCount' | 'body'
> & {
  leaseToken: string;
  signingSecret: string | null;
  legacySecret: string | null;
};

export type Attempt = {
  id: string;
  deliveryId: string;
  number: number;
  sentAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
};

export type Batch = {
  id: string;
  webhookId: string;
  endpointId: string;
  accountId: string;
  pollId: string;
  participantId: string;
  responseIds: string[];
  flushAt: Date;
  createdAt: Date;
};
