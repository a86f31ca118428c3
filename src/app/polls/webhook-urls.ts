import { may } from '../../domain/access.js';
import type { Action } from '../../domain/logic.js';
import { maskWebhookUrls } from '../../domain/webhook-url-mask.js';
import { membershipOf } from '../access.js';
import type { Caller, Store } from '../ports/index.js';

type Rule = { action: Action };

/** Whether the caller's role in the account manages webhooks (and sees their URLs and secret). */
export async function managesWebhooks(store: Store, caller: Caller, accountId: string): Promise<boolean> {
  const membership = await membershipOf(store, caller, accountId);
  return membership !== undefined && may(membership.role, 'manage_webhooks');
}

/** How the caller sees logic: in full, or with Trigger webhook URLs masked to their origin. */
export type LogicView = {
  poll<P extends { actionLogic: readonly Rule[]; slides?: readonly { logic: readonly Rule[] }[] }>(poll: P): P;
  slide<S extends { logic: readonly Rule[] }>(slide: S): S;
};

const full: LogicView = { poll: (p) => p, slide: (s) => s };
const masked: LogicView = {
  poll: (p) => ({
    ...p,
    actionLogic: maskWebhookUrls(p.actionLogic),
    ...(p.slides ? { slides: p.slides.map((s) => ({ ...s, logic: maskWebhookUrls(s.logic) })) } : {}),
  }),
  slide: (s) => ({ ...s, logic: maskWebhookUrls(s.logic) }),
};

/** The view of a caller who does (`manages`) or does not manage the account's webhooks. */
export const logicView = (manages: boolean): LogicView => (manages ? full : masked);

/** Every answer that carries an account's logic goes through this view of the caller's role. */
export async function logicViewFor(store: Store, caller: Caller, accountId: string): Promise<LogicView> {
  return logicView(await managesWebhooks(store, caller, accountId));
}
