import type { ColumnType, Generated } from 'kysely';

/** jsonb: read as the parsed value, written as JSON text (pg would turn JS arrays into SQL arrays). */
export type Json<T> = ColumnType<T, string, string>;
type Time = ColumnType<Date, Date, Date>;

export interface AccountsTable {
  id: string;
  name: string;
  plan: string;
  defaults: Json<Record<string, Record<string, unknown>>>;
  notification_recipients: Json<string[] | null> | null;
  signing_secret: string | null;
  previous_signing_secret: string | null;
  signing_secret_rotated_at: Time | null;
  created_at: Time;
  updated_at: Time;
}

/** An account's polls, kept by the polls repository's insert and delete (migration 015). */
export interface AccountUsageTable {
  account_id: string;
  polls: number;
}

export interface UsersTable {
  id: string;
  email: string;
  /** The address's mailbox key (migration 028): null for a user stored before it (unless lower-case ASCII) or by a process on older code. */
  mailbox: string | null;
  created_at: Time;
}

export interface MembershipsTable {
  account_id: string;
  user_id: string;
  role: string;
  created_at: Time;
}

export interface ApiKeyWithdrawalsTable {
  key_id: string;
  account_id: string;
  withdrawn_at: Time;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  key_hash: string;
  created_at: Time;
  revoked_at: Time | null;
  prefix: string | null;
  last_used_at: Time | null;
  account_id: string | null;
  created_by: string | null;
  created_with: string | null;
}

export interface PollsTable {
  id: string;
  account_id: string;
  title: string;
  is_visible: boolean;
  body: Json<Record<string, unknown>>;
  /** octet_length(body::text), kept by a trigger (counted as listed where null). */
  body_bytes: Generated<number | null>;
  created_at: Time;
  updated_at: Time;
}

export interface SlidesTable {
  id: string;
  poll_id: string;
  account_id: string;
  idx: number;
  type: string;
  title: string;
  subtitle: string | null;
  answers: Json<unknown[]>;
  multi: boolean;
  logic: Json<unknown[]>;
  created_at: Time;
  updated_at: Time;
}

export interface ParticipantsTable {
  id: string;
  seq: string;
  poll_id: string;
  account_id: string;
  metadata: Json<Record<string, unknown>>;
  synthetic: boolean;
  complete: boolean;
  completed_at: Time | null;
  created_at: Time;
  updated_at: Time;
  /** What the stored answers hold as JSON (migration 019); null: not counted yet. */
  answer_bytes: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface ResponsesTable {
  id: string;
  account_id: string;
  poll_id: string;
  participant_id: string;
  slide_id: string;
  value: Json<unknown>;
  metadata: Json<Record<string, unknown>>;
  /** The answer of the same submission that holds its metadata (this row's is then {}); null: its own. */
  metadata_from: string | null;
  synthetic: boolean;
  created_at: Time;
}

export interface ResearchRunsTable {
  id: string;
  poll_id: string;
  account_id: string;
  participants: number;
  seed: number;
  responses_created: number;
  created_at: Time;
  idempotency_key: string | null;
}

export interface WebhooksTable {
  id: string;
  account_id: string;
  poll_id: string;
  url: string;
  delivery_rule: string;
  legacy_secret: string;
  created_at: Time;
  paused_at: Time | null;
}

export interface EndpointsTable {
  id: string;
  account_id: string;
  poll_id: string;
  webhook_id: string | null;
  source: string;
  slide_id: string | null;
  url: string;
  state: Generated<string>;
  last_success_at: Time | null;
  last_given_up_at: Time | null;
  last_failure: string | null;
  alert_emails_sent: Generated<number>;
  last_alert_at: Time | null;
  alert_hold_until: Time | null;
  quiet_since: Time | null;
  losses_counted_since: Time | null;
  created_at: Time;
}

export interface BatchesTable {
  id: string;
  webhook_id: string;
  endpoint_id: string;
  account_id: string;
  poll_id: string;
  participant_id: string;
  response_ids: Json<string[]>;
  flush_at: Time;
  created_at: Time;
}

export interface DeliveriesTable {
  id: string;
  account_id: string;
  poll_id: string;
  webhook_id: string | null;
  endpoint_id: string;
  source: string;
  url: string;
  participant_id: string;
  type: string;
  status: string;
  /** Copied from the queue row when the delivery finishes. */
  attempt_count: Generated<number>;
  dns_failures: Generated<number>;
  body: string;
  created_at: Time;
  finished_at: Time | null;
}

export interface DeliveryQueueTable {
  delivery_id: string;
  next_attempt_at: Time;
  lease_token: string | null;
  attempt_count: Generated<number>;
  dns_failures: Generated<number>;
  ladder_base: Generated<number>;
}

export interface DeliveryEventsTable {
  id: string;
  delivery_id: string;
  account_id: string;
  kind: string;
  user_id: string | null;
  attempt_number: number;
  created_at: Time;
}

export interface RecoveriesTable {
  id: string;
  account_id: string;
  user_id: string | null;
  created_at: Time;
}

export interface RecoveryItemsTable {
  recovery_id: string;
  delivery_id: string;
}

export interface LostDeliveriesTable {
  delivery_id: string;
  endpoint_id: string;
  lost_at: Time;
}

export interface AttemptsTable {
  id: string;
  delivery_id: string;
  number: number;
  sent_at: Time;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_excerpt: string | null;
}

export interface AlertEmailsTable {
  id: string;
  account_id: string;
  endpoint_id: string;
  webhook_id: string | null;
  poll_id: string;
  kind: string;
  sequence: number;
  recipients: Json<string[]>;
  subject: string;
  text_body: string;
  html_body: string;
  details: Json<Record<string, unknown>>;
  sent_at: Time;
  deferred_recipients: Json<string[]> | null;
  deferred_until: Time | null;
  deferred_tries: Generated<number>;
}

export interface DeletedPollsTable {
  id: string;
  account_id: string;
  deleted_at: Time;
}

export interface SchemaMigrationsTable {
  name: string;
  applied_at: Generated<Date>;
}

export interface DB {
  accounts: AccountsTable;
  account_usage: AccountUsageTable;
  users: UsersTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  api_key_withdrawals: ApiKeyWithdrawalsTable;
  polls: PollsTable;
  deleted_polls: DeletedPollsTable;
  slides: SlidesTable;
  participants: ParticipantsTable;
  responses: ResponsesTable;
  research_runs: ResearchRunsTable;
  webhooks: WebhooksTable;
  endpoints: EndpointsTable;
  batches: BatchesTable;
  deliveries: DeliveriesTable;
  delivery_queue: DeliveryQueueTable;
  delivery_events: DeliveryEventsTable;
  recoveries: RecoveriesTable;
  recovery_items: RecoveryItemsTable;
  lost_deliveries: LostDeliveriesTable;
  attempts: AttemptsTable;
  alert_emails: AlertEmailsTable;
  schema_migrations: SchemaMigrationsTable;
}
