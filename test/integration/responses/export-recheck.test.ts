import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../../src/app/access.js';
import { removeMember } from '../../../src/app/accounts/remove-member.js';
import {
  EXPORT_PAGE_ROWS,
  EXPORT_RECHECK_MS,
  exportResponsesCsv,
} from '../../../src/app/responses/export-responses.js';
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

async function exporting(email: string, createdBefore?: Date) {
  const poll = await visiblePoll(h, acct);
  // One page and one answer more: the first chunk is the header and the first page.
  for (let i = 0; i < EXPORT_PAGE_ROWS; i++)
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: `first page ${i}` }] });
  await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'hello' }] });
  const key = await h.member(acct.accountId, 'editor', email);
  const caller = await authenticate(h.deps, key);
  const rows = exportResponsesCsv(h.deps, caller, { pollId: poll.pollId, createdBefore }, new ExportSlots());
  const first = (await rows.next()).value as string;
  expect(first).toMatch(/^responseId,/);
  expect(first).toContain('first page 99');
  expect(first).not.toContain('hello');
  return { rows, caller, poll };
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

  it.each([
    ['without createdBefore', undefined],
    ['with a createdBefore still to come', new Date('9999-01-01T00:00:00Z')],
  ])('ends at the answers created by its start, %s', async (_, createdBefore) => {
    const { rows, poll } = await exporting(
      `window.exporter.${createdBefore ? 'later' : 'open'}@example.com`,
      createdBefore,
    );
    h.clock.advance(1);
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'after the start' }] });
    let rest = '';
    for await (const chunk of rows) rest += chunk;
    expect(rest).toContain('hello');
    expect(rest).not.toContain('after the start');
  });
});
