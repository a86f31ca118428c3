export type DeliveryRule = 'partial' | 'complete';

export type DeliverySource = 'webhook' | 'question-logic' | 'survey-logic';

export type Webhook = {
  id: string;
  accountId: string;
  pollId: string;
  url: string;
  deliveryRule: DeliveryRule;
  legacySecret: string;
  createdAt: Date;
  /** When it was paused; null while it delivers. */
  pausedAt: Date | null;
};

export type Endpoint = {
  id: string;
  accountId: string;
  pollId: string;
  webhookId: string | null;
  source: DeliverySource;
  slideId: string | null;
  url: string;
  state: 'healthy' | 'alerted';
  lastSuccessAt: Date | null;
  lastGivenUpAt: Date | null;
  lastFailure: string | null;
  alertEmailsSent: number;
  lastAlertAt: Date | null;
  /** Quiet time for alerts counts from here at the earliest (resumed, or its URL changed). */
  quietSince: Date | null;
  createdAt: Date;
};
