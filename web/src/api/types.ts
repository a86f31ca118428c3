// The Canvass API as the dashboard sees it. Routes, query parameters, request bodies, answers
// and every type they contain come from ./schema.d.ts, generated from GET /openapi.json
// (`npm run gen:web-types`), so a change to the route schemas fails the dashboard's type check.
// The answers are the routes' response schemas, which are also what the server writes:
// a field they do not declare never reaches the dashboard.

import type { components, paths } from './schema';

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

/** The statuses an operation succeeds with. */
type Success = 200 | 201 | 202;

/** The JSON an operation answers when it succeeds (a route with a 200 and a 201 answers the same). */
export type AnswerOf<M extends Method, P extends PathOf<M>> = {
  [S in keyof Operation<M, P>['responses'] & Success]: Operation<M, P>['responses'][S] extends {
    content: { 'application/json': infer A };
  }
    ? A
    : never;
}[keyof Operation<M, P>['responses'] & Success];

/** The routes with an operation for `M` that answers JSON (not the CSV export). */
export type JsonPathOf<M extends Method> = {
  [P in PathOf<M>]: [AnswerOf<M, P>] extends [never] ? never : P;
}[PathOf<M>];

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
// GET /webhooks/deliveries takes status= as a comma list (a plain string): the answers name the statuses.
export type DeliveryStatus = Delivery['status'];

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

// The answers' named types: components.schemas of the generated document (each answer schema
// with a title is written there once).
type Schemas = components['schemas'];

export type Problem = Schemas['Problem'];
export type FieldError = NonNullable<Problem['errors']>[number];

export type Membership = Schemas['Membership'];
export type Role = Membership['role'];
export type Plan = Membership['plan'];
export type AccountSettings = Schemas['AccountSettings'];
/** A key as GET /keys lists it: its first characters, never the key. */
export type ApiKey = Schemas['ApiKey'];

/** A poll with its slides (GET /poll, and every call that saves one). */
export type Poll = Schemas['Poll'];
/** A poll as GET /polls lists it: without its slides. */
export type PollItem = Schemas['PollItem'];
export type Slide = Schemas['Slide'];
export type Translations = Schemas['Translations'];

export type ResponseRow = Schemas['ResponseRow'];

export type Webhook = Schemas['Webhook'];
export type Health = Schemas['WebhookHealth'];
export type Delivery = Schemas['Delivery'];
export type DeliveryDetail = Schemas['DeliveryDetail'];
export type Attempt = Schemas['Attempt'];
export type DeliveryEvent = Schemas['DeliveryEvent'];

export type AlertEmail = Schemas['AlertEmail'];
