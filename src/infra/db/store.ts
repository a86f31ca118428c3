import type { Kysely } from 'kysely';
import type { Store } from '../../app/ports/index.js';
import { accountRepo } from './repositories/accounts.js';
import { keyRepo } from './repositories/keys.js';
import { pollRepo } from './repositories/polls.js';
import { researchRepo, responseRepo } from './repositories/responses.js';
import { slideRepo } from './repositories/slides.js';
import { submissionRepo } from './repositories/submissions.js';
import { userRepo } from './repositories/users.js';
import { alertRepo } from './repositories/alerts.js';
import { asAbortedForAnother } from './unavailable.js';
import { batchRepo } from './repositories/batches.js';
import { deliveryRepo } from './repositories/deliveries.js';
import { endpointRepo } from './repositories/endpoints.js';
import { recoveryRepo } from './repositories/recoveries.js';
import { webhookRepo } from './repositories/webhooks.js';
import type { DB } from './schema.js';

/**
 * `nested`: the store runs inside a transaction that another use case opened (store.transaction
 * reuses an open one). Its repositories then never write COMMIT early behind a last statement
 * (executeThenCommit): that COMMIT would end the outer transaction too, and what the outer use
 * case wrote after it, or rolled back, would be committed or lost piecemeal.
 */
export function createStore(db: Kysely<DB>, opts: { nested?: boolean } = {}): Store {
  return {
    accounts: accountRepo(db),
    users: userRepo(db),
    keys: keyRepo(db),
    polls: pollRepo(db),
    slides: slideRepo(db),
    responses: responseRepo(db),
    submissions: submissionRepo(db, { commitEarly: !opts.nested }),
    research: researchRepo(db),
    webhooks: webhookRepo(db),
    endpoints: endpointRepo(db),
    batches: batchRepo(db, { commitEarly: !opts.nested }),
    deliveries: deliveryRepo(db),
    recoveries: recoveryRepo(db),
    alerts: alertRepo(db),
    // Nested calls reuse the open transaction rather than deadlocking on PGlite's one connection.
    transaction: (fn) =>
      db.isTransaction
        ? fn(createStore(db, { nested: true }))
        : db
            .transaction()
            .execute((trx) => fn(createStore(trx)))
            .catch((err: unknown) => {
              throw asAbortedForAnother(err);
            }),
  };
}
