import { useLoad } from './hooks';
import { planServed, useSession } from './session';

/**
 * The account's quotas and how much of each it uses (`GET /account/usage`), loaded again when
 * `version` changes. Not asked on a plan the API does not serve: the page already says why.
 */
export function useAccountUsage(version: number | string = 0) {
  const { api, account } = useSession();
  const served = planServed(account.plan);
  const usage = useLoad(
    () => (served ? api.get('/account/usage', { accountId: account.accountId }) : Promise.resolve(undefined)),
    `${account.accountId}:${version}`,
  );
  return {
    /** The figures, only while they are current: a failed reload shows its error, not the old figures. */
    figures: usage.error ? undefined : usage.data?.data,
    error: usage.error && `The account's usage could not be loaded: ${usage.error}`,
    reload: usage.reload,
  };
}
