import type { Decision } from '../../domain/retry-policy.js';
import type { AlertEmail } from '../../domain/alert-email.js';

/**
 * What an attempt came to, as counted: the next step its result set for the delivery, or, for
 * one that decides nothing (its attempt is logged), `cancelled` when a deletion cancelled the
 * delivery while the attempt was out, `lease_lost` when another worker had taken it over.
 */
export type AttemptOutcomeLabel = Decision['next'] | 'cancelled' | 'lease_lost';

export type AttemptTally = Record<AttemptOutcomeLabel, number>;

/** An alert email as counted: its kind, or `deferred` for a send to recipients deferred before. */
export type AlertEmailLabel = AlertEmail['kind'] | 'deferred';

/**
 * What the processes count for operators. The worker and the HTTP layer report here from what
 * use cases return; no use case reports itself. One instance per process (main.ts builds it).
 */
export interface Metrics {
  /** One recorded batch of attempts: how many came to each outcome, and each one's duration. */
  attemptsRecorded(tally: Readonly<AttemptTally>, durationsMs: readonly number[]): void;
  /** A failure alert email sent and recorded; `deferred`: sent again to recipients the mail server deferred. */
  alertEmailSent(kind: AlertEmailLabel): void;
  /** An attempt never written and given back: its origin's connections all busy for a deadline. */
  attemptGivenBack(): void;
  /** An attempt that could not be prepared (its account's first signing secret not made), given back uncounted. */
  attemptUnprepared(): void;
  /** The workers last counted on this database (this one included), and this worker's connections per endpoint origin. */
  endpointConnectionsShared(workers: number, perOrigin: number): void;
  submissionAccepted(): void;
  /** `route` is the route's pattern (`/polls/:id`), never the URL asked for. */
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  /** The text a scrape gets, with its content type. */
  exposition(): Promise<{ contentType: string; body: string }>;
}
