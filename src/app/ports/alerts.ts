import type { Endpoint } from '../../domain/webhook.js';
import type { Page, PageRequest } from './common.js';
import type { AlertEmail } from '../../domain/alert-email.js';

export type OutgoingMail = { to: string[]; subject: string; text: string; html: string };

/**
 * The recipients a mail server refused while it took the message for the others; `temporary`
 * when its reply asked to try again later (4xx).
 */
export type MailReceipt = { refused: { address: string; reason: string; temporary: boolean }[] };

export interface Mailer {
  /**
   * Sends to the recipients the mail server takes and names the others, each with its reply
   * (every one of them, when it takes none); throws when the email could not be sent at all.
   */
  send(mail: OutgoingMail): Promise<MailReceipt>;
  close(): Promise<void>;
}

/** An alert email sent whose mail server asked to be tried again later for some recipients. */
export type DeferredAlert = {
  id: string;
  accountId: string;
  endpointId: string;
  /** Those still to be sent it. */
  recipients: string[];
  /** How many times it was tried for them so far. */
  tries: number;
  subject: string;
  text: string;
  html: string;
};

export interface AlertRepo {
  /** Keeps an email sent; `deferred`, recipients to send it again at `until`. */
  insert(a: AlertEmail, deferred?: { recipients: string[]; until: Date }): Promise<void>;
  /**
   * Emails whose deferred recipients are due by `now`, each held until `holdUntil` so that no
   * other scheduler sends them meanwhile (skipping those another holds).
   */
  claimDeferred(now: Date, holdUntil: Date, limit: number): Promise<DeferredAlert[]>;
  /** Moves the email's hold on to `until` while it is still held until `heldUntil` (by this send); false if not. */
  renewDeferred(id: string, heldUntil: Date, until: Date): Promise<boolean>;
  /**
   * After a try: `accepted` join the email's recipients; `deferred`, if any, are due again at
   * `until`. Only while the email is still held until `heldUntil` (claimed by this try); false
   * when another scheduler has claimed it since.
   */
  settleDeferred(
    id: string,
    heldUntil: Date,
    outcome: { accepted: string[]; deferred: string[]; until: Date | null; tries: number },
  ): Promise<boolean>;
  list(accountId: string, page: PageRequest): Promise<Page<AlertEmail>>;
  /**
   * Endpoints that may be due an email: healthy ones quiet since before quietBefore with a
   * give-up, alerted ones last emailed before reminderBefore. Locked, skipping rows another
   * scheduler holds, and those on hold.
   */
  claimCandidates(now: Date, quietBefore: Date, reminderBefore: Date, limit: number): Promise<Endpoint[]>;
  /** Takes an address off the recipients the account's emails are still to be sent again. */
  dropDeferredRecipient(accountId: string, address: string, now: Date): Promise<void>;
  /** Keeps other checks off an endpoint until `until` (an email being sent, or a failed send's pause). */
  hold(endpointId: string, until: Date | null): Promise<void>;
  /** The endpoint, locked for the rest of the transaction. */
  lockEndpoint(endpointId: string): Promise<Endpoint | undefined>;
  markAlerted(endpointId: string, sent: number, at: Date): Promise<void>;
}
