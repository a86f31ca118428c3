import type { AttemptOutcome } from '../../domain/retry-policy.js';
import type { Page, PageRequest } from './index.js';
import type { Endpoint, Webhook } from '../../domain/webhook.js';
import type { Attempt, Batch, ClaimedDelivery, Delivery, DeliveryStatus, NewDelivery } from '../../domain/delivery.js';

export type DeliveryFilter = {
  accountIds: string[];
  webhookId?: string;
  pollId?: string;
  status?: DeliveryStatus;
  createdAfter?: Date;
  createdBefore?: Date;
};

export interface WebhookRepo {
  insert(w: Webhook): Promise<void>;
  get(id: string): Promise<Webhook | undefined>;
  listByPoll(pollId: string): Promise<Webhook[]>;
  countByPoll(pollId: string): Promise<number>;
  list(filter: { pollId?: string; accountId?: string }, page: PageRequest): Promise<Page<Webhook>>;
  delete(id: string): Promise<void>;
}

export interface EndpointRepo {
  insert(e: Endpoint): Promise<void>;
  getMany(accountId: string, ids: string[]): Promise<Endpoint[]>;
  /** The endpoint of a logic-triggered URL, made on first use. */
  ensureLogic(
    e: Omit<
      Endpoint,
      'state' | 'lastSuccessAt' | 'lastGivenUpAt' | 'lastFailure' | 'alertEmailsSent' | 'lastAlertAt' | 'webhookId'
    >,
  ): Promise<string>;
  recordGivenUp(id: string, at: Date, failure: string): Promise<void>;
  delete(id: string): Promise<void>;
  /** Every endpoint of a poll, saved webhooks' and logic-triggered ones': they go with it. */
  deleteByPoll(accountId: string, pollId: string): Promise<void>;
}

export interface BatchRepo {
  /** Locks due batches for this transaction; others skip them. */
  claimDue(now: Date, limit: number): Promise<Batch[]>;
  delete(ids: string[]): Promise<void>;
}

export type ResultRow = { attempt: Attempt; leaseToken: string; result: AttemptResult };

export type AttemptResult = {
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  finishedAt: Date | null;
  dnsFailure: boolean;
};

export interface DeliveryRepo {
  insert(rows: NewDelivery[]): Promise<void>;
  claim(now: Date, limit: number, leaseUntil: Date, leaseToken: string): Promise<ClaimedDelivery[]>;
  /**
   * Records a batch of attempts in one statement: the attempt rows, each delivery's next state
   * (only where this worker still holds the lease), and a success on the endpoints of the
   * deliveries that succeeded. Returns the ids whose result was applied.
   */
  recordResults(items: ResultRow[], now: Date): Promise<Set<string>>;
  /** When the next pending (or leased) delivery falls due, if any: lets an idle worker sleep exactly that long. */
  nextDueAt(): Promise<Date | null>;
  /** Gives a leased delivery back (a stopping worker that could not finish it): due now. */
  release(id: string, leaseToken: string, now: Date): Promise<boolean>;
  cancel(filter: { webhookId?: string; pollId?: string }, now: Date): Promise<number>;
  get(id: string): Promise<Delivery | undefined>;
  attempts(deliveryId: string): Promise<Attempt[]>;
  lastAttempt(deliveryId: string): Promise<Attempt | undefined>;
  list(filter: DeliveryFilter, page: PageRequest): Promise<Page<Delivery>>;
  /** Deliveries given up or rejected for an endpoint since a time (alerts: responses lost). */
  countLost(endpointId: string, since: Date): Promise<number>;
  purgeFinishedBefore(before: Date, limit: number): Promise<number>;
}

export type SendRequest = { url: string; body: string; headers: Record<string, string>; timeoutMs: number };

export type SendResult = { outcome: AttemptOutcome; durationMs: number; excerpt: string | null };

export interface HttpSender {
  send(req: SendRequest): Promise<SendResult>;
  close(): Promise<void>;
}
