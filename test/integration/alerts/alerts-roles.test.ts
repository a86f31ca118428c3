import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deps, Mailer } from '../../../src/app/ports/index.js';
import { checkAlerts } from '../../../src/app/alerts/check-alerts.js';
import { ROLES, type Role } from '../../../src/domain/access.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';
import { createWebhook, visiblePoll } from '../../support/fixtures.js';

/**
 * An alert email reports a webhook's failures and names its endpoint's URL (README, "API"):
 * GET /alerts answers the roles that manage webhooks, refuses the others with 403
 * role_forbidden, and is a 404 to another account's members.
 */

const URL_WITH_TOKEN = 'https://hooks.example.com/in?token=s3cret';
const MANAGERS: Role[] = ['owner', 'admin', 'billing_admin'];

let h: Harness;
let acct: TestAccount;
const keys = {} as Record<Role, string>;

beforeAll(async () => {
  h = await harness();
  acct = await h.account();
  keys.owner = acct.key;
  for (const role of ROLES.filter((r) => r !== 'owner')) keys[role] = await h.member(acct.accountId, role);
  const poll = await visiblePoll(h, acct);
  const hook = await createWebhook(h, acct, poll.pollId, URL_WITH_TOKEN);
  await h.deps.store.endpoints.recordGivenUp(hook.data.id, h.clock.now(), 'HTTP 500');
  const windows = { quietMs: 60_000, reminderMs: 600_000 };
  h.clock.advance(windows.quietMs + 1);
  const mailer: Mailer = { send: async () => ({ refused: [] }), close: async () => {} };
  const deps: Deps = { ...h.deps, mailer, alerts: windows };
  expect(await checkAlerts(deps)).toBe(1);
});
afterAll(() => h?.close());

const listAlerts = (accountId: string, key: string) =>
  h.app.inject({ method: 'GET', url: `/alerts?accountId=${accountId}`, headers: bearer(key) });

describe('GET /alerts by role', () => {
  it.each(MANAGERS)('%s sees the alert, with the endpoint URL', async (role) => {
    const res = await listAlerts(acct.accountId, keys[role]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toHaveLength(1);
    expect(res.body).toContain('token=s3cret');
  });

  it.each(ROLES.filter((r) => !MANAGERS.includes(r)))('%s is refused, and sees nothing of it', async (role) => {
    const res = await listAlerts(acct.accountId, keys[role]);
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().code).toBe('role_forbidden');
    expect(res.body).not.toContain('s3cret');
    expect(res.body).not.toContain('hooks.example.com');
  });

  it("another account's owner gets a 404", async () => {
    const other = await h.account();
    const res = await listAlerts(acct.accountId, other.key);
    expect(res.statusCode, res.body).toBe(404);
    expect(res.body).not.toContain('s3cret');
  });
});
