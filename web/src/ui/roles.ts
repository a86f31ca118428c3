/** The roles that manage webhooks, their deliveries and alerts, and see Trigger webhook URLs in full. */
export const WEBHOOK_ROLES = ['owner', 'admin', 'billing_admin'];

/**
 * Where a Trigger webhook action sends, as the dashboard words it. To a role not in
 * WEBHOOK_ROLES the API shows the URL as its origin with the path masked (README, "API overview").
 */
export function webhookTarget(url: string, role: string): string {
  return WEBHOOK_ROLES.includes(role) ? url : `${url} (owners, admins and billing admins see the full URL)`;
}
