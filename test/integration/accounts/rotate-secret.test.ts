import { afterAll, beforeAll, expect, it } from 'vitest';
import { rotateSigningSecret } from '../../../src/app/accounts/rotate-signing-secret.js';
import { harness, type Harness } from '../../support/app.js';

/**
 * `canvass support rotate-secret` (src/app/accounts/rotate-signing-secret.ts): a second rotation
 * within the first one's overlap would drop the secret the first gave out, which receivers may
 * already use, so it is refused unless forced; the answer says until when the previous secret signs.
 */

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h?.close());

it('is refused within the last rotation’s overlap unless forced, and says when the previous secret stops signing', async () => {
  const acct = await h.account();
  const overlapMs = h.deps.delivery.secretOverlapMs;
  const first = await rotateSigningSecret(h.deps, acct.accountId);
  expect(first.previousUntil).toBe(new Date(h.clock.now().getTime() + overlapMs).toISOString());
  const stored = async () => (await h.deps.store.accounts.get(acct.accountId))!.signingSecret;
  expect(await stored()).toBe(first.signingSecret);

  h.clock.advance(overlapMs - 1);
  await expect(rotateSigningSecret(h.deps, acct.accountId)).rejects.toMatchObject({
    code: 'conflict',
    message: expect.stringContaining('--force'),
  });
  expect(await stored()).toBe(first.signingSecret);
  const forced = await rotateSigningSecret(h.deps, acct.accountId, { force: true });
  expect(await stored()).toBe(forced.signingSecret);

  h.clock.advance(overlapMs);
  const later = await rotateSigningSecret(h.deps, acct.accountId);
  expect(await stored()).toBe(later.signingSecret);
});
