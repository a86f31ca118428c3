import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../app/ports/index.js';
import { listAlerts } from '../../app/alerts/list-alerts.js';
import { callerOf } from '../auth.js';
import { AlertEmail } from '../schemas/alerts.js';
import { Answers, AnyId, Page, pageQuery, Strict } from '../schemas/common.js';

export const alertRoutes =
  (deps: Deps): FastifyPluginAsync =>
  async (root) => {
    const app = root.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/alerts',
      {
        schema: {
          tags: ['alerts'],
          summary:
            'Failure-alert emails sent for an account, newest first (owner, admin, billing_admin, as for webhooks)',
          querystring: Strict({ accountId: AnyId, ...pageQuery('alr') }),
          response: Answers({ 200: Page(AlertEmail) }),
        },
      },
      async (req) =>
        listAlerts(deps, callerOf(req), req.query.accountId, {
          startCursor: req.query.startCursor,
          limit: req.query.limit,
        }),
    );
  };
