import {
  respondentKey,
  submitGroup,
  type OutcomeWait,
  type SubmitInput,
  type SubmitResult,
} from './submit-responses.js';
import type { Caller, Deps } from '../ports/index.js';
import { DomainError } from '../../domain/errors.js';
import { checkSubmissionLimits } from '../../domain/answer.js';
import { StaleReadError } from '../ports/stale-read.js';
import { CommitRolledBackError } from '../ports/commit-outcome-unknown.js';

export type SubmissionQueue = {
  /** `bytes`: the size of the request it came in, held in memory until it is written. */
  submit(caller: Caller | null, input: SubmitInput, bytes?: number): Promise<SubmitResult>;
};

type Waiting = { caller: Caller | null; input: SubmitInput; resolve(r: SubmitResult): void; reject(e: unknown): void };

/**
 * Group commit for submissions. A submission that arrives while a group is being written waits
 * for the next group instead of taking a transaction of its own: under load many respondents
 * share each round trip, and an idle server still writes the first one at once (no timer, no
 * added latency). Up to `parallel` groups are written at once, the second only when at least
 * `minSecondGroup` submissions wait.
 */
export function createSubmissionQueue(
  deps: Deps,
  opts: {
    maxGroup?: number;
    parallel?: number;
    minSecondGroup?: number;
    maxWaiting?: number;
    maxBytes?: number;
    outcome?: OutcomeWait;
  } = {},
): SubmissionQueue {
  // What the submissions not yet written may hold together: 1,024 bodies of up to 1 MiB each
  // (and their parsed objects, several times larger) would exhaust the heap.
  const maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  let heldBytes = 0;
  const maxGroup = opts.maxGroup ?? 64;
  const parallel = opts.parallel ?? 2;
  const minSecond = opts.minSecondGroup ?? 8;
  const maxWaiting = opts.maxWaiting ?? 1_024;
  let waiting: Waiting[] = [];
  let running = 0;

  function take(): Waiting[] {
    // One submission per respondent in a group: the second must see the first's answers, and a
    // multi-row upsert cannot touch one row twice. The rest wait for a later group, in order.
    const group: Waiting[] = [];
    const rest: Waiting[] = [];
    const respondents = new Set<string>();
    for (const w of waiting) {
      const key =
        w.input.participantId === undefined ? undefined : respondentKey(w.input.pollId, w.input.participantId);
      if (group.length < maxGroup && (key === undefined || !respondents.has(key))) {
        group.push(w);
        if (key !== undefined) respondents.add(key);
      } else rest.push(w);
    }
    waiting = rest;
    return group;
  }

  /**
   * `release` gives the group's place back early: a group that lost its COMMIT's answer waits
   * up to seconds to learn its outcome, and the others (refused at once in an outage) must not
   * wait behind it.
   */
  async function write(group: Waiting[], tries = 0, release: () => void = () => {}): Promise<void> {
    try {
      const settled = await submitGroup(deps, group, opts.outcome, release);
      settled.forEach((s, i) => (s.ok ? group[i]!.resolve(s.value) : group[i]!.reject(s.error)));
    } catch (err) {
      if (group.length === 1) {
        // Its poll or a webhook was deleted between the read and the write: read afresh, which
        // answers as the deletion says (404, or that webhook left out), not a 500. Twice at most:
        // a deadlock with a deletion not yet committed reads the poll still there, then meets
        // the deletion's foreign key. Or the connection was lost with its COMMIT, which rolled
        // back: nothing was stored.
        if ((err instanceof StaleReadError || err instanceof CommitRolledBackError) && tries < 2)
          return write(group, tries + 1);
        return group[0]!.reject(err);
      }
      // The group's transaction rolled back (a deadlock with another writer, or one submission
      // the database refused): each is written alone, so one bad submission fails only itself.
      await Promise.all(group.map((w) => write([w])));
    }
  }

  function pump(): void {
    // A second group only once enough wait to fill one: under a moderate load it would split
    // the waiting few into two small groups, twice the statements for the same submissions.
    while (waiting.length && (running === 0 || (running < parallel && waiting.length >= minSecond))) {
      const group = take();
      running++;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        running--;
        pump();
      };
      void write(group, 0, release).finally(release);
    }
  }

  return {
    submit(caller, input, bytes = 0) {
      // A submission over the limits never takes a place in the queue (the group checks again,
      // for other callers of submitGroup).
      try {
        checkSubmissionLimits(input);
      } catch (err) {
        return Promise.reject(err);
      }
      // Each waiting submission holds its body (up to 1 MiB): past this many the database is
      // behind, and the caller is told to come back rather than the process run out of memory.
      if (waiting.length >= maxWaiting)
        return Promise.reject(
          Object.assign(
            new DomainError('unavailable', `${maxWaiting} submissions are waiting to be written; try again shortly`),
            { retryAfter: 1 },
          ),
        );
      // One alone is always taken, whatever its size (the body limit bounds it).
      if (heldBytes > 0 && heldBytes + bytes > maxBytes)
        return Promise.reject(
          Object.assign(
            new DomainError(
              'unavailable',
              `submissions of ${heldBytes} bytes are waiting to be written; try again shortly`,
            ),
            { retryAfter: 1 },
          ),
        );
      heldBytes += bytes;
      const settled = () => void (heldBytes -= bytes);
      return new Promise<SubmitResult>((resolve, reject) => {
        waiting.push({
          caller,
          input,
          resolve: (r) => (settled(), resolve(r)),
          reject: (e) => (settled(), reject(e)),
        });
        pump();
      });
    },
  };
}
