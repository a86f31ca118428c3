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
  createdAt: Date;
};
