import { checkRules, checkWebhookTargets, droppedUrls, webhookTargets } from '../../domain/logic.js';
import { applyPollPatch, cleanTitle, type Poll, type PollPatch } from '../../domain/poll.js';
import { checkPosRule } from '../../domain/slide.js';
import { requirePoll, requirePollForUpdate, requireWebhookRuleAccess } from '../access.js';
import { checkRuleTargets } from '../webhooks/check-target.js';
import { secretForLogic } from '../accounts/ensure-signing-secret.js';
import type { Caller, Deps } from '../ports/index.js';
import { unmaskWebhookUrls } from '../../domain/webhook-url-mask.js';
import { logicView, managesWebhooks } from './webhook-urls.js';

export async function updatePoll(
  deps: Deps,
  caller: Caller,
  pollId: string,
  sent: PollPatch,
): Promise<{ poll: Poll; signingSecret?: string }> {
  // Access first (a stranger learns nothing about the URL rules and makes us resolve nothing),
  // then name resolution before the transaction: no lock is held while DNS answers.
  if (sent.actionLogic) {
    const current = await requirePoll(deps.store, caller, pollId, 'write');
    const actionLogic = unmaskWebhookUrls(sent.actionLogic, current.actionLogic);
    await requireWebhookRuleAccess(
      deps.store,
      caller,
      current.accountId,
      current.actionLogic,
      actionLogic,
      deps.urlPolicy,
    );
    await checkRuleTargets(deps, actionLogic, '/actionLogic', current.actionLogic);
  }
  return deps.store.transaction(async (store) => {
    const current = await requirePollForUpdate(store, caller, pollId);
    const manages = await managesWebhooks(store, caller, current.accountId);
    // Masked URLs stand for what is stored now, under the lock.
    const patch = sent.actionLogic
      ? { ...sent, actionLogic: unmaskWebhookUrls(sent.actionLogic, current.actionLogic) }
      : sent;
    const slides = await store.slides.listByPoll(pollId);
    const body = applyPollPatch(current, patch);
    checkPosRule(
      body.pageRules,
      slides.map((s) => s.type),
    );
    if (patch.actionLogic) {
      // The role first: an editor whose masked URL stands for nothing now is told it may not
      // change the action, not asked for a URL it cannot see.
      await requireWebhookRuleAccess(
        store,
        caller,
        current.accountId,
        current.actionLogic,
        body.actionLogic,
        deps.urlPolicy,
      );
      const slideIds = new Set(slides.map((s) => s.id));
      body.actionLogic = checkRules(body.actionLogic, slideIds, deps.urlPolicy, '/actionLogic', current.actionLogic);
      checkWebhookTargets(
        webhookTargets(slides, body.actionLogic),
        webhookTargets(slides, current.actionLogic),
        '/actionLogic',
      );
    }
    const fields = {
      title: patch.title !== undefined ? cleanTitle(patch.title) : current.title,
      isVisible: patch.isVisible ?? current.isVisible,
      body,
      updatedAt: deps.clock.now(),
    };
    await store.polls.update(pollId, fields);
    // "Anonymous: email null, emails []" holds for events queued before the switch too, from
    // their next attempt (README, Webhooks). The poll's lock has waited for the submissions and
    // batch flushes that read it before (under a key share lock): their deliveries are here.
    if (body.settings.anonymous && !current.settings.anonymous) await store.deliveries.withholdAddresses(pollId);
    // A Trigger webhook action removed, or moved to another URL, takes its queued deliveries
    // with it, as a deleted webhook does (README, Webhooks).
    await store.deliveries.cancelLogic(
      {
        accountId: current.accountId,
        pollId,
        source: 'survey-logic',
        slideId: null,
        urls: droppedUrls(current.actionLogic, body.actionLogic),
      },
      fields.updatedAt,
    );
    // The secret is made and shown only to a role that manages webhooks (see updateSlide).
    const signingSecret =
      patch.actionLogic && manages
        ? await secretForLogic(store, current.accountId, body.actionLogic, fields.updatedAt)
        : undefined;
    const poll = {
      ...current,
      ...body,
      title: fields.title,
      isVisible: fields.isVisible,
      updatedAt: fields.updatedAt,
      slides,
    };
    return { poll: logicView(manages).poll(poll), ...(signingSecret ? { signingSecret } : {}) };
  });
}
