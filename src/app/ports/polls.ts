import type { Poll, PollBody } from '../../domain/poll.js';
import type { Slide } from '../../domain/slide.js';
import type { Webhook } from '../../domain/webhook.js';
import type { Page, PageRequest } from './common.js';

export type PollRow = Omit<Poll, 'slides'>;

/** A poll as a submission reads it: without its translations, which no submission or payload uses. */
export type SubmittedPoll = Omit<PollRow, 'languageSettings'>;
export type PollForSubmission = { poll: SubmittedPoll; slides: Slide[]; webhooks: Webhook[] };

export interface PollRepo {
  /**
   * Inserts unless the id is taken; pollsInAccount is the account's count of polls with it
   * (kept by a trigger, migration 015). Call it in a transaction: the poll must roll back with
   * a refusal over the quota, and the count's row lock queues the account's other creates until
   * it ends.
   */
  insert(p: PollRow): Promise<{ inserted: boolean; pollsInAccount: number }>;
  get(id: string): Promise<PollRow | undefined>;
  update(id: string, fields: { title: string; isVisible: boolean; body: PollBody; updatedAt: Date }): Promise<void>;
  /** Row lock for the rest of the transaction. */
  lock(id: string): Promise<void>;
  /**
   * A weaker row lock: it queues research runs (and writes of the poll) but not the inserts of
   * rows that refer to it, whose foreign-key checks a full row lock would hold up. False when
   * the poll is gone (deleted since it was read).
   */
  lockForResearch(id: string): Promise<boolean>;
  /**
   * Polls with their slides (in order) and webhooks, in one round trip: what submissions need,
   * less the translations (`languageSettings` is left out). Unknown ids are left out.
   */
  /** With `keyShare`, under a key share lock on each poll (a submission's read). */
  getForSubmission(ids: string[], keyShare?: boolean): Promise<PollForSubmission[]>;
  /** Which of these polls are anonymous (settings.anonymous), read without the rest of them. */
  anonymousAmong(ids: readonly string[]): Promise<Set<string>>;
  /** Deletes the poll and keeps its id as its account's for good (see ownerOfDeleted). */
  delete(id: string, accountId: string, at: Date): Promise<boolean>;
  /** The account a deleted poll id belonged to: such an id is never given to another account. */
  ownerOfDeleted(id: string): Promise<string | undefined>;
  /**
   * A page of the account's polls, ending early (with hasNextPage) before the polls whose
   * stored bodies would pass `maxBytes` together; the first is always listed.
   */
  listByAccount(accountId: string, page: PageRequest, maxBytes: number): Promise<Page<PollRow>>;
}

export interface SlideRepo {
  listByPoll(pollId: string): Promise<Slide[]>;
  get(id: string): Promise<Slide | undefined>;
  insert(s: Slide): Promise<void>;
  update(s: Slide): Promise<void>;
  delete(id: string): Promise<void>;
  /** Moves slides at or after idx one place down so a slide can be inserted there. */
  shiftFrom(pollId: string, idx: number): Promise<void>;
}
