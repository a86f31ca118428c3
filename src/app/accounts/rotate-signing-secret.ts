import { newSigningSecret } from '../../domain/signature.js';
import { DomainError } from '../../domain/errors.js';
import { requireAccountExists } from '../access.js';
import type { Deps } from '../ports/index.js';

/**
 * Rotation is for support only (`canvass support rotate-secret`). Queued retries are signed with
 * the new secret at once; for CANVASS_SECRET_OVERLAP_MS the old one signs alongside it. A second
 * rotation within that overlap drops the secret the first one gave out, which receivers may
 * already use: it is refused unless `force`.
 */
export async function rotateSigningSecret(deps: Deps, accountId: string, opts: { force?: boolean } = {}) {
  await requireAccountExists(deps.store, accountId);
  const signingSecret = newSigningSecret();
  const now = deps.clock.now();
  const overlapMs = deps.delivery.secretOverlapMs;
  const done = await deps.store.accounts.setSigningSecret(
    accountId,
    signingSecret,
    now,
    new Date(now.getTime() - overlapMs),
    opts.force,
  );
  if (!done.rotated) {
    const ends = new Date(done.lastRotatedAt.getTime() + overlapMs).toISOString();
    throw new DomainError(
      'conflict',
      `the secret was rotated at ${done.lastRotatedAt.toISOString()}, and its overlap runs until ${ends}: another rotation now drops the secret that one gave out, which receivers may already use (--force to rotate anyway)`,
    );
  }
  return { accountId, signingSecret, previousUntil: new Date(now.getTime() + overlapMs).toISOString() };
}
