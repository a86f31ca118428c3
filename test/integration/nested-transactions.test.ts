import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewDelivery } from '../../src/domain/delivery.js';
import type { Database } from '../../src/infra/db/database.js';
import { createStore } from '../../src/infra/db/store.js';
import { testDatabase } from '../support/db.js';

// On PostgreSQL a submission group's last statement takes COMMIT along (pipelined-driver.ts).
// Run inside another use case's transaction, that COMMIT would end the outer one early.
describe('a use case run inside another use case transaction', () => {
  let database: Database;
  beforeAll(async () => {
    database = await testDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  const delivery = (id: string): NewDelivery => ({
    id,
    accountId: 'acc_nested',
    pollId: 'poll_nested',
    webhookId: null,
    endpointId: 'end_nested',
    source: 'question-logic',
    url: 'https://hooks.example.com/nested',
    participantId: 'prt_nested',
    type: 'submitted-responses',
    body: '{}',
    createdAt: new Date(),
    nextAttemptAt: new Date(),
  });

  it('commits nothing early: when the outer transaction fails, the inner writes roll back with it', async () => {
    const store = createStore(database.db);
    await expect(
      store.transaction(async (outer) => {
        await outer.transaction((inner) =>
          inner.submissions.writeOutcome({
            participants: [],
            batches: [],
            deliveries: [delivery('dlv_nested_rolled_back')],
          }),
        );
        throw new Error('the outer use case fails after the inner one wrote');
      }),
    ).rejects.toThrow('the outer use case fails');
    expect(await store.deliveries.get('dlv_nested_rolled_back')).toBeUndefined();
  });

  it('keeps the outer transaction open after the inner writes, so what the outer writes next commits with them', async () => {
    const store = createStore(database.db);
    await store.transaction(async (outer) => {
      await outer.transaction((inner) =>
        inner.submissions.writeOutcome({ participants: [], batches: [], deliveries: [delivery('dlv_nested_inner')] }),
      );
      await outer.deliveries.insert([delivery('dlv_nested_outer')]);
    });
    expect((await store.deliveries.get('dlv_nested_inner'))?.status).toBe('pending');
    expect((await store.deliveries.get('dlv_nested_outer'))?.status).toBe('pending');
  });
});
