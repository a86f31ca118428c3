import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeMember } from '../../../src/app/accounts/remove-member.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';

// API keys can be listed (never shown again), made for members (no role above the caller's),
// revoked at once, and members removed; the last owner stays.

let h: Harness;
let acct: TestAccount;

beforeAll(async () => {
  h = await harness();
  acct = await h.account();
});
afterAll(() => h?.close());

const req = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string, payload?: object) =>
  h.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
const polls = (key: string) => req('GET', `/polls?accountId=${acct.accountId}`, key);

describe('API keys', () => {
  it('are listed with a prefix and their member, never the key; last use is recorded', async () => {
    await polls(acct.key);
    const res = await req('GET', `/keys?accountId=${acct.accountId}`, acct.key);
    expect(res.statusCode, res.body).toBe(200);
    const [own] = res.json().data as { prefix: string; email: string; role: string; lastUsedAt: string | null }[];
    expect(own).toMatchObject({ prefix: acct.key.slice(0, 8), role: 'owner', revokedAt: null });
    expect(own!.lastUsedAt).not.toBeNull();
    expect(res.body).not.toContain(acct.key);
  });

  it('are made for a member with a role no higher than the caller’s, shown once', async () => {
    const admin = await h.member(acct.accountId, 'admin', 'admin.keys@example.com');
    const made = await req('POST', '/keys', admin, {
      accountId: acct.accountId,
      email: 'new.editor@example.com',
      role: 'editor',
    });
    expect(made.statusCode, made.body).toBe(201);
    // Shown once, and kept by no cache on the way.
    expect(made.headers['cache-control']).toBe('no-store');
    const key = made.json().data.apiKey as string;
    expect(key).toMatch(/^cvk_/);
    expect((await polls(key)).statusCode).toBe(200);
    const higher = await req('POST', '/keys', admin, {
      accountId: acct.accountId,
      email: 'boss@example.com',
      role: 'owner',
    });
    expect([higher.statusCode, higher.json().code]).toEqual([403, 'role_forbidden']);
    const editor = await req('POST', '/keys', key, {
      accountId: acct.accountId,
      email: 'x@example.com',
      role: 'read_only',
    });
    expect([editor.statusCode, editor.json().code]).toEqual([403, 'role_forbidden']);
    expect((await req('GET', `/keys?accountId=${acct.accountId}`, key)).statusCode).toBe(403);
  });

  it('made through the API open only the account they were made for, whatever else their user belongs to', async () => {
    const other = await h.account({ name: 'Elsewhere' });
    const ownerEmail = (await req('GET', `/keys?accountId=${other.accountId}`, other.key)).json().data[0]
      .email as string;
    const res = await req('POST', '/keys', acct.key, {
      accountId: acct.accountId,
      email: ownerEmail,
      role: 'read_only',
    });
    expect(res.statusCode, res.body).toBe(201);
    const key = res.json().data.apiKey as string;
    expect((await polls(key)).statusCode).toBe(200);
    expect((await req('GET', `/polls?accountId=${other.accountId}`, key)).statusCode).toBe(404);
    expect((await req('GET', `/account/settings?accountId=${other.accountId}`, key)).statusCode).toBe(404);
    expect((await req('GET', '/accounts', key)).json().data.map((m: { accountId: string }) => m.accountId)).toEqual([
      acct.accountId,
    ]);
    // The other account's own list shows no key that does not open it.
    const theirs = (await req('GET', `/keys?accountId=${other.accountId}&limit=100`, other.key)).json().data as {
      prefix: string;
    }[];
    expect(theirs.map((k) => k.prefix)).not.toContain(key.slice(0, 8));
    // That key, made an admin's, lists its user's own key (which opens this account too) but not
    // its last use: whoever made it (this account's owner) holds it, and administers no other account.
    const admin = await req('POST', '/keys', acct.key, { accountId: acct.accountId, email: ownerEmail, role: 'admin' });
    expect(admin.statusCode, admin.body).toBe(201);
    const listed = await req('GET', `/keys?accountId=${acct.accountId}&limit=100`, admin.json().data.apiKey as string);
    expect(listed.statusCode, listed.body).toBe(200);
    const own = (listed.json().data as { prefix: string; limited: boolean; lastUsedAt: string | null }[]).find(
      (k) => k.prefix === other.key.slice(0, 8),
    );
    expect(own).toMatchObject({ limited: false, lastUsedAt: null });
  });

  it('are refused on the very next request once revoked', async () => {
    const key = await h.member(acct.accountId, 'editor', 'revoked@example.com');
    expect((await polls(key)).statusCode).toBe(200);
    const listed = (await req('GET', `/keys?accountId=${acct.accountId}&limit=100`, acct.key)).json().data as {
      id: string;
      prefix: string;
    }[];
    const id = listed.find((k) => k.prefix === key.slice(0, 8))!.id;
    const revoked = await req('DELETE', `/keys?keyId=${id}`, acct.key);
    expect(revoked.statusCode, revoked.body).toBe(200);
    const next = await polls(key);
    expect([next.statusCode, next.json().code]).toEqual([401, 'unauthenticated']);
    const after = (await req('GET', `/keys?accountId=${acct.accountId}&limit=100`, acct.key)).json().data as {
      id: string;
      revokedAt: string | null;
    }[];
    expect(after.find((k) => k.id === id)!.revokedAt).not.toBeNull();
  });

  it('of another account answer 404, and an admin may not revoke an owner’s', async () => {
    const other = await h.account();
    const theirs = (await req('GET', `/keys?accountId=${other.accountId}`, other.key)).json().data[0].id as string;
    expect((await req('DELETE', `/keys?keyId=${theirs}`, acct.key)).statusCode).toBe(404);
    expect((await req('GET', `/keys?accountId=${other.accountId}`, acct.key)).statusCode).toBe(404);
    const admin = await h.member(acct.accountId, 'admin', 'admin.revoker@example.com');
    const owners = (await req('GET', `/keys?accountId=${acct.accountId}&limit=100`, acct.key)).json().data as {
      id: string;
      role: string;
    }[];
    const ownerKey = owners.find((k) => k.role === 'owner')!.id;
    const res = await req('DELETE', `/keys?keyId=${ownerKey}`, admin);
    expect([res.statusCode, res.json().code]).toEqual([403, 'role_forbidden']);
    expect((await polls(acct.key)).statusCode).toBe(200);
  });
});

describe('removing a member', () => {
  it('ends their access and revokes their keys; the last owner cannot be removed', async () => {
    const key = await h.member(acct.accountId, 'editor', 'leaving@example.com');
    const res = await req('DELETE', `/members?accountId=${acct.accountId}&email=leaving@example.com`, acct.key);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ removed: true, revokedKeys: 1 });
    expect((await polls(key)).statusCode).toBe(401);

    const owner = (await h.deps.store.users.memberships(acct.userId))[0]!;
    expect(owner.role).toBe('owner');
    const email = (await req('GET', `/keys?accountId=${acct.accountId}&limit=100`, acct.key))
      .json()
      .data.find((k: { role: string }) => k.role === 'owner').email as string;
    const last = await req(
      'DELETE',
      `/members?accountId=${acct.accountId}&email=${encodeURIComponent(email)}`,
      acct.key,
    );
    expect([last.statusCode, last.json().code]).toEqual([409, 'conflict']);
    const missing = await req('DELETE', `/members?accountId=${acct.accountId}&email=nobody@example.com`, acct.key);
    expect(missing.statusCode).toBe(404);
  });

  it('takes their address off the alert recipients, and a list left empty is unset', async () => {
    const other = await h.account();
    await h.member(other.accountId, 'admin', 'alerted@example.com');
    await h.member(other.accountId, 'billing_admin', 'also.alerted@example.com');
    const settings = (recipients: string[]) =>
      req('PATCH', '/account/settings', other.key, { accountId: other.accountId, notificationRecipients: recipients });
    const recipients = async () =>
      (await req('GET', `/account/settings?accountId=${other.accountId}`, other.key)).json().data
        .notificationRecipients as string[] | null;
    const remove = (email: string) =>
      req('DELETE', `/members?accountId=${other.accountId}&email=${encodeURIComponent(email)}`, other.key);
    expect((await settings(['Alerted@example.com', 'ops@example.com'])).statusCode).toBe(200);
    expect((await remove('ALERTED@example.com')).statusCode).toBe(200);
    expect(await recipients()).toEqual(['ops@example.com']);
    expect((await settings(['also.alerted@example.com'])).statusCode).toBe(200);
    expect((await remove('also.alerted@example.com')).statusCode).toBe(200);
    expect(await recipients()).toBeNull();
  });

  it('takes their address off the recipients in either form of an internationalised domain', async () => {
    const other = await h.account();
    // An operator adds a member at an internationalised domain; the API lists the ASCII form.
    await h.member(other.accountId, 'admin', 'ann@exämple.de');
    const set = await req('PATCH', '/account/settings', other.key, {
      accountId: other.accountId,
      notificationRecipients: ['ann@xn--exmple-cua.de', 'ops@example.com'],
    });
    expect(set.statusCode, set.body).toBe(200);
    await removeMember(h.deps, 'operator', { accountId: other.accountId, email: 'ann@exämple.de' });
    const after = (await req('GET', `/account/settings?accountId=${other.accountId}`, other.key)).json().data;
    expect(after.notificationRecipients).toEqual(['ops@example.com']);
  });

  it('works for the addresses the CLI takes: internationalised ones and hosts without dots, either form naming one member', async () => {
    const other = await h.account();
    const make = (email: string) =>
      req('POST', '/keys', other.key, { accountId: other.accountId, email, role: 'admin' });
    const members = async () =>
      ((await req('GET', `/keys?accountId=${other.accountId}`, other.key)).json().data as { email: string }[])
        .map((k) => k.email)
        .sort();
    for (const email of ['jörg@exämple.de', 'ops@intranet']) {
      const made = await make(email);
      expect(made.statusCode, made.body).toBe(201);
    }
    // The same address with its domain in ASCII is the same member, who gets a second key.
    expect((await make('JÖRG@xn--exmple-cua.de')).statusCode).toBe(201);
    const listed = await members();
    expect(listed.filter((e) => e === 'jörg@exämple.de')).toHaveLength(2);
    expect(listed).not.toContain('jörg@xn--exmple-cua.de');
    // Alerts may go to such members, and they can be removed by either form.
    const set = await req('PATCH', '/account/settings', other.key, {
      accountId: other.accountId,
      notificationRecipients: ['jörg@exämple.de', 'JÖRG@xn--exmple-cua.de', 'ops@intranet'],
    });
    expect(set.statusCode, set.body).toBe(200);
    // One mailbox once, as first listed.
    expect(set.json().data.notificationRecipients).toEqual(['jörg@exämple.de', 'ops@intranet']);
    const remove = (email: string) =>
      req('DELETE', `/members?accountId=${other.accountId}&email=${encodeURIComponent(email)}`, other.key);
    const gone = await remove('jörg@xn--exmple-cua.de');
    expect(gone.statusCode, gone.body).toBe(200);
    expect(gone.json().data.revokedKeys).toBe(2);
    expect((await remove('ops@intranet')).statusCode).toBe(200);
    expect(await members()).not.toContain('ops@intranet');
    const after = (await req('GET', `/account/settings?accountId=${other.accountId}`, other.key)).json().data;
    expect(after.notificationRecipients).toBeNull();
    // What is no address stays a 400 naming the field.
    for (const bad of ['bob', 'e@@example.com', 'ann @example.com', '"ann"@example.com']) {
      const res = await make(bad);
      expect([res.statusCode, res.json().code], bad).toEqual([400, 'validation_failed']);
    }
  });
});

describe('keys a member made for other members', () => {
  const made = async (by: string, email: string, role: string) => {
    const res = await req('POST', '/keys', by, { accountId: acct.accountId, email, role });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.apiKey as string;
  };

  it('are revoked with the member who made them when they are removed; their holder’s other keys are not', async () => {
    const admin = await h.member(acct.accountId, 'admin', 'minting.admin@example.com');
    const colleague = await h.member(acct.accountId, 'admin', 'colleague.admin@example.com');
    // The admin made a key for a colleague, so it was shown to the admin.
    const forColleague = await made(admin, 'colleague.admin@example.com', 'admin');
    const forSelf = await made(admin, 'minting.admin@example.com', 'admin');
    expect((await polls(forColleague)).statusCode).toBe(200);
    const res = await req('DELETE', `/members?accountId=${acct.accountId}&email=minting.admin@example.com`, acct.key);
    expect(res.statusCode, res.body).toBe(200);
    // Their own two keys, and the one they made for the colleague.
    expect(res.json().data).toMatchObject({ removed: true, revokedKeys: 3 });
    for (const k of [admin, forSelf, forColleague]) expect((await polls(k)).statusCode).toBe(401);
    expect((await polls(colleague)).statusCode).toBe(200);
  });

  it('are revoked when the member who made them may no longer manage the account, not when they still may', async () => {
    const admin = await h.member(acct.accountId, 'admin', 'demoted.admin@example.com');
    await h.member(acct.accountId, 'editor', 'their.editor@example.com');
    const forEditor = await made(admin, 'their.editor@example.com', 'editor');
    const forSelf = await made(admin, 'demoted.admin@example.com', 'admin');
    // Owner to admin keeps the right to manage: nothing is revoked.
    await made(acct.key, 'demoted.admin@example.com', 'owner');
    await made(acct.key, 'demoted.admin@example.com', 'admin');
    expect((await polls(forEditor)).statusCode).toBe(200);
    // Admin to editor loses it: the key they made for the editor goes; their own keys stay.
    await made(acct.key, 'demoted.admin@example.com', 'editor');
    expect((await polls(forEditor)).statusCode).toBe(401);
    expect((await polls(forSelf)).statusCode).toBe(200);
    expect((await polls(admin)).statusCode).toBe(200);
  });

  it('go with their maker together with every key made with them, on down', async () => {
    const maker = await h.member(acct.accountId, 'admin', 'chain.maker@example.com');
    const held = await h.member(acct.accountId, 'admin', 'chain.holder@example.com');
    await h.member(acct.accountId, 'editor', 'chain.editor@example.com');
    // A key the maker made for a colleague, and what the maker (who saw it) made with it.
    const forHolder = await made(maker, 'chain.holder@example.com', 'admin');
    const madeWith = await made(forHolder, 'chain.holder@example.com', 'admin');
    const further = await made(madeWith, 'chain.editor@example.com', 'editor');
    for (const k of [forHolder, madeWith, further]) expect((await polls(k)).statusCode).toBe(200);
    const res = await req('DELETE', `/members?accountId=${acct.accountId}&email=chain.maker@example.com`, acct.key);
    expect(res.statusCode, res.body).toBe(200);
    for (const k of [maker, forHolder, madeWith, further]) expect((await polls(k)).statusCode).toBe(401);
    // The colleague's own key, made by no member, stays.
    expect((await polls(held)).statusCode).toBe(200);
  });

  it('of a member promoted, made by another member, go with what was made with them: their maker would hold the new role', async () => {
    const admin = await h.member(acct.accountId, 'admin', 'promoting.admin@example.com');
    await h.member(acct.accountId, 'admin', 'promoted@example.com');
    const seenByAdmin = await made(admin, 'promoted@example.com', 'admin');
    const madeWith = await made(seenByAdmin, 'promoted@example.com', 'admin');
    await h.member(acct.accountId, 'editor', 'ci.editor@example.com');
    const forOther = await made(seenByAdmin, 'ci.editor@example.com', 'editor');
    const ownMade = await made(admin, 'promoting.admin@example.com', 'admin');
    const fresh = await made(acct.key, 'promoted@example.com', 'owner');
    for (const k of [seenByAdmin, madeWith]) expect((await polls(k)).statusCode).toBe(401);
    // Another member's key made with one of them gives no one more than before: it stays.
    expect((await polls(forOther)).statusCode).toBe(200);
    // The key in the answer works; the admin's own keys stay.
    expect((await polls(fresh)).statusCode).toBe(200);
    expect((await polls(ownMade)).statusCode).toBe(200);
    expect((await polls(admin)).statusCode).toBe(200);
  });

  it('a demoted maker keeps none it made for members who now outrank it, and leaves the alert recipients below the roles that see URLs', async () => {
    const other = await h.account();
    const req2 = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string, payload?: object) =>
      h.app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) });
    const make = async (by: string, email: string, role: string) => {
      const res = await req2('POST', '/keys', by, { accountId: other.accountId, email, role });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.apiKey as string;
    };
    const reads = (key: string) => req2('GET', `/polls?accountId=${other.accountId}`, key);
    const second = await h.member(other.accountId, 'owner', 'second.owner@example.com');
    await h.member(other.accountId, 'owner', 'carol@example.com');
    await h.member(other.accountId, 'editor', 'ed@example.com');
    const forCarol = await make(second, 'carol@example.com', 'owner');
    const forEd = await make(second, 'ed@example.com', 'editor');
    const edWithCarols = await make(forCarol, 'ed@example.com', 'editor');
    expect(
      (
        await req2('PATCH', '/account/settings', other.key, {
          accountId: other.accountId,
          notificationRecipients: ['second.owner@example.com', 'ops@example.com'],
        })
      ).statusCode,
    ).toBe(200);
    // Owner to admin: the owner key it made goes, the editor's stays; it still sees URLs.
    await make(other.key, 'second.owner@example.com', 'admin');
    expect((await reads(forCarol)).statusCode).toBe(401);
    expect((await reads(forEd)).statusCode).toBe(200);
    // Made with the owner key, but an editor's: an admin may make it anyway, so it stays.
    expect((await reads(edWithCarols)).statusCode).toBe(200);
    const recipients = async () =>
      (await req2('GET', `/account/settings?accountId=${other.accountId}`, other.key)).json().data
        .notificationRecipients as string[] | null;
    expect(await recipients()).toEqual(['second.owner@example.com', 'ops@example.com']);
    // Admin to read_only: below the roles that see webhook URLs, off the list.
    await make(other.key, 'second.owner@example.com', 'read_only');
    expect(await recipients()).toEqual(['ops@example.com']);
  });
});
