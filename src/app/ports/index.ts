export type * from './common.js';
export type * from './accounts.js';
export type * from './polls.js';
export type * from './responses.js';
export type * from './delivery.js';
export type * from './alerts.js';

// What a use case is given: the store, the clock and the outside world, gathered here so that
// the port files below import only common.ts and domain/, never each other.
import type { AlertRepo, Mailer } from './alerts.js';
import type { BatchRepo, DeliveryRepo, EndpointRepo, HttpSender, RecoveryRepo, WebhookRepo } from './delivery.js';
import type { Clock } from './common.js';
import type { AccountRepo, KeyRepo, UserRepo } from './accounts.js';
import type { PollRepo, SlideRepo } from './polls.js';
import type { ResearchRepo, ResponseRepo, SubmissionRepo } from './responses.js';
import type { Quotas } from '../../domain/quotas.js';

export interface Store {
  accounts: AccountRepo;
  users: UserRepo;
  keys: KeyRepo;
  polls: PollRepo;
  slides: SlideRepo;
  responses: ResponseRepo;
  submissions: SubmissionRepo;
  research: ResearchRepo;
  webhooks: WebhookRepo;
  endpoints: EndpointRepo;
  batches: BatchRepo;
  deliveries: DeliveryRepo;
  recoveries: RecoveryRepo;
  alerts: AlertRepo;
  /** Runs fn with repositories bound to one transaction; commits when it resolves. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
}

/**
 * Who is calling, resolved from the API key by the http layer: the key's user; the one account
 * the key is limited to, if any (otherwise it opens every account of the user); and the
 * accounts it was withdrawn from.
 */
export type Caller = { userId: string; keyId: string; accountId?: string | null; withdrawnFrom?: readonly string[] };

export type DeliverySettings = {
  retryLadderMs: readonly number[];
  dnsRetryLadderMs: readonly number[];
  deliveryTimeoutMs: number;
  batchWindowMs: number;
  userAgent: string;
  /** After a rotation, attempts are also signed with the old secret for this long (0: not at all). */
  secretOverlapMs: number;
};

export type Deps = {
  store: Store;
  clock: Clock;
  urlPolicy: { allowPrivateTargets: boolean };
  delivery: DeliverySettings;
  /** What one account may hold; absent → DEFAULT_QUOTAS. */
  quotas?: Quotas;
  /** Absent in processes that never send (CLI). */
  sender?: HttpSender;
  mailer?: Mailer;
  alerts?: { quietMs: number; reminderMs: number };
  /** Resolves a host name to its addresses (creation-time SSRF check); absent → names are checked at delivery only. */
  resolveHost?: (host: string) => Promise<string[]>;
};
