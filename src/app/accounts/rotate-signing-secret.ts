import { newSigningSecret } from '../../domain/signature.js';
import { requireAccountExists } from '../access.js';
import type { Deps } from '../ports/index.js';

/**
 * Rotation is for support only (`canvass support rotate-secret`). Queued retries are signed with
 * the new secret at once; for CANVASS_SECRET_OVERLAP_MS the old one signs alongside it.
 */
export async function rotateSigningSecret(deps: Deps, accountId: string) {
  await requireAccountExists(deps.store, accountId);
  const signingSecret = newSigningSecret();
  const now = deps.clock.now();
  await deps.store.accounts.setSigningSecret(
    accountId,
    signingSecret,
    now,
    new Date(now.getTime() - deps.delivery.secretOverlapMs),
  );
  return { accountId, signingSecret };
}
