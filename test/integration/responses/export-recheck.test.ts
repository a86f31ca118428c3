import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../../src/app/access.js';
import { removeMember } from '../../../src/app/accounts/remove-member.js';
import { EXPORT_RECHECK_MS, exportResponsesCsv } from '../../../src/app/responses/export-responses.js';
import { ExportSlots } from '../../../src/app/responses/export-slots.js';
import { harness, type Harness, type TestAccount } from '../../support/app.js';
import { answer, visiblePoll } from '../../support/fixtures.js';

/**
 * A CSV export that runs long checks its caller again (docs/operations.md, "API keys, members and
 * the signing secret"): a key revoked, or its member removed, while it runs ends it at its next
 * page once EXPORT_RECHECK_MS have passed; a caller still allowed goes on.
 */
let h: Harness;
let acct: TestAccount;
beforeAll(async () => {
  h = await harness();
  acct = await h.account();
});
afterAll(() => h?.close());

async function exporting(email: string) {
  const poll = await visiblePoll(h, acct);
  await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'hello' }] });
  const key = await h.member(acct.accountId, 'editor', email);
  const caller = await authenticate(h.deps, key);
  const rows = exportResponsesCsv(h.deps, caller, poll.pollId, new ExportSlots());
  expect((await rows.next()).value).toMatch(/^responseId,/);
  return { rows, caller };
}

describe('a CSV export under way', () => {
  it('ends at its next page once its key is revoked', async () => {
    const { rows, caller } = await exporting('revoked.exporter@example.com');
    await h.deps.store.keys.revoke({ id: caller.keyId }, h.clock.now());
    h.clock.advance(EXPORT_RECHECK_MS);
    await expect(rows.next()).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('ends at its next page once its member is removed', async () => {
    const { rows } = await exporting('removed.exporter@example.com');
    await removeMember(h.deps, 'operator', { accountId: acct.accountId, email: 'removed.exporter@example.com' });
    h.clock.advance(EXPORT_RECHECK_MS);
    await expect(rows.next()).rejects.toMatchObject({ code: expect.stringMatching(/not_found|unauthenticated/) });
  });

  it('goes on for a caller still allowed', async () => {
    const { rows } = await exporting('staying.exporter@example.com');
    h.clock.advance(EXPORT_RECHECK_MS);
    const next = await rows.next();
    expect(next.value).toContain('hello');
    expect((await rows.next()).done).toBe(true);
  });
});
