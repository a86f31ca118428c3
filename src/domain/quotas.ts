/**
 * What one account may hold: the rows an API caller could otherwise make without end, each a
 * write that a rate limit slows but never stops (docs/operations.md, "Quotas"). Each is a
 * setting (CANVASS_QUOTA_*); these are the defaults.
 */
export type Quotas = Readonly<{
  /** Polls an account holds; a deleted poll frees its place. */
  pollsPerAccount: number;
  /** Members of one account. */
  membersPerAccount: number;
  /** Live keys limited to one account: each is a rate-limit budget of its own. */
  liveKeysPerAccount: number;
  /** Synthetic respondents of one poll, over all its research runs. */
  syntheticParticipantsPerPoll: number;
}>;

export const DEFAULT_QUOTAS: Quotas = Object.freeze({
  pollsPerAccount: 10_000,
  membersPerAccount: 250,
  liveKeysPerAccount: 250,
  syntheticParticipantsPerPoll: 10_000,
});
