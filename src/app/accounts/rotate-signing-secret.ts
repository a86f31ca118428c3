import { notFound } from '../../domain/errors.js';
import { newSigningSecret } from '../../domain/signature.js';
import type { Deps } from '../ports/index.js';

/** Rotation is for support only (`canvass support rotate-secret`); queued retries pick the new secret up at once. */
export async function rotateSigningSecret(deps: Deps, accountId: string) {
  if (!(await deps.store.accounts.get(accountId))) throw notFound('account');
  const signingSecret = newSigningSecret();
  await deps.store.accounts.setSigningSecret(accountId, signingSecret, deps.clock.now());
  return { accountId, signingSecret };
}
