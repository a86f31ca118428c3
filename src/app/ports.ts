import type { Membership, Plan, Role } from '../domain/access.js';
import type { AccountDefaults } from '../domain/poll-defaults.js';
import type { Poll, PollBody } from '../domain/poll.js';
import type { Slide } from '../domain/slide.js';
import type { Batch, BatchRepo, DeliveryRepo, EndpointRepo, HttpSender, NewDelivery, Webhook, WebhookRepo } from './delivery-ports.js';
import type { AlertRepo, Mailer } from './alert-ports.js';

export interface Clock {
  now(): Date;
}

export type Page<T> = { data: T[]; hasNextPage: boolean; endCursor: string | null };
export type PageRequest = { startCursor?: string | undefined; limit: number };

export type Account = {
  id: string;
  name: string;
  plan: Plan;
  defaults: AccountDefaults;
  notificationRecipients: string[] | null;
  signingSecret: string | null;
  createdAt: Date;
  updatedAt: Date;
};

export interface AccountRepo {
  insert(a: Omit<Account, 'signingSecret' | 'defaults' | 'notificationRecipients'>): Promise<void>;
  get(id: string): Promise<Account | undefined>;
  count(): Promise<number>;
  setPlan(id: string, plan: Plan, now: Date): Promise<boolean>;
  setDefaults(id: string, defaults: AccountDefaults, recipients: string[] | null, now: Date): Promise<void>;
  setSigningSecret(id: string, secret: string, now: Date): Promise<void>;
  /** Row lock for the rest of the transaction. */
  lock(id: string): Promise<void>;
  /** Sets the secret only where none exists; true when this call set it. */
  setSigningSecretIfMissing(id: string, secret: string, now: Date): Promise<boolean>;
}

export type AccountMembership = Membership & { accountName: string };

export interface UserRepo {
  findByEmail(email: string): Promise<{ id: string; email: string } | undefined>;
  insert(u: { id: string; email: string; createdAt: Date }): Promise<void>;
  addMembership(m: { accountId: string; userId: string; role: Role; createdAt: Date }): Promise<void>;
  setRole(accountId: string, userId: string, role: Role): Promise<void>;
  membership(accountId: string, userId: string): Promise<Membership | undefined>;
  memberships(userId: string): Promise<AccountMembership[]>;
  ownerEmail(accountId: string): Promise<string | undefined>;
}

export interface KeyRepo {
  insert(k: { id: string; userId: string; keyHash: string; createdAt: Date }): Promise<void>;
  /** The user a live key belongs to. */
  findByHash(hash: string): Promise<{ keyId: string; userId: string } | undefined>;
}

export type PollRow = Omit<Poll, 'slides'>;

export type PollForSubmission = { poll: PollRow; slides: Slide[]; webhooks: Webhook[] };

export interface PollRepo {
  insert(p: PollRow): Promise<boolean>;
  get(id: string): Promise<PollRow | undefined>;
  update(id: string, fields: { title: string; isVisible: boolean; body: PollBody; updatedAt: Date }): Promise<void>;
  /** Row lock for the rest of the transaction. */
  lock(id: string): Promise<void>;
  /** Polls with their slides (in order) and webhooks, in one round trip: what submissions need. Unknown ids are left out. */
  getForSubmission(ids: string[]): Promise<PollForSubmission[]>;
  /** Deletes the poll and keeps its id as its account's for good (see ownerOfDeleted). */
  delete(id: string, accountId: string, at: Date): Promise<boolean>;
  /** The account a deleted poll id belonged to: such an id is never given to another account. */
  ownerOfDeleted(id: string): Promise<string | undefined>;
  listByAccount(accountId: string, page: PageRequest): Promise<Page<PollRow>>;
}

export interface SlideRepo {
  listByPoll(pollId: string): Promise<Slide[]>;
  get(id: string): Promise<Slide | undefined>;
  insert(s: Slide): Promise<void>;
  update(s: Slide): Promise<void>;
  delete(id: string): Promise<void>;
  /** Moves slides at or after idx one place down so a slide can be inserted there. */
  shiftFrom(pollId: string, idx: number): Promise<void>;
}

export type ParticipantRow = {
  id: string;
  /** Time-sorted internal key for paging. */
  seq: string;
  pollId: string;
  accountId: string;
  metadata: Record<string, unknown>;
  synthetic: boolean;
  complete: boolean;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

export type ResponseRow = {
  id: string;
  accountId: string;
  pollId: string;
  participantId: string;
  slideId: string;
  value: unknown;
  metadata: Record<string, unknown>;
  synthetic: boolean;
  createdAt: Date;
};

export type ResponseFilter = { pollId?: string; accountId?: string; createdAfter?: Date; createdBefore?: Date };

export interface ResponseRepo {
  insertParticipants(rows: ParticipantRow[]): Promise<void>;
  insertResponses(rows: ResponseRow[]): Promise<void>;
  getParticipant(pollId: string, id: string): Promise<ParticipantRow | undefined>;
  /** Many participants in one statement; unknown keys are left out. */
  participantsByKeys(keys: readonly { pollId: string; id: string }[]): Promise<ParticipantRow[]>;
  ofParticipant(pollId: string, participantId: string): Promise<ResponseRow[]>;
  byIds(ids: string[]): Promise<ResponseRow[]>;
  list(filter: ResponseFilter, page: PageRequest): Promise<Page<ResponseRow>>;
  listParticipants(filter: { pollId?: string; accountId?: string }, page: PageRequest): Promise<Page<ParticipantRow>>;
}

/** The writes of a group of submissions: two round trips, whatever the group's size. */
export interface SubmissionRepo {
  /**
   * Inserts the participants that do not exist and locks every one for this transaction; then
   * inserts their answers, except those of a participant already complete unless `reopens` (the
   * poll takes resubmissions). Returns the stored participant rows, in any order, and every
   * answer of those participants, the new ones included, in id order per participant. At most
   * one entry per (pollId, participant id).
   */
  lockAndAddAnswers(entries: { participant: ParticipantRow; responses: ResponseRow[]; reopens: boolean }[]): Promise<{ participants: ParticipantRow[]; answers: ResponseRow[] }>;
  /**
   * Stores participants' metadata, completion and updatedAt, adds answers to open batches
   * (opening those missing; at most one per webhook and participant), and inserts deliveries.
   * The last statement of its transaction: the commit goes out with it.
   */
  writeOutcome(o: { participants: ParticipantRow[]; batches: Batch[]; deliveries: NewDelivery[] }): Promise<void>;
}

export type ResearchRun = {
  id: string;
  pollId: string;
  accountId: string;
  participants: number;
  seed: number;
  responsesCreated: number;
  createdAt: Date;
};

export interface ResearchRepo {
  insert(r: ResearchRun): Promise<void>;
}

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
  alerts: AlertRepo;
  /** Runs fn with repositories bound to one transaction; commits when it resolves. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
}

/** Who is calling: resolved from the API key by the http layer. */
export type Caller = { userId: string; keyId: string };

export type DeliverySettings = {
  retryLadderMs: readonly number[];
  dnsRetryLadderMs: readonly number[];
  deliveryTimeoutMs: number;
  batchWindowMs: number;
  userAgent: string;
};

export type Deps = {
  store: Store;
  clock: Clock;
  urlPolicy: { allowPrivateTargets: boolean };
  delivery: DeliverySettings;
  /** Absent in processes that never send (CLI). */
  sender?: HttpSender;
  mailer?: Mailer;
  alerts?: { quietMs: number; reminderMs: number };
  /** Resolves a host name to its addresses (creation-time SSRF check); absent → names are checked at delivery only. */
  resolveHost?: (host: string) => Promise<string[]>;
};
