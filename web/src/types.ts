// Shapes of the Canvass API answers the dashboard reads (DESIGN.md §2).

export type Role = 'owner' | 'admin' | 'billing_admin' | 'editor' | 'read_only';
export type Plan = 'free' | 'basic' | 'premium' | 'enterprise';

export type Membership = { accountId: string; accountName: string; role: Role; plan: Plan };

export type Page<T> = { data: T[]; hasNextPage: boolean; endCursor: string | null };

export type LanguageSettings = { defaultLanguage: string; languages: Record<string, { enabled: boolean; translations: Record<string, string> }> };

export type Poll = {
  id: string;
  accountId: string;
  title: string;
  isVisible: boolean;
  slides?: Slide[];
  settings: Record<string, unknown> & { isSynthetic?: boolean; anonymous?: boolean; apiOnly?: boolean };
  languageSettings: LanguageSettings | null;
  createdAt: string;
  updatedAt: string;
  [field: string]: unknown;
};

export const SLIDE_TYPES = [
  'question',
  'checkbox',
  'dropdown',
  'binary',
  'star-rating',
  'range',
  'short-answer',
  'long-answer',
  'email-capture',
  'phone-capture',
  'date',
  'file-upload',
  'legal-consent',
  'copy',
  'thank-you',
] as const;
export type SlideType = (typeof SLIDE_TYPES)[number];

export const LOGIC_OPS = ['equals', 'not-equals', 'contains', 'answered', 'gt', 'lt'] as const;
export type LogicOp = (typeof LOGIC_OPS)[number];

export type LogicAction = { type: 'continue' } | { type: 'skip-to'; slideId: string } | { type: 'end-survey' } | { type: 'trigger-webhook'; url: string };
export type LogicCondition = { op: LogicOp; value?: unknown };
export type LogicRule = { match: 'all' | 'any'; conditions: LogicCondition[]; action: LogicAction };

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

export type Health = { state: 'healthy' | 'alerted'; lastSuccessAt: string | null; lastGivenUpAt: string | null; alertEmailsSent: number };

export type Webhook = {
  id: string;
  accountId: string;
  pollId: string;
  url: string;
  deliveryRule: 'partial' | 'complete';
  legacySecret: string;
  createdAt: string;
  health: Health;
};

export const DELIVERY_STATUSES = ['pending', 'in_flight', 'delivered', 'rejected', 'given_up', 'cancelled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

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
};

export type Attempt = {
  number: number;
  sentAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseExcerpt: string | null;
};

export type DeliveryDetail = Delivery & { payload: unknown; attempts: Attempt[] };

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
