import { notFound } from '../../domain/errors.js';
import type { Poll } from '../../domain/poll.js';
import { requireAccount } from '../access.js';
import { insertPoll, preparePoll, type CreatePollInput } from './create-poll.js';
import type { Caller, Deps } from '../ports/index.js';
import { secretForLogic } from '../accounts/ensure-signing-secret.js';
import { logicViewFor } from './webhook-urls.js';

export type CommitResult = { created: boolean; poll: Poll; signingSecret?: string };

/**
 * Saves a dry-run preview. The preview's id makes the commit idempotent: a second commit of the
 * same preview returns the poll saved by the first. Everything else is re-validated and
 * re-authorised as if it were a new create request, so an edited preview gains nothing.
 */
export async function commitPoll(
  deps: Deps,
  caller: Caller,
  previewId: string,
  input: CreatePollInput,
): Promise<CommitResult> {
  await requireAccount(deps.store, caller, input.accountId, 'write');
  // An id that is, or was, another account's is refused as a missing poll would be: what hangs
  // on it (endpoints, their alert recipients, the delivery log) must never cross accounts.
  const formerOwner = await deps.store.polls.ownerOfDeleted(previewId);
  if (formerOwner !== undefined && formerOwner !== input.accountId) throw notFound('poll');
  const existing = await deps.store.polls.get(previewId);
  if (existing) {
    if (existing.accountId !== input.accountId) throw notFound('poll');
    const view = await logicViewFor(deps.store, caller, existing.accountId);
    return {
      created: false,
      poll: view.poll({ ...existing, slides: await deps.store.slides.listByPoll(existing.id) }),
    };
  }
  const poll = await preparePoll(deps, caller, input, previewId);
  return deps.store.transaction(async (store) => {
    if (!(await insertPoll(store, poll, deps.quotas))) {
      // A concurrent commit of the same preview won the race: answer with what it saved.
      const winner = await store.polls.get(previewId);
      if (!winner || winner.accountId !== input.accountId) throw notFound('poll');
      const view = await logicViewFor(store, caller, winner.accountId);
      return { created: false, poll: view.poll({ ...winner, slides: [] }) };
    }
    // Read again behind the insert: a deletion by another account that committed after the
    // first read is seen now (the insert waited for it had it not committed), and undone.
    const former = await store.polls.ownerOfDeleted(previewId);
    if (former !== undefined && former !== input.accountId) throw notFound('poll');
    const signingSecret = await secretForLogic(store, poll.accountId, poll.actionLogic, poll.createdAt);
    return { created: true, poll, ...(signingSecret ? { signingSecret } : {}) };
  });
}
