import type { Batch, NewDelivery } from '../../domain/delivery.js';
import type { Page, PageRequest } from './common.js';
import type { ParticipantRow, ResponseRow } from '../../domain/response.js';
import type { ResearchRun } from '../../domain/research.js';

export type ResponseFilter = { pollId?: string; accountId?: string; createdAfter?: Date; createdBefore?: Date };

export interface ResponseRepo {
  insertParticipants(rows: ParticipantRow[]): Promise<void>;
  insertResponses(rows: ResponseRow[]): Promise<void>;
  getParticipant(pollId: string, id: string): Promise<ParticipantRow | undefined>;
  ofParticipant(pollId: string, participantId: string): Promise<ResponseRow[]>;
  list(filter: ResponseFilter, page: PageRequest): Promise<Page<ResponseRow>>;
  listParticipants(filter: { pollId?: string; accountId?: string }, page: PageRequest): Promise<Page<ParticipantRow>>;
  /**
   * A page as listParticipants gives it, each participant with what their stored answers hold
   * as counted by submissions (answer_bytes; null: not counted yet).
   */
  listParticipantsWithBytes(
    filter: { pollId?: string; accountId?: string },
    page: PageRequest,
  ): Promise<Page<{ participant: ParticipantRow; storedBytes: number | null }>>;
  /** How many answers each respondent has stored, in the order given. */
  answerCounts(respondents: readonly { pollId: string; participantId: string }[]): Promise<number[]>;
  /** The answers of several respondents in one read, in id order. */
  ofParticipants(respondents: readonly { pollId: string; participantId: string }[]): Promise<ResponseRow[]>;
}

/** The writes of a group of submissions: two round trips, whatever the group's size. */
/** A transaction that wrote, as the database knows it: its id and the server process running it. */
export type WriteTransaction = { id: string; backendPid: number };

export interface SubmissionRepo {
  /**
   * Inserts the participants that do not exist and locks every one for this transaction; then
   * inserts their answers, except those of a participant already complete unless `reopens` (the
   * poll takes resubmissions) or its row was inserted here (its seq is the entry's), and those
   * of a participant whose stored answers and these would together pass `maxAnswers`, or whose
   * stored answers' bytes (as counted by earlier submissions) and these `bytes` would pass
   * `maxBytes` (an inserted participant's count is its entry's `bytes`). Returns the
   * stored participant rows, in any order, with their stored answer_bytes at the same index (a
   * stored row's count before this submission, an inserted row's its own; null: not counted yet), and every answer of those participants, the new
   * ones included, in id order per participant. At most one entry per (pollId, participant id).
   * Also the transaction (null when there were no entries), for commitOutcome.
   */
  lockAndAddAnswers(
    entries: { participant: ParticipantRow; responses: ResponseRow[]; reopens: boolean; bytes: number }[],
    limits: { maxAnswers: number; maxBytes: number },
  ): Promise<{
    participants: ParticipantRow[];
    answerBytes: (number | null)[];
    answers: ResponseRow[];
    transaction: WriteTransaction | null;
  }>;
  /**
   * Stores participants' metadata, completion, updatedAt and answerBytes (when set), adds answers to open batches
   * (opening those missing; at most one per webhook and participant), and inserts deliveries.
   * The last statement of its transaction: the commit goes out with it.
   */
  writeOutcome(o: { participants: ParticipantRow[]; batches: Batch[]; deliveries: NewDelivery[] }): Promise<void>;
  /**
   * Whether a transaction whose COMMIT lost its connection committed, as the database says once
   * it no longer runs. One still running after `settleMs` is ended (its client is gone); not
   * learned by `waitMs`, 'unknown'.
   */
  commitOutcome(
    transaction: WriteTransaction,
    opts: { settleMs: number; waitMs: number },
  ): Promise<'committed' | 'aborted' | 'unknown'>;
}

export interface ResearchRepo {
  insert(r: ResearchRun, idempotencyKey?: string): Promise<void>;
  /** The poll's run made with this idempotency key, if any. */
  byIdempotencyKey(pollId: string, key: string): Promise<ResearchRun | undefined>;
  /** The synthetic participants the poll's research runs made, in all. */
  participantsOf(pollId: string): Promise<number>;
}
