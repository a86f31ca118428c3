import type { AttemptOutcome } from '../../domain/retry-policy.js';
import type { Page, PageRequest } from './common.js';
import type { Endpoint, Webhook } from '../../domain/webhook.js';
import type { ParticipantRow, ResponseRow } from '../../domain/response.js';
import type {
  Attempt,
  Batch,
  ClaimedDelivery,
  Delivery,
  DeliveryEvent,
  DeliveryStatus,
  NewDelivery,
} from '../../domain/delivery.js';

export type DeliveryFilter = {
  accountIds: string[];
  webhookId?: string;
  pollId?: string;
  /** Any of these statuses. */
  statuses?: DeliveryStatus[];
  createdAfter?: Date;
  createdBefore?: Date;
};

export interface WebhookRepo {
  insert(w: Webhook): Promise<void>;
  get(id: string): Promise<Webhook | undefined>;
  listByPoll(pollId: string): Promise<Webhook[]>;
  countByPoll(pollId: string): Promise<number>;
  list(filter: { pollId?: string; accountId?: string }, page: PageRequest): Promise<Page<Webhook>>;
  update(id: string, fields: Partial<Pick<Webhook, 'url' | 'deliveryRule' | 'pausedAt'>>): Promise<void>;
  /** Row lock for the rest of the transaction. */
  lock(id: string): Promise<void>;
  /** Whether it was there to delete (another delete may have taken it first). */
  delete(id: string): Promise<boolean>;
}

/** A logic-triggered endpoint as first made: its key (account, poll, source, slide, URL) and a new id. */
export type LogicEndpoint = Omit<
  Endpoint,
  | 'state'
  | 'lastSuccessAt'
  | 'lastGivenUpAt'
  | 'lastFailure'
  | 'alertEmailsSent'
  | 'lastAlertAt'
  | 'webhookId'
  | 'quietSince'
>;

export interface EndpointRepo {
  insert(e: Endpoint): Promise<void>;
  getMany(accountId: string, ids: string[]): Promise<Endpoint[]>;
  /**
   * The endpoints of logic-triggered URLs, made on first use: their ids, in the order asked.
   * One lookup for all of them, however many a group of submissions fires.
   */
  ensureLogic(es: readonly LogicEndpoint[]): Promise<string[]>;
  /**
   * A delivery to the endpoint given up on. With `url`, the one the attempt went to, only while
   * the endpoint still points there: a failure of its old URL says nothing of a new one.
   */
  recordGivenUp(id: string, at: Date, failure: string, url?: string): Promise<void>;
  delete(id: string): Promise<void>;
  /** Every endpoint of a poll, saved webhooks' and logic-triggered ones': they go with it. */
  deleteByPoll(accountId: string, pollId: string): Promise<void>;
  /** A saved webhook's endpoint at a new URL: its alert state starts afresh; its losses stay for a recover to resend. */
  moveTo(id: string, url: string, now: Date): Promise<void>;
  /** Its alert state starts afresh: the failures and losses so far are forgotten. */
  startAfresh(id: string, now: Date): Promise<void>;
  /** Quiet time for alerts counts from `now` at the earliest (a resumed webhook). */
  restartQuiet(id: string, now: Date): Promise<void>;
}

export interface RecoveryRepo {
  /**
   * Lists, for a new recover, the rejected and given-up deliveries that match; returns how many.
   * `webhookId` names a saved webhook; else `pollId` names the poll's logic-triggered targets.
   */
  create(
    r: { id: string; accountId: string; userId: string; createdAt: Date },
    match: { webhookId?: string; pollId?: string; since: Date; until?: Date },
  ): Promise<number>;
  /** Up to `limit` listed deliveries of any recover, locked (others skip them), and who asked. */
  claimItems(
    limit: number,
  ): Promise<{ recoveryId: string; deliveryId: string; accountId: string; userId: string | null }[]>;
  /** Removes listed deliveries; a recover with none left goes too. */
  removeItems(items: { recoveryId: string; deliveryId: string }[]): Promise<void>;
}

/** An account's signing secrets as an attempt signs with them now. */
export type AccountSecrets = { accountId: string; signingSecret: string | null; previousSecret: string | null };

export interface BatchRepo {
  /**
   * Locks due batches for this transaction; others skip them. Each with what its respondent's
   * stored answers hold as counted (null: not counted yet, or the respondent is gone).
   */
  claimDue(now: Date, limit: number): Promise<(Batch & { respondentBytes: number | null })[]>;
  /**
   * The batches' respondents and every answer of theirs (unknown ones left out), read together. With
   * `handoff`, also their accounts' signing secrets (previousSecret as a claim reads it) and
   * `handOver`: their webhooks whose deliveries may be handed to a runner, not paused and locked
   * against a pause or a new URL until the transaction ends, with their URL as read under that
   * lock (empty without `handoff`).
   */
  contentsOf(
    batches: readonly Batch[],
    handoff?: { secretsOverlapSince: Date },
  ): Promise<{
    participants: ParticipantRow[];
    responses: ResponseRow[];
    secrets: AccountSecrets[];
    handOver: { id: string; url: string }[];
  }>;
  /** Deletes the flushed batches and queues their deliveries; the transaction's last statement. */
  flush(ids: string[], deliveries: NewDelivery[]): Promise<void>;
  /** When the next batch's window ends, if any batch is open. */
  nextFlushAt(): Promise<Date | null>;
}

export type ResultRow = { attempt: Attempt; leaseToken: string; result: AttemptResult };

export type AttemptResult = {
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  finishedAt: Date | null;
  dnsFailure: boolean;
};

/**
 * What a claim passes over: accounts (by id), and hosts of accounts, each as its URL's host and
 * port, a space and the account id (src/worker/account-share.ts, hostKey).
 */
export type LeaveOut = {
  readonly accounts: readonly string[];
  readonly hosts: readonly string[];
  /** The claim reads only deliveries due at or after this (a window end, Claimed). */
  readonly after?: string;
};

/**
 * What a claim leased. A claim that leaves some out also tells, when its window was full (else
 * null), the due time up to which it tried every delivery it did not leave out: the window's
 * last, or the last of those it took should it have found more than it asked for. As ISO text
 * to the microsecond: the `after` of a claim that is to read past it.
 */
export type Claimed = ClaimedDelivery[] & { windowEnd?: string | null };

export interface DeliveryRepo {
  insert(rows: NewDelivery[]): Promise<void>;
  /**
   * `overlapSince`: a secret rotated after this still signs alongside the new one (previousSecret).
   * `exclude`: those accounts' and hosts' deliveries are left in the queue, due as they were.
   */
  claim(
    now: Date,
    limit: number,
    leaseUntil: Date,
    leaseToken: string,
    overlapSince: Date,
    exclude?: LeaveOut,
  ): Promise<Claimed>;
  /**
   * Records a batch of attempts in one statement: the attempt rows, each delivery's next state
   * (only where this worker still holds the lease), and a success on the endpoints of the
   * deliveries that succeeded. Returns the ids whose result was applied.
   */
  recordResults(items: ResultRow[], now: Date): Promise<Set<string>>;
  /** Those of `ids` that are test events (POST /webhooks/test). */
  testsAmong(ids: readonly string[]): Promise<Set<string>>;
  /** Those of `ids` cancelled, or gone with their poll (a deletion took them while leased). */
  cancelledAmong(ids: readonly string[]): Promise<Set<string>>;
  /** When the next pending (or leased) delivery falls due, if any: lets an idle worker sleep exactly that long. */
  nextDueAt(): Promise<Date | null>;
  /** Gives a leased delivery back (a stopping worker that could not finish it): due now. */
  release(id: string, leaseToken: string, now: Date): Promise<boolean>;
  /** Gives back leased deliveries that were never sent: due at `now`, their attempt not counted. */
  unclaim(ids: readonly string[], leaseToken: string, now: Date): Promise<void>;
  /**
   * Gives back every delivery still leased under `leaseToken` until `leaseUntil` (a claim whose
   * COMMIT's answer was lost), due at `now`, its attempt not counted; how many.
   */
  unclaimLease(leaseToken: string, leaseUntil: Date, now: Date): Promise<number>;
  cancel(filter: { webhookId?: string; pollId?: string }, now: Date): Promise<number>;
  /**
   * Cancels the queued deliveries of a poll's logic-triggered targets at these URLs (of `source`,
   * and of `slideId` for question logic), as `cancel` does a webhook's. Returns how many.
   */
  cancelLogic(
    target: {
      accountId: string;
      pollId: string;
      source: 'question-logic' | 'survey-logic';
      slideId: string | null;
      urls: readonly string[];
    },
    now: Date,
  ): Promise<number>;
  get(id: string): Promise<Delivery | undefined>;
  attempts(deliveryId: string): Promise<Attempt[]>;
  lastAttempt(deliveryId: string): Promise<Attempt | undefined>;
  /** The log, newest first; with `withBody` false each delivery's body is left unread (''). */
  list(filter: DeliveryFilter, page: PageRequest, withBody?: boolean): Promise<Page<Delivery>>;
  /** Puts leased deliveries of a paused webhook back, parked, their attempt not counted. */
  park(ids: string[], leaseToken: string, now: Date): Promise<void>;
  /** Cancels leased deliveries whose webhook is gone, their attempt not counted; returns how many. */
  cancelLeased(ids: string[], leaseToken: string, now: Date): Promise<number>;
  /** Parks a webhook's queued deliveries that no worker holds. */
  parkWebhook(webhookId: string): Promise<void>;
  /** Parks those of these queued deliveries, held by no worker, whose webhook is paused. */
  parkIfPaused(ids: string[]): Promise<void>;
  /** Makes a webhook's parked deliveries that no worker holds due from `now`, oldest first, a microsecond apart. */
  unparkWebhook(webhookId: string, now: Date): Promise<number>;
  /** Points a webhook's unfinished deliveries at a new URL (from their next attempt). */
  retarget(webhookId: string, url: string): Promise<number>;
  /**
   * Queues a finished (delivered, rejected or given up) delivery again, due at `now`, with its
   * attempt numbering continued and a fresh ladder. Returns the number its next attempt gets,
   * or undefined when it is not finished (or is cancelled). `failedOnly`: nor when it was
   * delivered (a recover, which listed it failed, and it has been resent and delivered since).
   */
  reopen(id: string, now: Date, failedOnly?: boolean): Promise<number | undefined>;
  /**
   * A poll made anonymous: its queued deliveries' bodies say `email: null, emails: []` from
   * their next attempt, the rest of their bytes unchanged. Returns how many changed.
   */
  withholdAddresses(pollId: string): Promise<number>;
  addEvents(events: DeliveryEvent[]): Promise<void>;
  /** A delivery's events, oldest first, with the email of the user who asked. */
  events(deliveryId: string): Promise<(DeliveryEvent & { userEmail: string | null })[]>;
  /** Deliveries of an endpoint given up or rejected since `since`; with `url`, only those sent to it. */
  countLost(endpointId: string, since: Date, url?: string): Promise<number>;
  purgeFinishedBefore(before: Date, limit: number): Promise<number>;
}

export type SendRequest = {
  url: string;
  body: string;
  /**
   * The request's headers; a function is called when the request is written, so that what it
   * stamps (an attempt's signature and send time) is the write's, however long it waited for a
   * connection to its origin.
   */
  headers: Record<string, string> | (() => Record<string, string>);
  timeoutMs: number;
};

export type SendResult = {
  outcome: AttemptOutcome;
  durationMs: number;
  excerpt: string | null;
  /**
   * Never written to the endpoint: every open connection to its origin stayed busy with other
   * attempts for the whole deadline. Not an attempt the endpoint failed: the delivery is given
   * back, its attempt number unused (its outcome reads as a timeout, should anything record it).
   */
  unsent?: true;
};

export interface HttpSender {
  send(req: SendRequest): Promise<SendResult>;
  /** Settles every attempt not yet written as unsent (a stopping worker gives them back at once). */
  giveBackQueued?(): void;
  close(): Promise<void>;
}
