import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idsMadeBefore } from '../../../src/domain/ids.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';

// A key of a user's own opens each account the user belongs to. Every account can cut such a
// key off from itself (withdraw it), and none can cut another account's member off from that
// account (docs/operations.md, "API keys across accounts").

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(() => h?.close());

type Listed = {
  id: string;
  email: string;
  prefix: string;
  limited: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};
const req = (method: 'GET' | 'POST' | 'DELETE', url: string, key: string, payload?: object) =>
  h.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
const listed = async (acct: TestAccount): Promise<Listed[]> =>
  (await req('GET', `/keys?accountId=${acct.accountId}&limit=100`, acct.key)).json().data as Listed[];
/** The email of the account's owner: that of its oldest key, made with the account. */
const ownerEmailOf = async (acct: TestAccount) => (await listed(acct)).at(-1)!.email;
/** Adds `email` to the account through POST /keys, by its owner; the key made. */
const join = async (acct: TestAccount, email: string, role = 'editor') => {
  const res = await req('POST', '/keys', acct.key, { accountId: acct.accountId, email, role });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.apiKey as string;
};
/** Accounts A and B, and an editor of A whom B added too: the member's own key opens both. */
const sharedMember = async (email: string) => {
  const a = await h.account();
  const b = await h.account();
  const member = await h.member(a.accountId, 'editor', email);
  await join(b, email);
  return { a, b, email, member };
};
const opens = async (key: string, acct: TestAccount) =>
  (await req('GET', `/polls?accountId=${acct.accountId}`, key)).statusCode === 200;

describe('a key of a member of two accounts', () => {
  let a: TestAccount;
  let b: TestAccount;
  let member: string;
  let keyId: string;
  const email = 'two.accounts@example.com';

  beforeAll(async () => {
    a = await h.account({ name: 'A' });
    b = await h.account({ name: 'B' });
    member = await h.member(a.accountId, 'editor', email);
    await opens(member, a); // a last use, which B's doings must not show A
    // B's owner adds A's member to B: the member's own key now opens B too.
    await join(b, email);
    expect([await opens(member, a), await opens(member, b)]).toEqual([true, true]);
    keyId = (await listed(a)).find((k) => k.prefix === member.slice(0, 8))!.id;
  });

  it('stays in the list of each account it opens, without a last use that may have been elsewhere', async () => {
    for (const acct of [a, b]) {
      const k = (await listed(acct)).find((x) => x.id === keyId);
      expect(k).toMatchObject({ limited: false, lastUsedAt: null, revokedAt: null });
    }
  });

  it('its member, an admin of one account, sees its own key’s last use there', async () => {
    const email = 'admin.of.one@example.com';
    const admin = await h.member(a.accountId, 'admin', email);
    await join(b, email, 'read_only');
    const listedByAdmin = (await req('GET', `/keys?accountId=${a.accountId}&limit=100`, admin)).json().data as Listed[];
    expect(listedByAdmin.find((k) => k.prefix === admin.slice(0, 8))!.lastUsedAt).not.toBeNull();
    // Another member's key that opens B, where this admin is no admin: its last use stays out.
    expect(listedByAdmin.find((k) => k.id === keyId)!.lastUsedAt).toBeNull();
  });

  it('revoked by one account’s owner, is withdrawn from that account only, and stays withdrawn', async () => {
    const res = await req('DELETE', `/keys?keyId=${keyId}`, a.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ id: keyId, revoked: false, withdrawnFrom: [a.accountId] });
    expect([await opens(member, a), await opens(member, b)]).toEqual([false, true]);
    const accounts = (await req('GET', '/accounts', member)).json().data as { accountId: string }[];
    expect(accounts.map((m) => m.accountId)).toEqual([b.accountId]);
    expect((await listed(a)).find((k) => k.id === keyId)!.revokedAt).not.toBeNull();
    expect((await listed(b)).find((k) => k.id === keyId)!.revokedAt).toBeNull();
    // Asked again, the same answer; and removing and adding the member back does not reopen A.
    expect((await req('DELETE', `/keys?keyId=${keyId}`, a.key)).json().data).toEqual(res.json().data);
    const removed = await req('DELETE', `/members?accountId=${a.accountId}&email=${email}`, a.key);
    expect(removed.statusCode, removed.body).toBe(200);
    const back = await join(a, email);
    expect([await opens(member, a), await opens(back, a)]).toEqual([false, true]);
    expect(await opens(member, b)).toBe(true);
  });

  it('withdrawn from an account, may not revoke the keys made for that account', async () => {
    const limited = await join(a, email);
    const limitedId = (await listed(a)).find((k) => k.prefix === limited.slice(0, 8))!.id;
    const res = await req('DELETE', `/keys?keyId=${limitedId}`, member);
    expect([res.statusCode, res.json().code]).toEqual([404, 'not_found']);
    expect(await opens(limited, a)).toBe(true);
  });

  it('revoked by the owner of the last account it opens, is revoked outright; asked again, the same', async () => {
    const res = await req('DELETE', `/keys?keyId=${keyId}`, b.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ id: keyId, revoked: true, withdrawnFrom: [] });
    const next = await req('GET', `/polls?accountId=${b.accountId}`, member);
    expect([next.statusCode, next.json().code]).toEqual([401, 'unauthenticated']);
    expect((await req('DELETE', `/keys?keyId=${keyId}`, a.key)).json().data).toEqual(res.json().data);
    expect((await req('DELETE', `/keys?keyId=${keyId}`, b.key)).json().data).toEqual(res.json().data);
  });
});

describe('revoking across accounts', () => {
  it('by one who administers every account the key opens revokes it outright at once', async () => {
    const { a, b, member } = await sharedMember('both.accounts@example.com');
    await join(b, await ownerEmailOf(a), 'admin');
    await opens(member, b); // a last use, in B
    const k = (await listed(a)).find((x) => x.prefix === member.slice(0, 8))!;
    // A's owner administers both: the key's last use is theirs to see, and the revoke is outright.
    expect(k.lastUsedAt).not.toBeNull();
    const res = await req('DELETE', `/keys?keyId=${k.id}`, a.key);
    expect(res.json().data).toEqual({ id: k.id, revoked: true, withdrawnFrom: [] });
    expect((await req('GET', `/polls?accountId=${b.accountId}`, member)).statusCode).toBe(401);
  });

  it('withdrawn by both its accounts at the same instant, is revoked outright by whichever comes second', async () => {
    // Each withdrawal reads the others under the key's row lock: without it, both could read
    // none and leave the key withdrawn everywhere, yet not revoked. (On PGlite, whose one
    // connection runs transactions one at a time, they cannot overlap: the PostgreSQL pass tests it.)
    for (let i = 0; i < 8; i++) {
      const { a, b, member } = await sharedMember(`at.once.${i}@example.com`);
      const id = (await listed(a)).find((x) => x.prefix === member.slice(0, 8))!.id;
      const answers = await Promise.all([a, b].map((acct) => req('DELETE', `/keys?keyId=${id}`, acct.key)));
      expect(answers.map((r) => r.statusCode)).toEqual([200, 200]);
      expect(answers.map((r) => (r.json().data as { revoked: boolean }).revoked).sort()).toEqual([false, true]);
      expect((await req('GET', `/polls?accountId=${a.accountId}`, member)).json().code).toBe('unauthenticated');
    }
  });

  it('another account cannot stop an owner withdrawing a key from their own', async () => {
    // B adds A's editor, and A's owner as read_only: A's owner may act in A, not in B.
    const { a, b, member } = await sharedMember('hostage@example.com');
    await join(b, await ownerEmailOf(a), 'read_only');
    const keyId = (await listed(a)).find((k) => k.prefix === member.slice(0, 8))!.id;
    const res = await req('DELETE', `/keys?keyId=${keyId}`, a.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ id: keyId, revoked: false, withdrawnFrom: [a.accountId] });
    expect([await opens(member, a), await opens(member, b)]).toEqual([false, true]);
  });

  it('a key that opens none of the caller’s accounts answers 404', async () => {
    const a = await h.account();
    const b = await h.account();
    const theirs = (await listed(b))[0]!.id;
    expect((await req('DELETE', `/keys?keyId=${theirs}`, a.key)).statusCode).toBe(404);
  });

  it('the key of a member who outranks the caller in a shared account is refused, even where it opens others', async () => {
    // The owner of `first` also belongs to `second`; an admin of `first` is not in `second`.
    const first = await h.account({ name: 'First' });
    const second = await h.account({ name: 'Second' });
    const owner = (await listed(first))[0]!;
    await join(second, owner.email);
    const admin = await h.member(first.accountId, 'admin', 'first.admin@example.com');
    const res = await req('DELETE', `/keys?keyId=${owner.id}`, admin);
    expect([res.statusCode, res.json().code]).toEqual([403, 'role_forbidden']);
    expect([await opens(first.key, first), await opens(first.key, second)]).toEqual([true, true]);
  });

  it('an editor may not withdraw another member’s key, and a withdrawal of one account leaves its other keys alone', async () => {
    const { a, email, member } = await sharedMember('shared.editor@example.com');
    const editor = await h.member(a.accountId, 'editor');
    const keyId = (await listed(a)).find((k) => k.prefix === member.slice(0, 8))!.id;
    const res = await req('DELETE', `/keys?keyId=${keyId}`, editor);
    expect([res.statusCode, res.json().code]).toEqual([403, 'role_forbidden']);
    expect(await opens(member, a)).toBe(true);
    // Withdrawn from A, the key made for A alone by A's owner still opens A.
    const limited = await join(a, email);
    expect((await req('DELETE', `/keys?keyId=${keyId}`, a.key)).json().data.revoked).toBe(false);
    expect([await opens(member, a), await opens(limited, a)]).toEqual([false, true]);
  });
});

describe('adding a member by email', () => {
  it('answers a user id that tells nothing of whether, or since when, they were a user', async () => {
    const a = await h.account();
    const b = await h.account();
    const oldEmail = 'long.time.user@example.com';
    await h.member(a.accountId, 'editor', oldEmail);
    const madeAt = h.clock.now().getTime();
    h.clock.advance(30 * 86_400_000);
    const add = async (email: string) => {
      const res = await req('POST', '/keys', b.key, { accountId: b.accountId, email, role: 'editor' });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.userId as string;
    };
    const ids = [await add(oldEmail), await add('brand.new.user@example.com')];
    for (const id of ids) {
      expect(id).toMatch(/^usr_[0-9A-Za-z]{22}$/);
      // Not the time-ordered ids of other rows: neither starts with the time it was made.
      for (const ms of [madeAt, h.clock.now().getTime()]) expect(id.slice(0, 12)).not.toBe(idsMadeBefore('usr', ms));
    }
  });

  // Each account's lock is its own, so the two inserts of the new user meet only at the email's
  // unique index. PGlite runs them one after the other; the PostgreSQL pass is what tests it.
  it('in two accounts at once, by an email no user has yet, adds one user to both', async () => {
    for (let round = 0; round < 8; round++) {
      const [a, b] = [await h.account(), await h.account()];
      const email = `new.to.both.${round}@example.com`;
      const res = await Promise.all(
        [a, b].map((acct) => req('POST', '/keys', acct.key, { accountId: acct.accountId, email, role: 'editor' })),
      );
      expect(
        res.map((r) => r.statusCode),
        res.map((r) => r.body).join(),
      ).toEqual([201, 201]);
      const [x, y] = res.map((r) => r.json().data.userId as string);
      expect(x).toBe(y);
    }
  });
});
