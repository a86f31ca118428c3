import type { Endpoint } from '../../domain/webhook.js';
import type { Page, PageRequest } from './common.js';
import type { AlertEmail } from '../../domain/alert-email.js';

export type OutgoingMail = { to: string[]; subject: string; text: string; html: string };

/** The recipients a mail server refused while it took the message for the others. */
export type MailReceipt = { refused: { address: string; reason: string }[] };

export interface Mailer {
  /** Throws when nobody can be sent the email; some recipients refused are named in the receipt. */
  send(mail: OutgoingMail): Promise<MailReceipt>;
  close(): Promise<void>;
}

export interface AlertRepo {
  insert(a: AlertEmail): Promise<void>;
  list(accountId: string, page: PageRequest): Promise<Page<AlertEmail>>;
  /**
   * Endpoints that may be due an email: healthy ones quiet since before quietBefore with a
   * give-up, alerted ones last emailed before reminderBefore. Locked, skipping rows another
   * scheduler holds, and those on hold.
   */
  claimCandidates(now: Date, quietBefore: Date, reminderBefore: Date, limit: number): Promise<Endpoint[]>;
  /** Keeps other checks off an endpoint until `until` (an email being sent, or a failed send's pause). */
  hold(endpointId: string, until: Date | null): Promise<void>;
  /** The endpoint, locked for the rest of the transaction. */
  lockEndpoint(endpointId: string): Promise<Endpoint | undefined>;
  markAlerted(endpointId: string, sent: number, at: Date): Promise<void>;
}
