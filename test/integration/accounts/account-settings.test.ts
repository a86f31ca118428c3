import { beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../../support/app.js';
import {
  acme,
  acmeAdmin,
  acmeEditor,
  acmeReader,
  call,
  createPoll,
  expectProblem,
  h,
  paths,
  SPEC_DISPLAY,
  SPEC_EMAIL,
  SPEC_SMS,
  SPEC_VISIBILITY,
  usePollsApi,
} from '../../support/polls-api.js';

/**
 * Route tests for accounts (src/http/routes/accounts.ts): GET and PATCH /account/settings, the
 * account-level defaults that new polls take beneath their own request, who may change them, and
 * GET /accounts.
 */

usePollsApi();

describe('account-level defaults (PATCH /account/settings)', () => {
  let brand: TestAccount;
  beforeAll(async () => {
    brand = await h.account({ name: 'Brand' });
  });

  it('owner sets defaults that new polls take beneath their own request', async () => {
    const patch = await call('PATCH', '/account/settings', brand.key, {
      accountId: brand.accountId,
      displaySettings: { backgroundColor: '#000000', actionColor: '#111111', position: [5, 5], bogus: true },
      emailDisplaySettings: { subject: '  From the account  ' },
      smsDisplaySettings: { message: 'Account SMS' },
      visibilitySettings: { hideAfterClose: false },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    expect(patch.json().data).toEqual({
      accountId: brand.accountId,
      displaySettings: { backgroundColor: '#000000', actionColor: '#111111', position: [5, 5] },
      emailDisplaySettings: { subject: 'From the account' },
      smsDisplaySettings: { message: 'Account SMS' },
      visibilitySettings: { hideAfterClose: false },
      notificationRecipients: null,
    });

    const plain = await createPoll(brand);
    expect(plain.displaySettings).toEqual({
      ...SPEC_DISPLAY,
      backgroundColor: '#000000',
      actionColor: '#111111',
      position: [5, 5],
    });
    expect(plain.emailDisplaySettings).toEqual({ ...SPEC_EMAIL, subject: 'From the account' });
    expect(plain.smsDisplaySettings).toEqual({ message: 'Account SMS' });
    expect(plain.visibilitySettings).toEqual({ ...SPEC_VISIBILITY, hideAfterClose: false });

    const own = await createPoll(brand, {
      displaySettings: { actionColor: '#222222', position: [1, 2] },
      smsDisplaySettings: { message: 'Request SMS' },
    });
    expect(own.displaySettings).toEqual({
      ...SPEC_DISPLAY,
      backgroundColor: '#000000',
      actionColor: '#222222',
      position: [1, 2],
    });
    expect(own.smsDisplaySettings).toEqual({ message: 'Request SMS' });
    expect(own.emailDisplaySettings).toEqual({ ...SPEC_EMAIL, subject: 'From the account' });
  });

  it('a later PATCH merges into the stored defaults; GET reads them back', async () => {
    const res = await call('PATCH', '/account/settings', brand.key, {
      accountId: brand.accountId,
      displaySettings: { align: 'left' },
      notificationRecipients: ['Ops@Example.com', 'ops@example.com'],
    });
    expect(res.statusCode).toBe(200);
    const read = await call('GET', `/account/settings?accountId=${brand.accountId}`, brand.key);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toMatchObject({
      accountId: brand.accountId,
      displaySettings: { backgroundColor: '#000000', actionColor: '#111111', position: [5, 5], align: 'left' },
      notificationRecipients: ['ops@example.com'],
    });
  });

  it('refuses as recipients members whose role may not see webhook URLs, naming them; an empty list is unset', async () => {
    await h.member(brand.accountId, 'editor', 'brand.editor@example.com');
    await h.member(brand.accountId, 'billing_admin', 'brand.billing@example.com');
    const refused = expectProblem(
      await call('PATCH', '/account/settings', brand.key, {
        accountId: brand.accountId,
        notificationRecipients: ['ops@example.com', 'Brand.Editor@example.com', 'brand.billing@example.com'],
      }),
      400,
      'validation_failed',
    );
    expect(refused.detail).toContain('Brand.Editor@example.com');
    expect(paths(refused)).toEqual(['/notificationRecipients/1']);
    const kept = await call('PATCH', '/account/settings', brand.key, {
      accountId: brand.accountId,
      notificationRecipients: ['ops@example.com', 'brand.billing@example.com'],
    });
    expect(kept.statusCode, kept.body).toBe(200);
    const emptied = await call('PATCH', '/account/settings', brand.key, {
      accountId: brand.accountId,
      notificationRecipients: [],
    });
    expect(emptied.json().data.notificationRecipients).toBeNull();
    // Put back as the test before left it.
    await call('PATCH', '/account/settings', brand.key, {
      accountId: brand.accountId,
      notificationRecipients: ['ops@example.com'],
    });
  });

  it('leaves other accounts alone', async () => {
    const poll = await createPoll(acme);
    expect(poll.displaySettings).toEqual(SPEC_DISPLAY);
  });

  it('admin may change them; editor and read_only may not', async () => {
    const admin = await call('PATCH', '/account/settings', acmeAdmin, {
      accountId: acme.accountId,
      smsDisplaySettings: { message: 'Admin SMS' },
    });
    expect(admin.statusCode).toBe(200);
    expect(admin.json().data.smsDisplaySettings).toEqual({ message: 'Admin SMS' });
    expectProblem(
      await call('PATCH', '/account/settings', acmeEditor, {
        accountId: acme.accountId,
        smsDisplaySettings: { message: 'Editor' },
      }),
      403,
      'role_forbidden',
    );
    expectProblem(
      await call('PATCH', '/account/settings', acmeReader, {
        accountId: acme.accountId,
        smsDisplaySettings: { message: 'Reader' },
      }),
      403,
      'role_forbidden',
    );
    const read = await call('GET', `/account/settings?accountId=${acme.accountId}`, acmeReader);
    expect(read.json().data.smsDisplaySettings).toEqual({ message: 'Admin SMS' });
    // reset so the other tests of this file see the default SMS message for Acme
    await call('PATCH', '/account/settings', acme.key, { accountId: acme.accountId, smsDisplaySettings: SPEC_SMS });
  });

  it('validates the settings like a poll request', async () => {
    const body = expectProblem(
      await call('PATCH', '/account/settings', brand.key, {
        accountId: brand.accountId,
        displaySettings: { backgroundColor: 'blue' },
      }),
      400,
      'validation_failed',
    );
    expect(paths(body)).toContain('/displaySettings/backgroundColor');
    const extra = expectProblem(
      await call('PATCH', '/account/settings', brand.key, { accountId: brand.accountId, settings: { apiOnly: true } }),
      400,
      'validation_failed',
    );
    expect(paths(extra)).toContain('/settings');
    const email = expectProblem(
      await call('PATCH', '/account/settings', brand.key, {
        accountId: brand.accountId,
        notificationRecipients: ['not-an-email'],
      }),
      400,
      'validation_failed',
    );
    expect(paths(email)).toContain('/notificationRecipients/0');
  });

  it('refuses default texts that are empty once trimmed, and keeps what was stored', async () => {
    const before = (await call('GET', `/account/settings?accountId=${brand.accountId}`, brand.key)).json().data;
    const body = expectProblem(
      await call('PATCH', '/account/settings', brand.key, {
        accountId: brand.accountId,
        emailDisplaySettings: { subject: '   ' },
        smsDisplaySettings: { message: ' ' },
        displaySettings: { shape: '\n' },
      }),
      400,
      'validation_failed',
    );
    expect(paths(body).sort()).toEqual(
      ['/displaySettings/shape', '/emailDisplaySettings/subject', '/smsDisplaySettings/message'].sort(),
    );
    expect((await call('GET', `/account/settings?accountId=${brand.accountId}`, brand.key)).json().data).toEqual(
      before,
    );
  });

  it('GET /accounts lists the memberships of the key', async () => {
    const res = await call('GET', '/accounts', acmeEditor);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      expect.objectContaining({ accountId: acme.accountId, role: 'editor', plan: 'premium' }),
    ]);
  });
});
