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
  created_at: Time;
  updated_at: Time;
}

export interface UsersTable {
  id: string;
  email: string;
  created_at: Time;
}

export interface MembershipsTable {
  account_id: string;
  user_id: string;
  role: string;
  created_at: Time;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  key_hash: string;
  created_at: Time;
  revoked_at: Time | null;
}

export interface PollsTable {
  id: string;
  account_id: string;
  title: string;
  is_visible: boolean;
  body: Json<Record<string, unknown>>;
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
  poll_id: string;
  account_id: string;
  metadata: Json<Record<string, unknown>>;
  synthetic: boolean;
  complete: boolean;
  completed_at: Time | null;
  created_at: Time;
  updated_at: Time;
}

export interface ResponsesTable {
  id: string;
  account_id: string;
  poll_id: string;
  participant_id: string;
  slide_id: string;
  value: Json<unknown>;
  metadata: Json<Record<string, unknown>>;
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
}

export interface SchemaMigrationsTable {
  name: string;
  applied_at: Generated<Date>;
}

export interface DB {
  accounts: AccountsTable;
  users: UsersTable;
  memberships: MembershipsTable;
  api_keys: ApiKeysTable;
  polls: PollsTable;
  slides: SlidesTable;
  participants: ParticipantsTable;
  responses: ResponsesTable;
  research_runs: ResearchRunsTable;
  schema_migrations: SchemaMigrationsTable;
}
