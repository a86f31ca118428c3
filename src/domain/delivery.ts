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
  /** Made by a test event, not by a respondent. */
  test?: boolean;
};

export type NewDelivery = Omit<Delivery, 'status' | 'attemptCount' | 'finishedAt' | 'nextAttemptAt'> & {
  nextAttemptAt: Date;
  /**
   * Queued already leased for its first attempt (the batch flush hands it to its own runner):
   * nextAttemptAt is then the lease's end, when it falls due again if no result came.
   */
  leaseToken?: string;
};

/** A delivery leased to this worker for one attempt, with what signing needs right now. */
export type ClaimedDelivery = Pick<
  Delivery,
  'id' | 'accountId' | 'endpointId' | 'source' | 'url' | 'attemptCount' | 'body'
> & {
  leaseToken: string;
  signingSecret: string | null;
  /** The secret a rotation replaced, while its overlap lasts: attempts are signed with both. */
  previousSecret: string | null;
  legacySecret: string | null;
  /** Attempts made before its current retry ladder began (a resend starts a fresh one). */
  ladderBase: number;
  /** Its webhook is paused: it goes back to the queue, parked, without an attempt. */
  paused: boolean;
  /** Its webhook was deleted after it was queued: it is cancelled, without an attempt. */
  webhookGone: boolean;
  /**
   * Its webhook's URL changed after it was queued with the old one, the change's retarget not
   * seeing it: `url` is the webhook's, and the retarget is to run again to match.
   */
  urlMoved?: boolean;
};

/** What a person did to a delivery, shown in its log: the attempt that followed, and who asked. */
export type DeliveryEvent = {
  id: string;
  deliveryId: string;
  accountId: string;
  kind: 'resend' | 'recover' | 'test';
  userId: string | null;
  attemptNumber: number;
  createdAt: Date;
};

/** The queue's due time of a parked delivery (its webhook is paused): later than anything real. */
export const PARKED_UNTIL = new Date('9999-12-31T00:00:00.000Z');

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
