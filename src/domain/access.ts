import { DomainError, notFound } from './errors.js';

export const ROLES = ['owner', 'admin', 'billing_admin', 'editor', 'read_only'] as const;
export type Role = (typeof ROLES)[number];

export const PLANS = ['free', 'basic', 'premium', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** What an operation needs of the caller's membership. */
export type Need = 'read' | 'write' | 'manage_webhooks' | 'manage_account';

const ALLOWED: Record<Need, readonly Role[]> = {
  read: ROLES,
  write: ['owner', 'admin', 'billing_admin', 'editor'],
  manage_webhooks: ['owner', 'admin', 'billing_admin'],
  manage_account: ['owner', 'admin'],
};

export type Membership = { accountId: string; role: Role; plan: Plan };

export const may = (role: Role, need: Need): boolean => ALLOWED[need].includes(role);

/** Whether `role` is no higher than `than` (owner > admin > billing_admin > editor > read_only). */
export const noHigher = (role: Role, than: Role): boolean => ROLES.indexOf(role) >= ROLES.indexOf(than);
export const rolesFor = (need: Need): readonly Role[] => ALLOWED[need];

/**
 * Order matters: an account the caller is not in is indistinguishable from a missing one,
 * so membership is checked before anything that could reveal the account exists.
 */
export function authorize(membership: Membership | undefined, need: Need): Membership {
  if (!membership) throw notFound('account');
  if (PLANS.indexOf(membership.plan) < PLANS.indexOf('premium')) {
    throw new DomainError('plan_required', 'API access requires the premium plan or higher');
  }
  if (!ALLOWED[need].includes(membership.role)) {
    throw new DomainError(
      'role_forbidden',
      `the ${membership.role} role may not do this (needs one of: ${ALLOWED[need].join(', ')})`,
    );
  }
  return membership;
}
