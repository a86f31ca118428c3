import { createSubmissionQueue } from '../../src/app/responses/submission-queue.js';
import { createAccount } from '../../src/app/accounts/create-account.js';
import { createKey } from '../../src/app/accounts/create-key.js';
import type { Clock, DeliverySettings, Deps } from '../../src/app/ports/index.js';
import type { Plan, Role } from '../../src/domain/access.js';
import { DEFAULT_QUOTAS, type Quotas } from '../../src/domain/quotas.js';
import { buildApp, type App, type AppOptions } from '../../src/http/app.js';
import type { Database } from '../../src/infra/db/database.js';
import { createStore } from '../../src/infra/db/store.js';
import { ExportSlots } from '../../src/app/responses/export-slots.js';
import { testDatabase } from './db.js';

export class FakeClock implements Clock {
  constructor(public ms = Date.parse('2026-01-01T00:00:00Z')) {}
  now() {
    return new Date(this.ms);
  }
  advance(ms: number) {
    this.ms += ms;
  }
}

export type TestAccount = { accountId: string; key: string; userId: string };

export type Harness = {
  app: App;
  deps: Deps;
  database: Database;
  clock: FakeClock;
  /** The app's CSV exports under way, per account. */
  exports: ExportSlots;
  account(opts?: { plan?: Plan; name?: string }): Promise<TestAccount>;
  member(accountId: string, role: Role, email?: string): Promise<string>;
  close(): Promise<void>;
};

let emails = 0;

export const TEST_DELIVERY: DeliverySettings = {
  retryLadderMs: [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000],
  dnsRetryLadderMs: [60_000, 180_000],
  deliveryTimeoutMs: 10_000,
  batchWindowMs: 5_000,
  userAgent: 'Canvass-Webhooks/test',
  secretOverlapMs: 86_400_000,
};

/** The API over fresh test storage, or over `database` when given (which its caller then closes). */
export async function harness(
  opts: {
    allowPrivateTargets?: boolean;
    delivery?: Partial<DeliverySettings>;
    database?: Database;
    quotas?: Partial<Quotas>;
  } = {},
): Promise<Harness> {
  const database = opts.database ?? (await testDatabase());
  const clock = new FakeClock();
  const deps: Deps = {
    store: createStore(database.db),
    clock,
    urlPolicy: { allowPrivateTargets: opts.allowPrivateTargets ?? false },
    delivery: { ...TEST_DELIVERY, ...opts.delivery },
    ...(opts.quotas ? { quotas: { ...DEFAULT_QUOTAS, ...opts.quotas } } : {}),
  };
  const exports = new ExportSlots();
  const app = await buildApp({ deps, submissions: createSubmissionQueue(deps), logger: false, exports });
  await app.ready();
  return {
    app,
    exports,
    deps,
    database,
    clock,
    async account(o = {}) {
      const r = await createAccount(deps, {
        name: o.name ?? 'Acme',
        ownerEmail: `owner${++emails}@example.com`,
        plan: o.plan ?? 'premium',
      });
      return { accountId: r.accountId, key: r.apiKey, userId: r.userId };
    },
    async member(accountId, role, email) {
      const r = await createKey(deps, 'operator', { accountId, email: email ?? `member${++emails}@example.com`, role });
      return r.apiKey;
    },
    async close() {
      await app.close();
      if (!opts.database) await database.close();
    },
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** The API as a test builds it, with a submission queue of its own over the given deps. */
export const testApp = (opts: Omit<AppOptions, 'submissions'>) =>
  buildApp({ ...opts, submissions: createSubmissionQueue(opts.deps) });

export const ROLES: Role[] = ['owner', 'admin', 'billing_admin', 'editor', 'read_only'];

/** A key for each role in the account: the owner's own, and one new member's for every other role. */
export async function keysByRole(h: Harness, acct: TestAccount): Promise<Record<Role, string>> {
  const keys = { owner: acct.key } as Record<Role, string>;
  for (const role of ROLES.slice(1)) keys[role] = await h.member(acct.accountId, role);
  return keys;
}
