import { storedBytes } from '../../domain/answer.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { newId, newRandomId } from '../../domain/ids.js';
import { answerableSlides, seededRandom, syntheticAnswer } from '../../domain/research.js';
import { requirePoll } from '../access.js';
import { DEFAULT_QUOTAS } from '../../domain/quotas.js';
import type { Caller, Deps } from '../ports/index.js';
import type { ParticipantRow, ResponseRow } from '../../domain/response.js';
import type { ResearchRun } from '../../domain/research.js';

export type StartResearchInput = { pollId: string; participants?: number; seed?: number; idempotencyKey?: string };

/**
 * What one run writes in its one transaction, whatever the poll's slides: its answers, and their
 * values as JSON (a multi-choice slide of long titles makes large ones). docs/operations.md, Quotas.
 */
const MAX_RUN_ANSWERS = 20_000;
const MAX_RUN_BYTES = 16 * 1024 * 1024;

/**
 * Generates synthetic respondents for a synthetic poll; the same seed gives the same answers. A
 * request sent again with the idempotency key of a run it made is answered with that run
 * (`replayed`), under the poll's lock, so two sent at once make one run.
 */
export async function startResearch(
  deps: Deps,
  caller: Caller,
  input: StartResearchInput,
): Promise<{ run: ResearchRun; replayed: boolean }> {
  return deps.store.transaction(async (store) => {
    const poll = await requirePoll(store, caller, input.pollId, 'write');
    if (!poll.settings.isSynthetic)
      throw new DomainError('not_synthetic', 'research can only start on a poll created with isSynthetic: true');
    const count = input.participants ?? 100;
    // Under the poll's lock, so concurrent runs cannot pass the quota together; a lock that
    // lets respondents' answers to the poll in meanwhile. A poll deleted since it was read is
    // gone for this run too, not a foreign-key failure of its inserts.
    if (!(await store.polls.lockForResearch(poll.id))) throw notFound('poll');
    if (input.idempotencyKey !== undefined) {
      const made = await store.research.byIdempotencyKey(poll.id, input.idempotencyKey);
      if (made) {
        const same = made.participants === count && (input.seed === undefined || input.seed === made.seed);
        if (!same)
          throw new DomainError(
            'conflict',
            `idempotencyKey made run ${made.id} of ${made.participants} participants (seed ${made.seed}); send a new key for another run`,
          );
        return { run: made, replayed: true };
      }
    }
    const quota = (deps.quotas ?? DEFAULT_QUOTAS).syntheticParticipantsPerPoll;
    const held = await store.research.participantsOf(poll.id);
    if (held + count > quota)
      throw new DomainError(
        'limit_reached',
        `a poll holds at most ${quota} synthetic participants; this one has ${held}, so ${Math.max(0, quota - held)} more at most`,
      );
    const slides = answerableSlides(await store.slides.listByPoll(poll.id));
    // A run of respondents with nothing to answer would spend the quota on empty "complete" rows.
    if (!slides.length)
      throw new DomainError(
        'conflict',
        'the poll has no slide to answer: add a question slide before starting research',
      );
    if (count * slides.length > MAX_RUN_ANSWERS)
      throw new DomainError(
        'limit_reached',
        `a research run makes at most ${MAX_RUN_ANSWERS} answers; with ${slides.length} answerable slides, ${Math.floor(MAX_RUN_ANSWERS / slides.length)} participants at most`,
      );
    const now = deps.clock.now();
    const seed = input.seed ?? Math.floor(Math.random() * 2 ** 31);
    const rand = seededRandom(seed);
    const runId = newId('run', now.getTime());
    // One object for every answer: each synthetic respondent's answers are one submission, whose
    // metadata is stored once (migration 017).
    const metadata = { researchRunId: runId };
    const participants: ParticipantRow[] = [];
    const responses: ResponseRow[] = [];
    let bytes = 0;
    for (let n = 0; n < count; n++) {
      const participantId = newRandomId('prt', now.getTime());
      const theirs: ResponseRow[] = slides.map((slide) => ({
        id: newId('rsp', now.getTime()),
        accountId: poll.accountId,
        pollId: poll.id,
        participantId,
        slideId: slide.id,
        value: syntheticAnswer(slide, rand, n),
        metadata,
        synthetic: true,
        createdAt: now,
      }));
      // Counted as a submission counts them (MAX_RESPONDENT_BYTES), for the reads that weigh
      // respondents by what they hold (GET /emails, the batch flush); and summed for the run.
      const answerBytes = storedBytes(theirs);
      bytes += answerBytes;
      if (bytes > MAX_RUN_BYTES)
        throw new DomainError(
          'limit_reached',
          `a research run stores at most ${MAX_RUN_BYTES} bytes of answers; this poll's slides pass it at participant ${n + 1}`,
        );
      participants.push({
        id: participantId,
        // Paging order (creation order); the id itself is random after its time.
        seq: newId('prt', now.getTime()),
        pollId: poll.id,
        accountId: poll.accountId,
        metadata: { researchRunId: runId },
        synthetic: true,
        complete: true,
        completedAt: now,
        createdAt: now,
        updatedAt: now,
        answerBytes,
      });
      responses.push(...theirs);
    }
    await store.responses.insertParticipants(participants);
    await store.responses.insertResponses(responses);
    const run: ResearchRun = {
      id: runId,
      pollId: poll.id,
      accountId: poll.accountId,
      participants: count,
      seed,
      responsesCreated: responses.length,
      createdAt: now,
    };
    await store.research.insert(run, input.idempotencyKey);
    return { run, replayed: false };
  });
}
