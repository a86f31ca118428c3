import type { Membership, Plan, Role } from '../../domain/access.js';
import type { AccountDefaults } from '../../domain/poll-defaults.js';
import type { Account } from '../../domain/account.js';
import type { Page, PageRequest } from './common.js';

export interface AccountRepo {
  insert(a: Omit<Account, 'signingSecret' | 'defaults' | 'notificationRecipients'>): Promise<void>;
  get(id: string): Promise<Account | undefined>;
  count(): Promise<number>;
  setPlan(id: string, plan: Plan, now: Date): Promise<boolean>;
  setDefaults(id: string, defaults: AccountDefaults, recipients: string[] | null, now: Date): Promise<void>;
  /** Rotates: the old secret signs alongside until the overlap ends (see overlapSince in DeliveryRepo.claim). */
  /**
   * Replaces the signing secret, keeping the one it replaces for the overlap. Unless `force`, only
   * when the last rotation was at or before `overlapSince` (or never); otherwise nothing changes
   * and the time of the last rotation is returned.
   */
  setSigningSecret(
    id: string,
    secret: string,
    now: Date,
    overlapSince: Date,
    force?: boolean,
  ): Promise<{ rotated: true } | { rotated: false; lastRotatedAt: Date }>;
  /** Row lock for the rest of the transaction. */
  lock(id: string): Promise<void>;
  /** What the account holds of what its quotas count (live keys: those limited to it). */
  usage(id: string): Promise<{ polls: number; members: number; liveKeys: number }>;
  /** Sets the secret only where none exists; true when this call set it. */
  setSigningSecretIfMissing(id: string, secret: string, now: Date): Promise<boolean>;
}

export type AccountMembership = Membership & { accountName: string };

export interface UserRepo {
  /**
   * The user stored under any of `emails` (the forms of one address), the first form's when two
   * are; else the one whose mailbox key is `mailbox` (an address written another way that names
   * the same mailbox, `a@ｅxample.com` for `a@example.com`).
   */
  findByEmail(emails: readonly string[], mailbox?: string): Promise<{ id: string; email: string } | undefined>;
  /**
   * Inserts the user unless one has the email or the mailbox already (a concurrent insert
   * included); the stored user's id. `mailbox` is the address's key, `comparableAddress`.
   */
  insertOrFind(u: { id: string; email: string; mailbox: string; createdAt: Date }): Promise<string>;
  addMembership(m: { accountId: string; userId: string; role: Role; createdAt: Date }): Promise<void>;
  setRole(accountId: string, userId: string, role: Role): Promise<void>;
  membership(accountId: string, userId: string): Promise<Membership | undefined>;
  memberships(userId: string): Promise<AccountMembership[]>;
  ownerEmail(accountId: string): Promise<string | undefined>;
  /** The addresses of the account's members in one of `roles`. */
  memberEmails(accountId: string, roles: readonly Role[]): Promise<string[]>;
  removeMembership(accountId: string, userId: string): Promise<void>;
  countOwners(accountId: string): Promise<number>;
}

export type KeyView = {
  id: string;
  prefix: string | null;
  email: string;
  role: Role;
  /** Made for this account only; otherwise the user's own key, opening each of their accounts. */
  limited: boolean;
  createdAt: Date;
  /** Null too for a key that also opens an account the viewer neither owns nor administers. */
  lastUsedAt: Date | null;
  /** When it was revoked, or withdrawn from this account. */
  revokedAt: Date | null;
};

export interface KeyRepo {
  insert(k: {
    id: string;
    userId: string;
    keyHash: string;
    prefix: string;
    accountId: string | null;
    createdAt: Date;
    /** The API caller who made it (null: an operator, or the account's creation). */
    createdBy?: string | null;
    /** The key it was made with (null as createdBy is). */
    createdWith?: string | null;
  }): Promise<void>;
  /** The user a live key belongs to, the one account it is limited to, if any, and those it was withdrawn from. */
  findByHash(
    hash: string,
  ): Promise<
    | { keyId: string; userId: string; accountId: string | null; withdrawnFrom: string[]; lastUsedAt: Date | null }
    | undefined
  >;
  /** findByHash by the key's id: the caller as their key stands now (a request that runs long checks again). */
  findLive(
    id: string,
  ): Promise<{ keyId: string; userId: string; accountId: string | null; withdrawnFrom: string[] } | undefined>;
  /** Records a use of the key, at most once a minute (a write per request would cost every request). */
  touch(id: string, now: Date): Promise<void>;
  /**
   * A key, row-locked until the transaction ends: revocations and withdrawals of one key take
   * turns, so each decides on the withdrawals the one before it made.
   */
  get(
    id: string,
  ): Promise<
    | { id: string; userId: string; accountId: string | null; withdrawnFrom: string[]; revokedAt: Date | null }
    | undefined
  >;
  /**
   * The keys of the account's members that open it or did, newest first: those limited to it,
   * and those limited to no account (withdrawn from it: revoked, as far as it goes). For a
   * `viewer` (a user id; `viewerLimited` when their key opens this account only), the last use
   * of a key that also opens an account the viewer neither owns nor administers is left out.
   */
  listForAccount(
    accountId: string,
    page: PageRequest,
    viewer?: string,
    viewerLimited?: boolean,
  ): Promise<Page<KeyView>>;
  /**
   * Revokes live keys: one, every key of a user, or a user's keys limited to one account; or
   * keys someone saw when they were made, limited to one account, and the keys made with those,
   * on down: those a user made for others, all of them (`madeBy`) or only those of members of
   * these `roles`; or a user's own that another member made (`madeFor`), and the user's own
   * made with those.
   */
  revoke(
    filter:
      | { id: string }
      | { userId: string; accountId?: string }
      | { madeBy: string; accountId: string; roles?: readonly Role[] }
      | { madeFor: string; accountId: string },
    now: Date,
  ): Promise<number>;
  /** Withdraws a key from these accounts: it no longer opens them (a withdrawal already made stands). */
  withdraw(id: string, accountIds: readonly string[], now: Date): Promise<void>;
}
