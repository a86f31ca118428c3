// The Canvass API as the dashboard sees it. Routes, query parameters, request bodies and every
// type they contain come from ./schema.d.ts, generated from GET /openapi.json
// (`npm run gen:web-types`), so a change to the route schemas fails the dashboard's type check.
// The routes declare no response schemas yet: the answers below are written by hand, built
// from the generated request types wherever a field is one the API also accepts.

import type { paths } from './schema';

export type Method = 'get' | 'post' | 'patch' | 'delete';

/** The routes with an operation for `M`. */
export type PathOf<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];

type Operation<M extends Method, P extends PathOf<M>> = paths[P][M] & { responses: unknown };

/** The JSON body an operation takes. */
export type BodyOf<M extends Method, P extends PathOf<M>> =
  Operation<M, P> extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** The query parameters an operation takes. */
export type QueryOf<M extends Method, P extends PathOf<M>> =
  Operation<M, P> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type CreatePollBody = BodyOf<'post', '/poll'>;
export type CommitBody = BodyOf<'post', '/commit'>;
export type CreateSlideBody = BodyOf<'post', '/slide'>;
export type CreateWebhookBody = BodyOf<'post', '/webhooks'>;

export type PollSettings = NonNullable<CreatePollBody['settings']>;
export type LanguageSettings = NonNullable<CreatePollBody['languageSettings']>;
export type SlideType = CreateSlideBody['type'];
export type LogicRule = NonNullable<CreateSlideBody['logic']>[number];
export type LogicCondition = LogicRule['conditions'][number];
export type LogicOp = LogicCondition['op'];
export type LogicAction = LogicRule['action'];
export type DeliveryRule = CreateWebhookBody['deliveryRule'];
// GET /webhooks/deliveries takes status= as a comma list (a plain string in the schema): no route names the statuses.
export type DeliveryStatus = 'pending' | 'in_flight' | 'delivered' | 'rejected' | 'given_up' | 'cancelled';

/** Every member of a string union, in the order written: a missing or unknown one does not compile. */
const members = <T extends string>(all: Record<T, true>): T[] => Object.keys(all) as T[];

export const SLIDE_TYPES = members<SlideType>({
  question: true,
  checkbox: true,
  dropdown: true,
  binary: true,
  'star-rating': true,
  range: true,
  'short-answer': true,
  'long-answer': true,
  'email-capture': true,
  'phone-capture': true,
  date: true,
  'file-upload': true,
  'legal-consent': true,
  copy: true,
  'thank-you': true,
});

export const LOGIC_OPS = members<LogicOp>({
  equals: true,
  'not-equals': true,
  contains: true,
  answered: true,
  gt: true,
  lt: true,
});

export const DELIVERY_STATUSES = members<DeliveryStatus>({
  pending: true,
  in_flight: true,
  delivered: true,
  rejected: true,
  given_up: true,
  cancelled: true,
});

// No response schema for GET /accounts yet: roles and plans appear in no request either.
export type Role = 'owner' | 'admin' | 'billing_admin' | 'editor' | 'read_only';
// No response schema for GET /accounts yet.
export type Plan = 'free' | 'basic' | 'premium' | 'enterprise';
// No response schema for GET /accounts yet.
export type Membership = { accountId: string; accountName: string; role: Role; plan: Plan };

// No response schema for the list routes yet (GET /polls, /responses, /webhooks, /webhooks/deliveries, /alerts).
export type Page<T> = { data: T[]; hasNextPage: boolean; endCursor: string | null };

// No response schema for GET /poll, POST /poll, /commit, /poll/update yet.
export type Poll = {
  id: string;
  accountId: string;
  title: string;
  isVisible: boolean;
  slides?: Slide[];
  settings: PollSettings & Record<string, unknown>;
  languageSettings: LanguageSettings | null;
  createdAt: string;
  updatedAt: string;
  [field: string]: unknown;
};

// No response schema for GET /slides, POST /slide yet.
export type Slide = {
  id: string;
  pollId: string;
  idx: number;
  type: SlideType;
  title: string;
  subtitle: string | null;
  answers: { id: string; title: string }[];
  multi: boolean;
  logic: LogicRule[] | null;
};

// No response schema for GET /poll/translations, POST /poll/translations/update yet.
export type PollTranslations = { translations: Record<string, string> };

// No response schema for GET /responses yet.
export type ResponseRow = {
  id: string;
  pollId: string;
  participantId: string;
  slideId: string;
  value: unknown;
  metadata: Record<string, unknown>;
  synthetic: boolean;
  createdAt: string;
};

// No response schema for GET /webhooks yet.
export type Health = {
  state: 'healthy' | 'alerted';
  lastSuccessAt: string | null;
  lastGivenUpAt: string | null;
  alertEmailsSent: number;
};

// No response schema for GET /webhooks, POST /webhooks yet.
export type Webhook = {
  id: string;
  accountId: string;
  pollId: string;
  url: string;
  deliveryRule: DeliveryRule;
  legacySecret: string;
  paused: boolean;
  pausedAt: string | null;
  createdAt: string;
  health: Health;
};

// No response schema for GET /webhooks/deliveries yet.
export type Delivery = {
  id: string;
  pollId: string;
  webhookId: string | null;
  source: 'webhook' | 'question-logic' | 'survey-logic';
  url: string;
  participantId: string;
  type: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  createdAt: string;
  finishedAt: string | null;
  /** Made by a test event, not by a respondent. */
  test?: boolean;
};

// No response schema for GET /webhooks/delivery yet.
export type Attempt = {
  number: number;
  sentAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
};

// No response schema for GET /webhooks/delivery yet.
export type DeliveryEvent = {
  kind: 'resend' | 'recover' | 'test';
  /** The attempt that followed it. */
  attemptNumber: number;
  by: string | null;
  at: string;
};

// No response schema for GET /webhooks/delivery yet.
export type DeliveryDetail = Delivery & {
  payload: unknown;
  attempts: Attempt[];
  events: DeliveryEvent[];
  test: boolean;
};

// No response schema for GET /alerts yet.
export type AlertEmail = {
  id: string;
  webhookId: string | null;
  pollId: string;
  kind: 'first' | 'reminder';
  sequence: number;
  recipients: string[];
  subject: string;
  text: string;
  html: string;
  details: {
    endpoint: string;
    survey: { id: string; title: string };
    question: { id: string; title: string } | null;
    trigger: string;
    configuredIn: string;
    whatWentWrong: string;
    responsesLostPastWeek: number;
  };
  sentAt: string;
};

// No response schema for DELETE /poll, /slide, /webhooks yet.
export type Deleted = { id: string; deleted: true; cancelledDeliveries?: number };

// No response schema for any route yet: what each route the dashboard calls answers.
export type Answers = {
  get: {
    '/accounts': { data: Membership[] };
    '/polls': Page<Poll>;
    '/poll': { data: Poll };
    '/slides': { data: Slide[] };
    '/poll/translations': { data: PollTranslations };
    '/responses': Page<ResponseRow>;
    '/webhooks': Page<Webhook>;
    '/webhooks/deliveries': Page<Delivery>;
    '/webhooks/delivery': { data: DeliveryDetail };
    '/alerts': Page<AlertEmail>;
  };
  post: {
    '/poll': { data: Poll };
    '/commit': { data: Poll };
    '/poll/update': { data: Poll };
    '/slide': { data: Slide };
    '/webhooks': { data: Webhook };
    '/poll/translations/update': { data: PollTranslations };
    '/webhooks/update': { data: Webhook };
    '/webhooks/delivery/resend': { data: Delivery };
    '/webhooks/recover': { data: { resent: number } };
    '/webhooks/test': { data: Delivery };
  };
  patch: Record<never, never>;
  delete: {
    '/poll': { data: Deleted };
    '/slide': { data: Deleted };
    '/webhooks': { data: Deleted & { cancelledDeliveries: number } };
  };
};
