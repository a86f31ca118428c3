import {
  answersCapped,
  checkAnswerValue,
  checkMergedMetadata,
  checkSubmissionLimits,
  MAX_ANSWERS_PER_RESPONDENT,
  MAX_RESPONDENT_BYTES,
  respondentBytesCapped,
  storedBytes,
} from '../../domain/answer.js';
import { DomainError, invalid, notFound } from '../../domain/errors.js';
import { newId, newRandomId } from '../../domain/ids.js';
import { closedBySchedule } from '../../domain/schedule.js';
import { NON_ANSWERABLE } from '../../domain/slide.js';
import type { Batch, NewDelivery } from '../../domain/delivery.js';
import type { EventBodies } from '../delivery/new-delivery.js';
import { forWebhooks } from './webhook-deliveries.js';
import { logicDeliveries, logicEndpoint, planLogic } from './plan-logic.js';
import { membershipOf } from '../access.js';
import { authorize } from '../../domain/access.js';
import type { Caller, Deps, PollForSubmission, Store } from '../ports/index.js';
import type { WriteTransaction } from '../ports/responses.js';
import { CommitOutcomeUnknownError, CommitRolledBackError } from '../ports/commit-outcome-unknown.js';
import type { ParticipantRow, ResponseRow } from '../../domain/response.js';

export type SubmitInput = {
  pollId: string;
  participantId?: string;
  answers: { slideId: string; value: unknown }[];
  metadata?: Record<string, unknown>;
  participantMetadata?: Record<string, unknown>;
  complete?: boolean;
};

export type SubmitResult = {
  participantId: string;
  responseIds: string[];
  complete: boolean;
  nextSlideId: string | null;
  ended: boolean;
};

export type Submission = { caller: Caller | null; input: SubmitInput };
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** One submission on its way through a group. */
type Work = PollForSubmission & {
  at: number;
  input: SubmitInput;
  participant: ParticipantRow;
  responses: ResponseRow[];
  all: ResponseRow[];
  newlyComplete: boolean;
  /** This submission inserted the participant row, complete already if its own answers complete it. */
  inserted: boolean;
  /** What its answers add to the respondent's stored bytes (MAX_RESPONDENT_BYTES). */
  bytes: number;
};

/** One respondent of one poll, as a map key. */
export const respondentKey = (pollId: string, participantId: string) => `${pollId}\u0000${participantId}`;

/** Answers by respondent (respondentKey), each respondent's in the order given. */
export function byRespondent(answers: readonly ResponseRow[]): Map<string, ResponseRow[]> {
  const out = new Map<string, ResponseRow[]>();
  for (const r of answers) {
    const k = respondentKey(r.pollId, r.participantId);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

/**
 * Stores respondents' answers and, in the same transaction, everything their webhooks need
 * (open batches, deliveries). An answer is acknowledged only after that commits, so nothing
 * a respondent was told is saved can be lost to a crash.
 *
 * Several submissions share the transaction and each statement (group commit): the cost of a
 * round trip is paid once per group, not once per respondent. A submission refused for its
 * own reasons (unknown poll, bad answer, already complete) is refused alone, because every
 * such check runs before it writes anything: its participant upsert, when the row existed,
 * changed nothing. The caller keeps one submission per respondent in a group.
 */
export async function submitGroup(
  deps: Deps,
  subs: readonly Submission[],
  outcome: OutcomeWait = OUTCOME,
  // Called when the group starts to wait for a lost COMMIT's outcome.
  onWaiting: () => void = () => {},
): Promise<Settled<SubmitResult>[]> {
  const out: Settled<SubmitResult>[] = new Array(subs.length);
  const now = deps.clock.now();
  const written: Written = { transaction: null };
  await writeGroup(deps, subs, out, now, written).catch((err: unknown) =>
    settleUnknown(deps, out, written.transaction, outcome, err, onWaiting),
  );
  return out;
}

/**
 * A group whose COMMIT lost its connection lets its transaction finish on the server for up to
 * 1 s (a COMMIT may be on its way), then ends it, and learns the outcome within 10 s at most.
 */
const OUTCOME: OutcomeWait = { settleMs: 1_000, waitMs: 10_000 };

export type OutcomeWait = { settleMs: number; waitMs: number };

type Written = { transaction: WriteTransaction | null };

/**
 * The connection was lost with the group's COMMIT: the database says whether it committed, once
 * the transaction no longer runs there. Committed, every submission stands as written; rolled
 * back, nothing was stored, and the queue writes them again. Not learned (the database
 * unreachable), each accepted submission fails with the outcome unknown and is not written
 * again; a refused one keeps its refusal.
 */
async function settleUnknown(
  deps: Deps,
  out: Settled<SubmitResult>[],
  transaction: WriteTransaction | null,
  wait: OutcomeWait,
  err: unknown,
  onWaiting: () => void,
): Promise<void> {
  if (!(err instanceof CommitOutcomeUnknownError)) throw err;
  // Nothing was written (every submission refused): the refusals stand, whatever the COMMIT did.
  if (transaction === null) return;
  onWaiting();
  const outcome = await deps.store.submissions.commitOutcome(transaction, wait).catch(() => 'unknown' as const);
  if (outcome === 'committed') return;
  if (outcome === 'aborted') throw new CommitRolledBackError(err.cause);
  out.forEach((s, i) => void (s.ok && (out[i] = { ok: false, error: err })));
}

async function writeGroup(
  deps: Deps,
  subs: readonly Submission[],
  out: Settled<SubmitResult>[],
  now: Date,
  written: Written,
) {
  await deps.store.transaction(async (store) => {
    const polls = new Map(
      (await store.polls.getForSubmission([...new Set(subs.map((s) => s.input.pollId))], true)).map((p) => [
        p.poll.id,
        p,
      ]),
    );
    let work: Work[] = [];
    for (const [at, sub] of subs.entries()) {
      try {
        const loaded = await checkSubmission(store, polls.get(sub.input.pollId), sub, now);
        const made = fresh(loaded, sub.input, now);
        // Its answers as they will be stored: each value, and the submission's metadata once.
        const bytes = storedBytes(made.responses);
        if (bytes > MAX_RESPONDENT_BYTES) throw respondentBytesCapped(bytes, null);
        work.push({ ...loaded, at, input: sub.input, bytes, ...made });
      } catch (e) {
        refuse(out, at, e);
      }
    }

    // Inserted if new, locked either way: concurrent submissions of one respondent queue here.
    // The answers are added after the lock, so the listing sees what a concurrent submission of
    // the same respondent committed while this one waited; a refused respondent's are not added.
    const { participants, answerBytes, answers, transaction } = await store.submissions.lockAndAddAnswers(
      work.map((w) => ({
        participant: w.participant,
        responses: w.responses,
        reopens: reopens(w.poll),
        bytes: w.bytes,
      })),
      { maxAnswers: MAX_ANSWERS_PER_RESPONDENT, maxBytes: MAX_RESPONDENT_BYTES },
    );
    written.transaction = transaction;
    const stored = new Map(participants.map((p) => [respondentKey(p.pollId, p.id), p]));
    const counted = new Map(participants.map((p, i) => [respondentKey(p.pollId, p.id), answerBytes[i] ?? null]));
    work = work.filter((w) => {
      try {
        const row = stored.get(respondentKey(w.poll.id, w.participant.id))!;
        // seq is made afresh for every submission and unique: the row holds ours only if we inserted it.
        w.inserted = row.seq === w.participant.seq;
        w.participant = merged(w, row, now);
        return true;
      } catch (e) {
        refuse(out, w.at, e);
        return false;
      }
    });

    const byParticipant = byRespondent(answers);
    work = work.filter((w) => {
      // Oldest first and this submission's answers last, so what merges in order (metadata, a
      // slide answered twice) ends with the latest; ids made in one millisecond do not sort so.
      const listed = byParticipant.get(respondentKey(w.poll.id, w.participant.id)) ?? [];
      const current = new Set(w.responses.map((r) => r.id));
      w.all = [...listed.filter((r) => !current.has(r.id)), ...listed.filter((r) => current.has(r.id))];
      // The statement decided by itself which answers to add; an accepted submission whose
      // answers it skipped must fail rather than be acknowledged as saved.
      const added = new Set(w.all.map((r) => r.id));
      const bytes = counted.get(respondentKey(w.poll.id, w.participant.id)) ?? null;
      if (w.responses.every((r) => added.has(r.id))) {
        // A stored row's count grows by this submission's (an inserted one was inserted with it);
        // one not counted yet counts what was stored before it.
        if (!w.inserted && w.bytes)
          w.participant = {
            ...w.participant,
            answerBytes: (bytes ?? storedBytes(listed.filter((r) => !current.has(r.id)))) + w.bytes,
          };
        return true;
      }
      if (listed.length + w.responses.length > MAX_ANSWERS_PER_RESPONDENT)
        refuse(out, w.at, answersCapped(listed.length, w.responses.length));
      else if (bytes !== null && bytes + w.bytes > MAX_RESPONDENT_BYTES)
        refuse(out, w.at, respondentBytesCapped(w.bytes, bytes));
      else throw new Error(`answers of participant ${w.participant.id} were not stored`);
      return false;
    });

    const changed: ParticipantRow[] = [];
    for (const w of work) {
      const before = w.participant;
      // A row this submission inserted was not complete before it, whatever the insert stored.
      const wasComplete = before.complete && !w.inserted;
      const complete = wasComplete || completes(w, w.all);
      w.newlyComplete = complete && !wasComplete;
      w.participant = { ...before, complete, completedAt: w.newlyComplete ? now : before.completedAt, updatedAt: now };
      // Nothing to write when the stored row already says it all: an inserted row holds this
      // submission's metadata and completion; an existing one changes with either.
      const stale = w.inserted
        ? complete !== before.complete
        : w.newlyComplete || !!w.input.participantMetadata || before.answerBytes !== undefined;
      if (stale) changed.push(w.participant);
    }

    const batches: Batch[] = [];
    const deliveries: NewDelivery[] = [];
    const plans = work.map((w) => planLogic({ ...w, now }));
    // The endpoints of every target the group fires, at once, new ones made in key order.
    const endpointIds = await store.endpoints.ensureLogic(
      plans.flatMap((p, i) => p.targets.map((t) => logicEndpoint(work[i]!.poll, t, now))),
    );
    let taken = 0;
    for (const [i, w] of work.entries()) {
      const bodies: EventBodies = new Map();
      forWebhooks(deps, w, now, batches, deliveries, bodies);
      const logic = plans[i]!;
      const ids = endpointIds.slice(taken, (taken += logic.targets.length));
      deliveries.push(...logicDeliveries({ ...w, now, bodies }, logic.targets, ids));
      out[w.at] = {
        ok: true,
        value: {
          participantId: w.participant.id,
          responseIds: w.responses.map((r) => r.id),
          complete: w.participant.complete,
          nextSlideId: logic.nextSlideId,
          ended: logic.ended || w.participant.complete,
        },
      };
    }
    await store.submissions.writeOutcome({ participants: changed, batches, deliveries });
  });
}

/** A DomainError refuses one submission; anything else fails the whole group. */
function refuse(out: Settled<SubmitResult>[], at: number, error: unknown): void {
  if (!(error instanceof DomainError)) throw error;
  out[at] = { ok: false, error };
}

/** The checks that need no writes: the poll takes answers from this caller, now, and each answer fits its slide. */
async function checkSubmission(
  store: Store,
  loaded: PollForSubmission | undefined,
  { caller, input }: Submission,
  now: Date,
): Promise<PollForSubmission> {
  if (!loaded || !loaded.poll.isVisible) throw notFound('poll');
  const { poll, slides } = loaded;
  // Who may answer comes first: an apiOnly poll's schedule is shown only to its account's keys.
  if (poll.settings.apiOnly) {
    if (!caller)
      throw new DomainError(
        'unauthenticated',
        'this poll takes answers through the API only: send a key of its account',
      );
    const membership = await membershipOf(store, caller, poll.accountId);
    if (!membership) throw notFound('poll');
    // Answering through the API is API access: the account's plan must allow it; any role may.
    authorize(membership, 'read');
  }
  const closed = closedBySchedule(poll.schedule, now);
  if (closed) throw new DomainError('not_found', `poll not open: ${closed}`);
  checkSubmissionLimits(input);
  if (input.participantId !== undefined && input.participantMetadata) {
    // participantMetadata merges into what the respondent's earlier submissions stored: the
    // merged object is held to the same size, as read before the row is locked. Submissions of
    // one respondent sent at once may each pass it, each adding at most its own 16 KiB (README).
    // Locking first would cost every group a round trip, or deadlock groups that lock in
    // different orders.
    const stored = await store.responses.getParticipant(poll.id, input.participantId);
    if (stored) checkMergedMetadata(stored.metadata, input.participantMetadata);
  }
  const byId = new Map(slides.map((s) => [s.id, s]));
  input.answers.forEach((a, i) => {
    const slide = byId.get(a.slideId);
    if (!slide) throw invalid(`/answers/${i}/slideId`, `no slide ${a.slideId} in this poll`);
    checkAnswerValue(slide, a.value, `/answers/${i}/value`);
  });
  return loaded;
}

/** The participant row to insert if the respondent is new, and the answer rows. */
function fresh(
  { poll, slides }: PollForSubmission,
  input: SubmitInput,
  now: Date,
): Pick<Work, 'participant' | 'responses' | 'all' | 'newlyComplete' | 'inserted'> {
  // A generated participant id is the respondent's only proof of who they are on later
  // submissions: wholly random after its time, not counted on from another one.
  const participantId = input.participantId ?? newRandomId('prt', now.getTime());
  const responses = input.answers.map((a) => ({
    id: newId('rsp', now.getTime()),
    accountId: poll.accountId,
    pollId: poll.id,
    participantId,
    slideId: a.slideId,
    value: a.value,
    metadata: input.metadata ?? {},
    synthetic: false,
    createdAt: now,
  }));
  // Inserted complete when this submission alone completes it: the usual one-go respondent
  // then costs no update of the row it has just inserted. An existing row ignores these values.
  const complete = completes({ slides, input }, responses);
  const participant: ParticipantRow = {
    id: participantId,
    seq: newId('prt', now.getTime()),
    pollId: poll.id,
    accountId: poll.accountId,
    metadata: input.participantMetadata ?? {},
    synthetic: false,
    complete,
    completedAt: complete ? now : null,
    createdAt: now,
    updatedAt: now,
  };
  return { participant, responses, all: [], newlyComplete: false, inserted: false };
}

/** Whether these answers complete the poll: the respondent says so, or every answerable slide has one. */
function completes({ slides, input }: Pick<Work, 'slides' | 'input'>, answers: readonly ResponseRow[]): boolean {
  if (input.complete) return true;
  const answered = new Set(answers.map((r) => r.slideId));
  return slides.length > 0 && slides.filter((s) => !NON_ANSWERABLE.has(s.type)).every((s) => answered.has(s.id));
}

/** Whether a respondent who has completed the poll may submit again. */
const reopens = (poll: Work['poll']): boolean => !!poll.settings.allowResubmissions;

/** The stored participant with this submission's metadata merged in; refuses a resubmission the poll does not allow. */
function merged(w: Work, stored: ParticipantRow, now: Date): ParticipantRow {
  if (stored.complete && !w.inserted && !reopens(w.poll)) {
    throw new DomainError(
      'conflict',
      'this participant has already completed the poll and it does not allow resubmissions',
    );
  }
  return w.input.participantMetadata
    ? { ...stored, metadata: { ...stored.metadata, ...w.input.participantMetadata }, updatedAt: now }
    : stored;
}
