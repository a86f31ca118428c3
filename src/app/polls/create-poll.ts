import { checkRules } from '../../domain/logic.js';
import { newId, newRandomId } from '../../domain/ids.js';
import { buildPollBody, cleanTitle, type Poll, type PollInput } from '../../domain/poll.js';
import { requireAccount, requireWebhookRuleAccess } from '../access.js';
import { checkRuleTargets } from '../webhooks/check-target.js';
import { secretForLogic } from '../accounts/ensure-signing-secret.js';
import type { Caller, Deps, Store } from '../ports/index.js';
import { DomainError } from '../../domain/errors.js';
import { DEFAULT_QUOTAS, type Quotas } from '../../domain/quotas.js';

export type CreatePollInput = PollInput & { accountId: string; dryRun?: boolean };

/** Builds the poll exactly as it would be saved; shared by create, dry run and commit. */
export async function preparePoll(deps: Deps, caller: Caller, input: CreatePollInput, id?: string): Promise<Poll> {
  await requireAccount(deps.store, caller, input.accountId, 'write');
  const account = await deps.store.accounts.get(input.accountId);
  const body = buildPollBody(input, account?.defaults ?? {});
  await requireWebhookRuleAccess(deps.store, caller, input.accountId, [], body.actionLogic, deps.urlPolicy);
  // A new poll has no slides, so survey rules may not name any yet.
  body.actionLogic = checkRules(body.actionLogic, new Set(), deps.urlPolicy, '/actionLogic');
  await checkRuleTargets(deps, body.actionLogic, '/actionLogic');
  const now = deps.clock.now();
  return {
    // A preview's id is what POST /commit saves it under: random, so that another account
    // cannot take it first from an id made just before.
    id: id ?? (input.dryRun ? newRandomId : newId)('poll', now.getTime()),
    accountId: input.accountId,
    title: cleanTitle(input.title),
    isVisible: false,
    slides: [],
    ...body,
    createdAt: now,
    updatedAt: now,
  };
}

export type CreatePollResult = { saved: boolean; poll: Poll; signingSecret?: string };

export async function createPoll(deps: Deps, caller: Caller, input: CreatePollInput): Promise<CreatePollResult> {
  const poll = await preparePoll(deps, caller, input);
  if (input.dryRun) return { saved: false, poll };
  return deps.store.transaction(async (store) => {
    await insertPoll(store, poll, deps.quotas);
    const signingSecret = await secretForLogic(store, poll.accountId, poll.actionLogic, poll.createdAt);
    return { saved: true, poll, ...(signingSecret ? { signingSecret } : {}) };
  });
}

/**
 * Saves the poll within its account's quota, in the caller's transaction (the count and the
 * poll roll back together); false when the id is already taken.
 */
export async function insertPoll(store: Store, poll: Poll, quotas: Quotas = DEFAULT_QUOTAS): Promise<boolean> {
  const { inserted, pollsInAccount } = await store.polls.insert(poll);
  if (inserted && pollsInAccount > quotas.pollsPerAccount)
    throw new DomainError(
      'limit_reached',
      `an account holds at most ${quotas.pollsPerAccount} polls; delete one first`,
    );
  return inserted;
}
