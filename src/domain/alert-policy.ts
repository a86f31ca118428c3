import { humanDuration } from './duration.js';

/** When an endpoint's failure alerts are emailed, as a pure function of its health (decideAlert states the rule). */

export const MAX_ALERT_EMAILS = 3;

export type EndpointHealth = {
  state: 'healthy' | 'alerted';
  createdAt: Date;
  lastSuccessAt: Date | null;
  lastGivenUpAt: Date | null;
  alertEmailsSent: number;
  lastAlertAt: Date | null;
  /** Quiet time counts from here at the earliest (the webhook was resumed, or its URL changed). */
  quietSince?: Date | null;
};

export type AlertWindows = { quietMs: number; reminderMs: number };

export type AlertDecision = { send: 'first' | 'reminder' } | { send: null };

/**
 * healthy → alerted: no success for a full quiet period and at least one delivery given up on
 * since the last success. alerted → alerted: a reminder each reminder period, three emails at
 * most, and never within a quiet period of a resume, so that the deliveries a resume lets go
 * are tried before anyone is told again. (A success resets the endpoint to healthy when it is
 * recorded, not here.)
 */
export function decideAlert(h: EndpointHealth, now: Date, w: AlertWindows): AlertDecision {
  const t = now.getTime();
  if (h.state === 'alerted') {
    if (h.alertEmailsSent >= MAX_ALERT_EMAILS || !h.lastAlertAt) return { send: null };
    if (h.quietSince && t - h.quietSince.getTime() < w.quietMs) return { send: null };
    return t - h.lastAlertAt.getTime() >= w.reminderMs ? { send: 'reminder' } : { send: null };
  }
  if (!h.lastGivenUpAt) return { send: null };
  if (h.lastSuccessAt && h.lastSuccessAt >= h.lastGivenUpAt) return { send: null };
  return t - quietSince(h).getTime() >= w.quietMs ? { send: 'first' } : { send: null };
}

/** Since when a healthy endpoint has been quiet: its last success (or creation), or a later restart of the count. */
export function quietSince(h: Pick<EndpointHealth, 'lastSuccessAt' | 'createdAt' | 'quietSince'>): Date {
  const since = h.lastSuccessAt ?? h.createdAt;
  return h.quietSince && h.quietSince > since ? h.quietSince : since;
}

/** The usual reasons an endpoint fails, with what to do; the timeout is the one deliveries are given. */
export function commonCauses(deliveryTimeoutMs: number): readonly { cause: string; fix: string }[] {
  return [
    {
      cause: '404 Not Found',
      fix: 'the route is gone, or the URL was a test-only URL: point the webhook at the live route',
    },
    {
      cause: '401 Unauthorized or 403 Forbidden',
      fix: 'the endpoint rejects the request: it must not demand a bearer token or API key; verify the X-Service-Signature header instead',
    },
    {
      cause: '410 Gone',
      fix: 'the hosted hook (automation platform) was deleted or expired: create a new one and update the URL',
    },
    {
      cause: 'timeouts',
      fix: `the endpoint must answer 2xx within ${humanDuration(deliveryTimeoutMs)}: acknowledge at once and do slow work afterwards`,
    },
  ];
}
