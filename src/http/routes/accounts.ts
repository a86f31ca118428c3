import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { getAccountSettings } from '../../app/accounts/get-account-settings.js';
import { getAccountUsage } from '../../app/accounts/get-account-usage.js';
import { listMyAccounts } from '../../app/accounts/list-my-accounts.js';
import { updateAccountSettings, type AccountSettingsPatch } from '../../app/accounts/update-account-settings.js';
import type { Deps } from '../../app/ports/index.js';
import { callerOf } from '../auth.js';
import { Answers, AnyId, Data, Strict } from '../schemas/common.js';
import { AccountSettings, AccountSettingsBody, AccountUsage, Memberships } from '../schemas/accounts.js';

const tags = ['account'];

export const accountRoutes =
  (deps: Deps): FastifyPluginAsync =>
  async (root) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/accounts',
      {
        schema: {
          tags,
          summary: 'The accounts your key is a member of, with your role (every one: not paged)',
          querystring: Strict({}),
          response: Answers({ 200: Data(Memberships) }),
        },
      },
      async (req) => ({
        data: await listMyAccounts(deps, callerOf(req)),
      }),
    );
    app.get(
      '/account/settings',
      {
        schema: {
          tags,
          summary: 'Account-level defaults',
          querystring: Strict({ accountId: AnyId }),
          response: Answers({ 200: Data(AccountSettings) }),
        },
      },
      async (req) => ({
        data: await getAccountSettings(deps, callerOf(req), req.query.accountId),
      }),
    );
    app.get(
      '/account/usage',
      {
        schema: {
          tags,
          summary: 'How much of each quota the account uses: polls, members, live keys',
          querystring: Strict({ accountId: AnyId }),
          response: Answers({ 200: Data(AccountUsage) }),
        },
      },
      async (req) => ({
        data: await getAccountUsage(deps, callerOf(req), req.query.accountId),
      }),
    );
    app.patch(
      '/account/settings',
      {
        schema: {
          tags,
          summary: 'Change account-level defaults (owner, admin)',
          body: AccountSettingsBody,
          response: Answers({ 200: Data(AccountSettings) }),
        },
      },
      async (req) => ({
        data: await updateAccountSettings(deps, callerOf(req), req.body as AccountSettingsPatch),
      }),
    );
  };
