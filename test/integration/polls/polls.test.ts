import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../../src/app/accounts/set-plan.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import { SPEC_TABLES } from '../support/spec-tables.js';

/**
 * Route tests for DESIGN §2 "Polls", "Slides" and the account settings, with every error path.
 * Runs on in-memory PGlite, or on PostgreSQL when CANVASS_TEST_PG_URL is set.
 */

let h: Harness;
/** Account A: the main subject. */
let acme: TestAccount;
/** Account B: premium too, but must never see A's resources. */
let rival: TestAccount;
let acmeEditor: string;
let acmeAdmin: string;
let acmeReader: string;

type Json = Record<string, unknown>;
type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

beforeAll(async () => {
  h = await harness();
  acme = await h.account({ name: 'Acme' });
  rival = await h.account({ name: 'Rival' });
  acmeEditor = await h.member(acme.accountId, 'editor');
  acmeAdmin = await h.member(acme.accountId, 'admin');
  acmeReader = await h.member(acme.accountId, 'read_only');
});
afterAll(() => h?.close());

async function call(
  method: Method,
  url: string,
  key: string | undefined,
  payload?: unknown,
): Promise<LightMyRequestResponse> {
  return h.app.inject({
    method,
    url,
    headers: key ? bearer(key) : {},
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });
}

/** Asserts an RFC 9457 problem document with the contract's fields; returns the body. */
function expectProblem(
  res: LightMyRequestResponse,
  status: number,
  code: string,
): Json & { errors?: { path: string; message: string }[] } {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code });
  expect(typeof body.type).toBe('string');
  expect(body.type.length).toBeGreaterThan(0);
  expect(typeof body.title).toBe('string');
  expect(body.title.length).toBeGreaterThan(0);
  expect(typeof body.detail).toBe('string');
  return body;
}

function paths(body: { errors?: { path: string }[] }): string[] {
  return (body.errors ?? []).map((e) => e.path);
}

async function createPoll(who: TestAccount, extra: Json = {}, key = who.key): Promise<Json & { id: string }> {
  const res = await call('POST', '/poll', key, { accountId: who.accountId, title: 'A poll', ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

async function addSlide(pollId: string, extra: Json = {}, key = acme.key): Promise<Json & { id: string; idx: number }> {
  const res = await call('POST', '/slide', key, { pollId, type: 'short-answer', title: 'Tell us more', ...extra });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

async function slideIds(pollId: string): Promise<string[]> {
  const res = await call('GET', `/slides?pollId=${pollId}`, acme.key);
  expect(res.statusCode).toBe(200);
  return res.json().data.map((s: { id: string }) => s.id);
}

// SPEC §2.2, written out once in test/support (not imported from src, so a wrong constant fails).
const SPEC_SETTINGS = { ...SPEC_TABLES.settings, isSynthetic: false, anonymous: false };
const SPEC_DISPLAY = SPEC_TABLES.displaySettings;
const SPEC_SMS = SPEC_TABLES.smsDisplaySettings;
const SPEC_EMAIL = SPEC_TABLES.emailDisplaySettings;
const SPEC_VISIBILITY = SPEC_TABLES.visibilitySettings;

describe('POST /poll and POST /survey', () => {
  it.each(['/poll', '/survey'])('%s saves a hidden poll with no slides and the SPEC §2.2 defaults', async (url) => {
    const res = await call('POST', url, acme.key, { accountId: acme.accountId, title: 'Checkout feedback' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const poll = res.json().data;
    expect(poll.id).toMatch(/^poll_[0-9A-Za-z]{22}$/);
    expect(poll).toMatchObject({
      accountId: acme.accountId,
      title: 'Checkout feedback',
      isVisible: false,
      slides: [],
      pageRules: [],
      pageExcludeRules: null,
      pageDisplaySettings: null,
      targetingSettings: null,
      schedule: null,
      languageSettings: null,
      actionLogic: [],
      createdAt: h.clock.now().toISOString(),
      updatedAt: h.clock.now().toISOString(),
    });
    expect(poll.settings).toEqual(SPEC_SETTINGS);
    expect(poll.displaySettings).toEqual(SPEC_DISPLAY);
    expect(poll.emailDisplaySettings).toEqual(SPEC_EMAIL);
    expect(poll.smsDisplaySettings).toEqual(SPEC_SMS);
    expect(poll.visibilitySettings).toEqual(SPEC_VISIBILITY);
    const read = await call('GET', `/poll?pollId=${poll.id}`, acme.key);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toEqual(poll);
  });

  it('keeps what the request sets and merges settings objects over the defaults', async () => {
    const poll = await createPoll(acme, {
      pageRules: ['/(.)/thank_you'],
      pageExcludeRules: ['/cart'],
      settings: { showCounter: false, anonymous: true },
      displaySettings: { backgroundColor: '#ffffff', position: [0, 40] },
      emailDisplaySettings: { subject: 'Quick one?' },
      smsDisplaySettings: { message: 'Tell us!' },
      pageDisplaySettings: { layout: 'split' },
      visibilitySettings: { renderOnExitIntent: true },
      targetingSettings: { percentage: 25, devices: ['mobile'], metadata: { tier: 'gold' } },
      schedule: { type: 'scheduled', startAt: '2026-02-01T00:00:00Z', endAt: '2026-03-01T00:00:00Z' },
      languageSettings: { defaultLanguage: 'en', languages: { en: { enabled: true, translations: { title: 'Hi' } } } },
    });
    expect(poll).toMatchObject({
      pageRules: ['/(.)/thank_you'],
      pageExcludeRules: ['/cart'],
      pageDisplaySettings: { layout: 'split' },
      targetingSettings: { percentage: 25, devices: ['mobile'], metadata: { tier: 'gold' } },
      schedule: { type: 'scheduled', startAt: '2026-02-01T00:00:00Z', endAt: '2026-03-01T00:00:00Z' },
      languageSettings: { defaultLanguage: 'en', languages: { en: { enabled: true, translations: { title: 'Hi' } } } },
    });
    expect(poll.settings).toEqual({ ...SPEC_SETTINGS, showCounter: false, anonymous: true });
    expect(poll.displaySettings).toEqual({ ...SPEC_DISPLAY, backgroundColor: '#ffffff', position: [0, 40] });
    expect(poll.emailDisplaySettings).toEqual({ ...SPEC_EMAIL, subject: 'Quick one?' });
    expect(poll.smsDisplaySettings).toEqual({ message: 'Tell us!' });
    expect(poll.visibilitySettings).toEqual({ ...SPEC_VISIBILITY, renderOnExitIntent: true });
  });

  it('trims strings and strips HTML from the title', async () => {
    const poll = await createPoll(acme, {
      title: '  <h1>Post-purchase</h1> <em>survey</em>  ',
      smsDisplaySettings: { message: '  Hello  ' },
      pageRules: ['  /account  '],
    });
    expect(poll.title).toBe('Post-purchase survey');
    expect(poll.smsDisplaySettings).toEqual({ message: 'Hello' });
    expect(poll.pageRules).toEqual(['/account']);
  });

  it.each(['<p></p>', '   ', '<b> </b>&nbsp;'])('refuses a title that is empty once cleaned (%j)', async (title) => {
    const body = expectProblem(
      await call('POST', '/poll', acme.key, { accountId: acme.accountId, title }),
      400,
      'validation_failed',
    );
    expect(paths(body)).toContain('/title');
  });

  it('drops unknown keys inside settings objects', async () => {
    const poll = await createPoll(acme, {
      settings: { showCounter: false, secretAdminFlag: true },
      displaySettings: { backgroundColor: '#abcdef', onHover: 'alert(1)' },
      smsDisplaySettings: { message: 'Hi', sender: 'X' },
      visibilitySettings: { bogus: 1 },
      targetingSettings: { percentage: 10, evil: true },
    });
    expect(poll.settings).toEqual({ ...SPEC_SETTINGS, showCounter: false });
    expect(poll.displaySettings).toEqual({ ...SPEC_DISPLAY, backgroundColor: '#abcdef' });
    expect(poll.smsDisplaySettings).toEqual({ message: 'Hi' });
    expect(poll.visibilitySettings).toEqual(SPEC_VISIBILITY);
    expect(poll.targetingSettings).toEqual({ percentage: 10 });
    const stored = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
    expect(stored.displaySettings).not.toHaveProperty('onHover');
    expect(stored.settings).not.toHaveProperty('secretAdminFlag');
  });

  it('refuses an unknown top-level field, naming it', async () => {
    const body = expectProblem(
      await call('POST', '/poll', acme.key, { accountId: acme.accountId, title: 'x', isVisible: true, colour: 'red' }),
      400,
      'validation_failed',
    );
    expect(paths(body)).toEqual(expect.arrayContaining(['/isVisible', '/colour']));
  });

  it.each([
    ['a named colour', { displaySettings: { backgroundColor: 'red' } }, '/displaySettings/backgroundColor'],
    ['a four-digit colour', { displaySettings: { backgroundColor: '#abcd' } }, '/displaySettings/backgroundColor'],
    ['a colour without #', { emailDisplaySettings: { buttonColor: 'ffffff' } }, '/emailDisplaySettings/buttonColor'],
    ['a number out of range', { displaySettings: { borderRadius: 101 } }, '/displaySettings/borderRadius'],
    ['a non-integer', { displaySettings: { maxWidth: 400.5 } }, '/displaySettings/maxWidth'],
    ['position of three numbers', { displaySettings: { position: [1, 2, 3] } }, '/displaySettings/position'],
    ['a string for a boolean', { dryRun: 'true' }, '/dryRun'],
    ['a string for a settings boolean', { settings: { showCounter: 'yes' } }, '/settings/showCounter'],
    ['an unknown align', { displaySettings: { align: 'middle' } }, '/displaySettings/align'],
    ['an unknown device', { targetingSettings: { devices: ['watch'] } }, '/targetingSettings/devices/0'],
    ['a percentage over 100', { targetingSettings: { percentage: 101 } }, '/targetingSettings/percentage'],
    ['a schedule type', { schedule: { type: 'later' } }, '/schedule/type'],
    ['a schedule date', { schedule: { type: 'scheduled', startAt: 'tomorrow' } }, '/schedule/startAt'],
    [
      'a schedule ending before it starts',
      { schedule: { type: 'scheduled', startAt: '2026-03-01T00:00:00Z', endAt: '2026-02-01T00:00:00Z' } },
      '/schedule/endAt',
    ],
    [
      'an unknown key in languageSettings',
      { languageSettings: { defaultLanguage: 'en', languages: {}, extra: 1 } },
      '/languageSettings/extra',
    ],
    [
      'a bad language code',
      { languageSettings: { defaultLanguage: 'English', languages: {} } },
      '/languageSettings/defaultLanguage',
    ],
    ['pageRules not a list', { pageRules: '/pos/home' }, '/pageRules'],
  ])('refuses %s with 400 naming the path', async (_why, extra, path) => {
    const body = expectProblem(
      await call('POST', '/poll', acme.key, { accountId: acme.accountId, title: 'x', ...extra }),
      400,
      'validation_failed',
    );
    expect(paths(body)).toContain(path);
  });

  it('refuses a missing accountId and title', async () => {
    const body = expectProblem(await call('POST', '/poll', acme.key, {}), 400, 'validation_failed');
    expect(paths(body)).toEqual(expect.arrayContaining(['/accountId', '/title']));
  });

  it('refuses a body that is not JSON', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/poll',
      headers: { ...bearer(acme.key), 'content-type': 'application/json' },
      payload: '{"accountId":',
    });
    expectProblem(res, 400, 'validation_failed');
  });

  it('validates survey action logic at creation', async () => {
    const bad = expectProblem(
      await call('POST', '/poll', acme.key, {
        accountId: acme.accountId,
        title: 'x',
        actionLogic: [{ on: 'complete', action: { type: 'trigger-webhook', url: 'http://hooks.example.com/x' } }],
      }),
      400,
      'invalid_url',
    );
    expect(paths(bad)).toEqual(['/actionLogic/0/action/url']);
    const skip = expectProblem(
      await call('POST', '/poll', acme.key, {
        accountId: acme.accountId,
        title: 'x',
        actionLogic: [{ on: 'complete', action: { type: 'skip-to', slideId: 'sld_nope' } }],
      }),
      400,
      'validation_failed',
    );
    expect(paths(skip)).toEqual(['/actionLogic/0/action/slideId']);
    const ok = await createPoll(acme, {
      actionLogic: [{ on: 'complete', action: { type: 'trigger-webhook', url: 'https://hooks.example.com/done' } }],
    });
    expect(ok.actionLogic).toEqual([
      { on: 'complete', action: { type: 'trigger-webhook', url: 'https://hooks.example.com/done' } },
    ]);
  });

  it('refuses an account that does not exist with 404', async () => {
    expectProblem(
      await call('POST', '/poll', acme.key, { accountId: 'acc_doesnotexist00000000000', title: 'x' }),
      404,
      'not_found',
    );
  });
});

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
    // reset so the other tests of this file see spec defaults for Acme
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

  it('GET /accounts lists the memberships of the key', async () => {
    const res = await call('GET', '/accounts', acmeEditor);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      expect.objectContaining({ accountId: acme.accountId, role: 'editor', plan: 'premium' }),
    ]);
  });
});

describe('dry run and POST /commit', () => {
  let shop: TestAccount;
  let shopReader: string;
  beforeAll(async () => {
    shop = await h.account({ name: 'Shop' });
    shopReader = await h.member(shop.accountId, 'read_only');
  });

  async function preview(extra: Json = {}): Promise<Json & { id: string }> {
    const res = await call('POST', '/poll', shop.key, {
      accountId: shop.accountId,
      title: ' <i>Preview</i> me ',
      dryRun: true,
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(Object.keys(res.json())).toEqual(['data']);
    return res.json().data;
  }

  async function shopPollIds(): Promise<string[]> {
    const res = await call('GET', `/polls?accountId=${shop.accountId}`, shop.key);
    expect(res.statusCode).toBe(200);
    return res.json().data.map((p: { id: string }) => p.id);
  }

  it('a dry run answers 200 with the full preview and saves nothing', async () => {
    const data = await preview({ displaySettings: { align: 'left' } });
    expect(data.id).toMatch(/^poll_/);
    expect(data).toMatchObject({ accountId: shop.accountId, title: 'Preview me', isVisible: false, slides: [] });
    expect(data.settings).toEqual(SPEC_SETTINGS);
    expect(data.displaySettings).toEqual({ ...SPEC_DISPLAY, align: 'left' });
    expect(data.emailDisplaySettings).toEqual(SPEC_EMAIL);
    expect(await shopPollIds()).toEqual([]);
    expectProblem(await call('GET', `/poll?pollId=${data.id}`, shop.key), 404, 'not_found');
  });

  it('a dry run is validated and authorised like a create', async () => {
    expectProblem(
      await call('POST', '/poll', shop.key, {
        accountId: shop.accountId,
        title: 'x',
        dryRun: true,
        displaySettings: { backgroundColor: 'nope' },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await call('POST', '/poll', shopReader, { accountId: shop.accountId, title: 'x', dryRun: true }),
      403,
      'role_forbidden',
    );
    expectProblem(
      await call('POST', '/poll', rival.key, { accountId: shop.accountId, title: 'x', dryRun: true }),
      404,
      'not_found',
    );
  });

  it('commit saves the preview (201), a second commit answers 200 with the same poll', async () => {
    const data = await preview({ isSynthetic: true, smsDisplaySettings: { message: 'Preview SMS' } });
    h.clock.advance(60_000);
    const first = await call('POST', '/commit', shop.key, { data });
    expect(first.statusCode, first.body).toBe(201);
    const saved = first.json().data;
    const { createdAt: _c, updatedAt: _u, ...rest } = data;
    expect(saved).toMatchObject(rest);
    expect(saved.id).toBe(data.id);
    expect(saved.settings.isSynthetic).toBe(true);
    expect(await shopPollIds()).toEqual([data.id]);

    const second = await call('POST', '/commit', shop.key, { data });
    expect(second.statusCode).toBe(200);
    expect(second.json().data).toEqual(saved);
    expect(await shopPollIds()).toEqual([data.id]);

    const read = await call('GET', `/poll?pollId=${data.id}`, shop.key);
    expect(read.json().data).toEqual(saved);
  });

  it('commit re-authorises: another account gets 404, a read_only key 403, no key 401', async () => {
    const data = await preview();
    expectProblem(await call('POST', '/commit', rival.key, { data }), 404, 'not_found');
    expectProblem(await call('POST', '/commit', shopReader, { data }), 403, 'role_forbidden');
    expectProblem(await call('POST', '/commit', undefined, { data }), 401, 'unauthenticated');
    expect(await shopPollIds()).not.toContain(data.id);
    // and another account cannot take over a preview id that is already saved
    const committed = await call('POST', '/commit', shop.key, { data });
    expect(committed.statusCode).toBe(201);
    expectProblem(
      await call('POST', '/commit', rival.key, { data: { ...data, accountId: rival.accountId } }),
      404,
      'not_found',
    );
    expect(
      (await call('GET', `/polls?accountId=${rival.accountId}`, rival.key))
        .json()
        .data.map((p: { id: string }) => p.id),
    ).not.toContain(data.id);
  });

  it.each([
    [
      'a bad colour',
      (d: Json) => ({ ...d, displaySettings: { ...(d.displaySettings as Json), backgroundColor: 'red' } }),
      'validation_failed',
      '/data/displaySettings/backgroundColor',
    ],
    ['a title that is only HTML', (d: Json) => ({ ...d, title: '<b></b>' }), 'validation_failed', '/title'],
    ['isVisible true', (d: Json) => ({ ...d, isVisible: true }), 'validation_failed', '/data/isVisible'],
    ['slides', (d: Json) => ({ ...d, slides: [{ type: 'file-upload' }] }), 'validation_failed', '/data/slides/0'],
    ['an unknown field', (d: Json) => ({ ...d, ownerId: 'usr_x' }), 'validation_failed', '/data/ownerId'],
    ['an id that is not a poll id', (d: Json) => ({ ...d, id: 'x' }), 'validation_failed', '/data/id'],
    [
      'a schedule ending before it starts',
      (d: Json) => ({
        ...d,
        schedule: { type: 'scheduled', startAt: '2026-03-01T00:00:00Z', endAt: '2026-02-01T00:00:00Z' },
      }),
      'validation_failed',
      '/schedule/endAt',
    ],
    [
      'an http webhook in action logic',
      (d: Json) => ({
        ...d,
        actionLogic: [{ on: 'complete', action: { type: 'trigger-webhook', url: 'http://hooks.example.com/' } }],
      }),
      'invalid_url',
      '/actionLogic/0/action/url',
    ],
  ])('commit re-validates: a preview edited to hold %s is refused', async (_why, tamper, code, path) => {
    const data = await preview();
    const body = expectProblem(await call('POST', '/commit', shop.key, { data: tamper(data) }), 400, code);
    expect(paths(body)).toContain(path);
    expect(await shopPollIds()).not.toContain(data.id);
  });

  it('commit refuses a body without data', async () => {
    const body = expectProblem(await call('POST', '/commit', shop.key, { id: 'poll_x' }), 400, 'validation_failed');
    expect(paths(body)).toEqual(expect.arrayContaining(['/data', '/id']));
  });
});

describe('synthetic polls and POST /research/start', () => {
  let synthetic: Json & { id: string };
  let normal: Json & { id: string };
  const runs: { id: string; seed: number }[] = [];

  beforeAll(async () => {
    synthetic = await createPoll(acme, { title: 'Synthetic research', isSynthetic: true });
    normal = await createPoll(acme, { title: 'Normal' });
    await addSlide(synthetic.id, { type: 'copy', title: 'Welcome' });
    await addSlide(synthetic.id, {
      type: 'question',
      title: 'Pick one',
      answers: [{ title: 'Red' }, { title: 'Blue' }, { title: 'Green' }],
    });
    await addSlide(synthetic.id, { type: 'star-rating', title: 'Rate us' });
    await addSlide(synthetic.id, { type: 'email-capture', title: 'Your email' });
    await addSlide(synthetic.id, { type: 'short-answer', title: 'Why?' });
    await addSlide(synthetic.id, { type: 'thank-you', title: 'Thanks' });
  });

  it('isSynthetic is stored as settings.isSynthetic', () => {
    expect(synthetic.settings).toEqual({ ...SPEC_SETTINGS, isSynthetic: true });
    expect(synthetic).not.toHaveProperty('isSynthetic');
    expect((normal.settings as Json).isSynthetic).toBe(false);
  });

  it.each([
    ['isSynthetic false on the synthetic poll', () => ({ pollId: synthetic.id, isSynthetic: false })],
    [
      'settings.isSynthetic false on the synthetic poll',
      () => ({ pollId: synthetic.id, settings: { isSynthetic: false } }),
    ],
    ['isSynthetic true on a normal poll', () => ({ pollId: normal.id, isSynthetic: true })],
  ])('POST /poll/update refuses %s with 409 immutable_field', async (_why, body) => {
    const b = body();
    expectProblem(await call('POST', '/poll/update', acme.key, { ...b, title: 'Changed' }), 409, 'immutable_field');
    const read = (await call('GET', `/poll?pollId=${b.pollId}`, acme.key)).json().data;
    expect(read.settings.isSynthetic).toBe(b.pollId === synthetic.id);
    expect(read.title).not.toBe('Changed');
  });

  it('restating the current value is not a change', async () => {
    const res = await call('POST', '/poll/update', acme.key, {
      pollId: synthetic.id,
      isSynthetic: true,
      settings: { showCounter: false },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.settings).toEqual({ ...SPEC_SETTINGS, isSynthetic: true, showCounter: false });
  });

  it('research on a normal poll is 409 not_synthetic and writes nothing', async () => {
    expectProblem(
      await call('POST', '/research/start', acme.key, { pollId: normal.id, participants: 5 }),
      409,
      'not_synthetic',
    );
    const rows = await h.database.db.selectFrom('responses').select('id').where('poll_id', '=', normal.id).execute();
    expect(rows).toEqual([]);
  });

  async function run(seed: number, participants = 7) {
    const res = await call('POST', '/research/start', acme.key, { pollId: synthetic.id, participants, seed });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    runs.push({ id: data.id, seed });
    return data;
  }

  /** The answers of one run, participant by participant (ordered by the n behind each synthetic email). */
  async function answersOf(runId: string): Promise<Record<string, unknown>[]> {
    const rows = await h.database.db
      .selectFrom('responses')
      .select(['participant_id', 'slide_id', 'value', 'metadata', 'synthetic'])
      .where('poll_id', '=', synthetic.id)
      .where('synthetic', '=', true)
      .execute();
    const mine = rows.filter((r) => (r.metadata as Json).researchRunId === runId);
    const byParticipant = new Map<string, Record<string, unknown>>();
    for (const r of mine)
      byParticipant.set(r.participant_id, { ...byParticipant.get(r.participant_id), [r.slide_id]: r.value });
    const order = (answers: Record<string, unknown>) => {
      const email = Object.values(answers).find(
        (v) => typeof v === 'string' && /^synthetic-\d+@example\.com$/.test(v),
      ) as string;
      return Number(/\d+/.exec(email)![0]);
    };
    return [...byParticipant.values()].sort((a, b) => order(a) - order(b));
  }

  it('creates participants × answerable slides synthetic responses', async () => {
    const data = await run(42);
    expect(data).toMatchObject({
      pollId: synthetic.id,
      accountId: acme.accountId,
      participants: 7,
      seed: 42,
      responsesCreated: 28,
    });
    expect(data.id).toMatch(/^run_/);
    const answers = await answersOf(data.id);
    expect(answers).toHaveLength(7);
    const slides = (await call('GET', `/slides?pollId=${synthetic.id}`, acme.key)).json().data as {
      id: string;
      type: string;
    }[];
    const answerable = slides
      .filter((s) => s.type !== 'copy' && s.type !== 'thank-you')
      .map((s) => s.id)
      .sort();
    for (const a of answers) expect(Object.keys(a).sort()).toEqual(answerable);
    const byType = Object.fromEntries(slides.map((s) => [s.type, s.id]));
    answers.forEach((a, n) => {
      expect(['Red', 'Blue', 'Green']).toContain(a[byType.question!]);
      expect(a[byType['star-rating']!]).toBeGreaterThanOrEqual(1);
      expect(a[byType['star-rating']!]).toBeLessThanOrEqual(5);
      expect(a[byType['email-capture']!]).toBe(`synthetic-${n}@example.com`);
      expect(typeof a[byType['short-answer']!]).toBe('string');
    });
    const participants = await h.database.db
      .selectFrom('participants')
      .select(['id', 'synthetic', 'complete'])
      .where('poll_id', '=', synthetic.id)
      .execute();
    expect(participants).toHaveLength(7);
    expect(participants.every((p) => p.synthetic && p.complete)).toBe(true);
  });

  it('the same seed gives the same answers, another seed other answers', async () => {
    const again = await run(42);
    const other = await run(7);
    const first = runs.find((r) => r.seed === 42 && r.id !== again.id)!;
    const a = await answersOf(first.id);
    const b = await answersOf(again.id);
    const c = await answersOf(other.id);
    expect(b).toHaveLength(7);
    expect(b).toEqual(a);
    expect(c).toHaveLength(7);
    expect(c).not.toEqual(a);
  });

  it('defaults to 100 participants and bounds the count to 1..1000', async () => {
    const res = await call('POST', '/research/start', acme.key, { pollId: synthetic.id });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ participants: 100, responsesCreated: 400 });
    expect(typeof res.json().data.seed).toBe('number');
    for (const participants of [0, 1001, 2.5]) {
      const body = expectProblem(
        await call('POST', '/research/start', acme.key, { pollId: synthetic.id, participants }),
        400,
        'validation_failed',
      );
      expect(paths(body)).toContain('/participants');
    }
  });

  it('research is a write: read_only gets 403, another account and a missing poll 404', async () => {
    expectProblem(
      await call('POST', '/research/start', acmeReader, { pollId: synthetic.id, participants: 1 }),
      403,
      'role_forbidden',
    );
    expectProblem(
      await call('POST', '/research/start', rival.key, { pollId: synthetic.id, participants: 1 }),
      404,
      'not_found',
    );
    expectProblem(
      await call('POST', '/research/start', acme.key, { pollId: 'poll_missing', participants: 1 }),
      404,
      'not_found',
    );
  });
});

describe('translations', () => {
  let poll: Json & { id: string };
  beforeAll(async () => {
    poll = await createPoll(acme, {
      languageSettings: {
        defaultLanguage: 'en',
        languages: {
          en: { enabled: true, translations: { title: 'Hello', q1: 'How was it?' } },
          fr: { enabled: false, translations: { title: 'Bonjour' } },
        },
      },
    });
  });

  it('GET /poll/translations answers one language', async () => {
    const res = await call('GET', `/poll/translations?pollId=${poll.id}&language=fr`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { pollId: poll.id, language: 'fr', translations: { title: 'Bonjour' } } });
    const reader = await call('GET', `/poll/translations?pollId=${poll.id}&language=en`, acmeReader);
    expect(reader.json().data.translations).toEqual({ title: 'Hello', q1: 'How was it?' });
  });

  it('an unknown language is 404, a malformed one 400', async () => {
    expectProblem(await call('GET', `/poll/translations?pollId=${poll.id}&language=de`, acme.key), 404, 'not_found');
    expectProblem(
      await call('GET', `/poll/translations?pollId=${poll.id}&language=EN_us`, acme.key),
      400,
      'validation_failed',
    );
    expectProblem(await call('GET', `/poll/translations?pollId=${poll.id}`, acme.key), 400, 'validation_failed');
  });

  it('POST /poll/translations/update merges that language and leaves the others untouched', async () => {
    const res = await call('POST', '/poll/translations/update', acme.key, {
      pollId: poll.id,
      language: 'en',
      translations: { q1: ' How did it go? ', q2: 'Anything else?' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      pollId: poll.id,
      language: 'en',
      translations: { title: 'Hello', q1: 'How did it go?', q2: 'Anything else?' },
    });
    const fr = await call('GET', `/poll/translations?pollId=${poll.id}&language=fr`, acme.key);
    expect(fr.json().data.translations).toEqual({ title: 'Bonjour' });
    const stored = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
    expect(stored.languageSettings).toEqual({
      defaultLanguage: 'en',
      languages: {
        en: { enabled: true, translations: { title: 'Hello', q1: 'How did it go?', q2: 'Anything else?' } },
        fr: { enabled: false, translations: { title: 'Bonjour' } },
      },
    });
  });

  it('a new language is added beside the others', async () => {
    const res = await call('POST', '/poll/translations/update', acme.key, {
      pollId: poll.id,
      language: 'pt-BR',
      translations: { title: 'Olá' },
    });
    expect(res.statusCode).toBe(200);
    const stored = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
    expect(Object.keys(stored.languageSettings.languages).sort()).toEqual(['en', 'fr', 'pt-BR']);
    expect(stored.languageSettings.languages['pt-BR']).toEqual({ enabled: true, translations: { title: 'Olá' } });
  });

  it('refuses malformed bodies and callers who may not write', async () => {
    expectProblem(
      await call('POST', '/poll/translations/update', acme.key, {
        pollId: poll.id,
        language: 'en',
        translations: { title: 42 },
      }),
      400,
      'validation_failed',
    );
    expectProblem(
      await call('POST', '/poll/translations/update', acme.key, { pollId: poll.id, language: 'en' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await call('POST', '/poll/translations/update', acmeReader, {
        pollId: poll.id,
        language: 'en',
        translations: { title: 'R' },
      }),
      403,
      'role_forbidden',
    );
    expectProblem(
      await call('POST', '/poll/translations/update', rival.key, {
        pollId: poll.id,
        language: 'en',
        translations: { title: 'R' },
      }),
      404,
      'not_found',
    );
    expectProblem(await call('GET', `/poll/translations?pollId=${poll.id}&language=en`, rival.key), 404, 'not_found');
    const en = await call('GET', `/poll/translations?pollId=${poll.id}&language=en`, acme.key);
    expect(en.json().data.translations.title).toBe('Hello');
  });

  it('merges of different languages at the same time all survive', async () => {
    const target = await createPoll(acme, { title: 'Concurrent translations' });
    const langs = ['de', 'es', 'it', 'nl', 'pl', 'sv'];
    const res = await Promise.all(
      langs.map((language) =>
        call('POST', '/poll/translations/update', acme.key, {
          pollId: target.id,
          language,
          translations: { title: `t-${language}` },
        }),
      ),
    );
    expect(res.map((r) => r.statusCode)).toEqual(langs.map(() => 200));
    const stored = (await call('GET', `/poll?pollId=${target.id}`, acme.key)).json().data;
    expect(Object.keys(stored.languageSettings.languages).sort()).toEqual(langs);
  });

  it('POST /poll/update with languageSettings replaces the whole object', async () => {
    const res = await call('POST', '/poll/update', acme.key, {
      pollId: poll.id,
      languageSettings: {
        defaultLanguage: 'de',
        languages: { de: { enabled: true, translations: { title: 'Hallo' } } },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.languageSettings).toEqual({
      defaultLanguage: 'de',
      languages: { de: { enabled: true, translations: { title: 'Hallo' } } },
    });
    for (const gone of ['en', 'fr', 'pt-BR'])
      expectProblem(
        await call('GET', `/poll/translations?pollId=${poll.id}&language=${gone}`, acme.key),
        404,
        'not_found',
      );
    const de = await call('GET', `/poll/translations?pollId=${poll.id}&language=de`, acme.key);
    expect(de.json().data.translations).toEqual({ title: 'Hallo' });
  });
});

describe('GET /poll, GET /polls, POST /poll/update, DELETE /poll', () => {
  let pager: TestAccount;
  const created: string[] = [];
  beforeAll(async () => {
    pager = await h.account({ name: 'Pager' });
    for (let i = 0; i < 5; i++) {
      h.clock.advance(1000);
      created.push((await createPoll(pager, { title: `Poll ${i}` })).id);
    }
  });

  it('lists polls in creation order, with the defaults of 20 per page', async () => {
    const res = await call('GET', `/polls?accountId=${pager.accountId}`, pager.key);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['data', 'endCursor', 'hasNextPage']);
    expect(body.data.map((p: { id: string }) => p.id)).toEqual(created);
    expect(body.data.map((p: { title: string }) => p.title)).toEqual([
      'Poll 0',
      'Poll 1',
      'Poll 2',
      'Poll 3',
      'Poll 4',
    ]);
    expect(body.hasNextPage).toBe(false);
    expect(body.endCursor).toBe(created[4]);
  });

  it('pages with limit and startCursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: { n: number; more: boolean }[] = [];
    do {
      const url: string = `/polls?accountId=${pager.accountId}&limit=2${cursor ? `&startCursor=${cursor}` : ''}`;
      const body = (await call('GET', url, pager.key)).json();
      const ids = body.data.map((p: { id: string }) => p.id);
      seen.push(...ids);
      pages.push({ n: ids.length, more: body.hasNextPage });
      expect(body.endCursor).toBe(ids[ids.length - 1]);
      cursor = body.hasNextPage ? body.endCursor : null;
    } while (cursor);
    expect(pages).toEqual([
      { n: 2, more: true },
      { n: 2, more: true },
      { n: 1, more: false },
    ]);
    expect(seen).toEqual(created);
  });

  it('a page that ends exactly at the last poll says there is no next page', async () => {
    const body = (await call('GET', `/polls?accountId=${pager.accountId}&limit=5`, pager.key)).json();
    expect(body.data).toHaveLength(5);
    expect(body.hasNextPage).toBe(false);
    const after = (
      await call('GET', `/polls?accountId=${pager.accountId}&startCursor=${created[4]}`, pager.key)
    ).json();
    expect(after).toEqual({ data: [], hasNextPage: false, endCursor: null });
  });

  it.each(['0', '101', 'abc', '2.5'])('refuses limit=%s', async (limit) => {
    const body = expectProblem(
      await call('GET', `/polls?accountId=${pager.accountId}&limit=${limit}`, pager.key),
      400,
      'validation_failed',
    );
    expect(paths(body).join()).toContain('limit');
  });

  it('refuses a list without accountId and unknown query parameters', async () => {
    expectProblem(await call('GET', '/polls', pager.key), 400, 'validation_failed');
    expectProblem(
      await call('GET', `/polls?accountId=${pager.accountId}&sort=title`, pager.key),
      400,
      'validation_failed',
    );
  });

  it('updates title, visibility and settings; settings objects merge into what is stored', async () => {
    const id = created[0]!;
    h.clock.advance(5000);
    const res = await call('POST', '/poll/update', pager.key, {
      pollId: id,
      title: ' <b>Renamed</b> ',
      isVisible: true,
      displaySettings: { align: 'left' },
      settings: { allowEdits: true },
      pageRules: ['/account'],
    });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ id, title: 'Renamed', isVisible: true, pageRules: ['/account'], slides: [] });
    expect(data.displaySettings).toEqual({ ...SPEC_DISPLAY, align: 'left' });
    expect(data.settings).toEqual({ ...SPEC_SETTINGS, allowEdits: true });
    expect(Date.parse(data.updatedAt)).toBeGreaterThan(Date.parse(data.createdAt));
    const read = (await call('GET', `/poll?pollId=${id}`, pager.key)).json().data;
    expect(read).toEqual(data);
    const again = await call('POST', '/poll/update', pager.key, {
      pollId: id,
      displaySettings: { backgroundColor: '#010101' },
    });
    expect(again.json().data.displaySettings).toEqual({ ...SPEC_DISPLAY, align: 'left', backgroundColor: '#010101' });
  });

  it('updates of different settings at the same time all survive', async () => {
    const id = created[2]!;
    const patches = [
      { displaySettings: { align: 'center' } },
      { settings: { autoClose: true } },
      { visibilitySettings: { renderDevice: true } },
      { smsDisplaySettings: { message: 'Concurrent' } },
      { emailDisplaySettings: { subject: 'Concurrent' } },
    ];
    const res = await Promise.all(patches.map((p) => call('POST', '/poll/update', pager.key, { pollId: id, ...p })));
    expect(res.map((r) => r.statusCode)).toEqual(patches.map(() => 200));
    const read = (await call('GET', `/poll?pollId=${id}`, pager.key)).json().data;
    expect(read.displaySettings.align).toBe('center');
    expect(read.settings.autoClose).toBe(true);
    expect(read.visibilitySettings.renderDevice).toBe(true);
    expect(read.smsDisplaySettings.message).toBe('Concurrent');
    expect(read.emailDisplaySettings.subject).toBe('Concurrent');
  });

  it('update refuses bad input', async () => {
    const id = created[1]!;
    expectProblem(
      await call('POST', '/poll/update', pager.key, { pollId: id, title: '<i></i>' }),
      400,
      'validation_failed',
    );
    const colour = expectProblem(
      await call('POST', '/poll/update', pager.key, { pollId: id, displaySettings: { backgroundColor: 'red' } }),
      400,
      'validation_failed',
    );
    expect(paths(colour)).toContain('/displaySettings/backgroundColor');
    const extra = expectProblem(
      await call('POST', '/poll/update', pager.key, { pollId: id, accountId: rival.accountId }),
      400,
      'validation_failed',
    );
    expect(paths(extra)).toContain('/accountId');
    expectProblem(await call('POST', '/poll/update', pager.key, { title: 'x' }), 400, 'validation_failed');
    expectProblem(
      await call('POST', '/poll/update', pager.key, { pollId: 'poll_missing', title: 'x' }),
      404,
      'not_found',
    );
    const read = (await call('GET', `/poll?pollId=${id}`, pager.key)).json().data;
    expect(read.title).toBe('Poll 1');
  });

  it('DELETE /poll removes the poll and its slides', async () => {
    const id = created[4]!;
    const slide = await addSlide(id, {}, pager.key);
    const res = await call('DELETE', `/poll?pollId=${id}`, pager.key);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id, deleted: true });
    expectProblem(await call('GET', `/poll?pollId=${id}`, pager.key), 404, 'not_found');
    expectProblem(await call('GET', `/slides?pollId=${id}`, pager.key), 404, 'not_found');
    expectProblem(await call('POST', '/slide/update', pager.key, { slideId: slide.id, title: 'x' }), 404, 'not_found');
    expectProblem(await call('DELETE', `/poll?pollId=${id}`, pager.key), 404, 'not_found');
    const list = (await call('GET', `/polls?accountId=${pager.accountId}`, pager.key)).json();
    expect(list.data.map((p: { id: string }) => p.id)).toEqual(created.slice(0, 4));
  });

  it('GET /poll needs pollId', async () => {
    const body = expectProblem(await call('GET', '/poll', pager.key), 400, 'validation_failed');
    expect(paths(body).join()).toContain('pollId');
  });
});

describe('slides', () => {
  let poll: Json & { id: string };
  beforeAll(async () => {
    poll = await createPoll(acme, { title: 'With slides' });
  });

  it('POST /slide creates a slide at the end', async () => {
    const res = await call('POST', '/slide', acme.key, {
      pollId: poll.id,
      type: 'question',
      title: ' <b>Favourite</b> colour? ',
      subtitle: ' pick <i>one</i> ',
      answers: [{ title: ' Red ' }, { title: '<em>Blue</em>' }],
    });
    expect(res.statusCode, res.body).toBe(201);
    const s = res.json().data;
    expect(s.id).toMatch(/^sld_[0-9A-Za-z]{22}$/);
    expect(s).toMatchObject({
      pollId: poll.id,
      accountId: acme.accountId,
      idx: 0,
      type: 'question',
      title: 'Favourite colour?',
      subtitle: 'pick one',
      multi: false,
      logic: [],
    });
    expect(s.answers).toEqual([
      { id: expect.stringMatching(/^ans_/), title: 'Red' },
      { id: expect.stringMatching(/^ans_/), title: 'Blue' },
    ]);
    const second = await addSlide(poll.id, { type: 'star-rating', title: 'Rate us' });
    expect(second.idx).toBe(1);
    expect(await slideIds(poll.id)).toEqual([s.id, second.id]);
  });

  it('idx inserts a slide at that place and moves the rest down', async () => {
    const [a, b] = await slideIds(poll.id);
    const front = await addSlide(poll.id, { title: 'First', idx: 0 });
    expect(front.idx).toBe(0);
    const middle = await addSlide(poll.id, { title: 'Middle', idx: 2 });
    const far = await addSlide(poll.id, { title: 'Far', idx: 500 });
    const slides = (await call('GET', `/slides?pollId=${poll.id}`, acme.key)).json().data as {
      id: string;
      idx: number;
    }[];
    expect(slides.map((s) => s.id)).toEqual([front.id, a, middle.id, b, far.id]);
    expect(slides.map((s) => s.idx)).toEqual([0, 1, 2, 3, 4]);
    const read = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
    expect(read.slides.map((s: { id: string }) => s.id)).toEqual(slides.map((s) => s.id));
  });

  it('POST /slide/update changes fields and keeps the rest', async () => {
    const [, questionId] = await slideIds(poll.id);
    h.clock.advance(1000);
    const res = await call('POST', '/slide/update', acme.key, {
      slideId: questionId,
      title: 'Favourite colours?',
      multi: true,
      answers: [{ title: 'Red' }, { title: 'Green' }, { title: 'Blue' }],
    });
    expect(res.statusCode, res.body).toBe(200);
    const s = res.json().data;
    expect(s).toMatchObject({
      id: questionId,
      type: 'question',
      title: 'Favourite colours?',
      subtitle: 'pick one',
      multi: true,
      idx: 1,
    });
    expect(s.answers.map((a: { title: string }) => a.title)).toEqual(['Red', 'Green', 'Blue']);
    expect(Date.parse(s.updatedAt)).toBeGreaterThan(Date.parse(s.createdAt));
    const listed = (await call('GET', `/slides?pollId=${poll.id}`, acme.key))
      .json()
      .data.find((x: { id: string }) => x.id === questionId);
    expect(listed).toEqual(s);
  });

  it('POST /slide/update with idx moves the slide to that place', async () => {
    const before = await slideIds(poll.id);
    const moved = before[0]!;
    const res = await call('POST', '/slide/update', acme.key, { slideId: moved, idx: 2 });
    expect(res.statusCode).toBe(200);
    const expected = [...before.slice(1, 3), moved, ...before.slice(3)];
    expect(await slideIds(poll.id)).toEqual(expected);
    const back = await call('POST', '/slide/update', acme.key, { slideId: moved, idx: 0 });
    expect(back.statusCode).toBe(200);
    expect(await slideIds(poll.id)).toEqual(before);
    const last = await call('POST', '/slide/update', acme.key, { slideId: moved, idx: 99 });
    expect(last.json().data.idx).toBe(before.length - 1);
    expect(await slideIds(poll.id)).toEqual([...before.slice(1), moved]);
    await call('POST', '/slide/update', acme.key, { slideId: moved, idx: 0 });
    const slides = (await call('GET', `/slides?pollId=${poll.id}`, acme.key)).json().data as { idx: number }[];
    expect(slides.map((s) => s.idx)).toEqual([0, 1, 2, 3, 4]);
  });

  it('DELETE /slide removes it; a slide added afterwards goes at the end', async () => {
    const before = await slideIds(poll.id);
    const victim = before[2]!;
    const res = await call('DELETE', `/slide?slideId=${victim}`, acme.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { id: victim, deleted: true } });
    const after = before.filter((id) => id !== victim);
    expect(await slideIds(poll.id)).toEqual(after);
    expectProblem(await call('DELETE', `/slide?slideId=${victim}`, acme.key), 404, 'not_found');
    expectProblem(await call('POST', '/slide/update', acme.key, { slideId: victim, title: 'x' }), 404, 'not_found');
    const appended = await addSlide(poll.id, { title: 'Appended' });
    expect(await slideIds(poll.id)).toEqual([...after, appended.id]);
    const slides = (await call('GET', `/slides?pollId=${poll.id}`, acme.key)).json().data as { idx: number }[];
    expect(slides.map((s) => s.idx)).toEqual([0, 1, 2, 3, 4]);
  });

  it.each([
    ['an unknown type', { type: 'essay' }, '/type'],
    ['a missing title', { title: undefined }, '/title'],
    ['an unknown field', { colour: 'red' }, '/colour'],
    ['a negative idx', { idx: -1 }, '/idx'],
    ['an unknown key in an answer', { type: 'question', answers: [{ title: 'A', score: 1 }] }, '/answers/0/score'],
  ])('POST /slide refuses %s', async (_why, extra, path) => {
    const body = expectProblem(
      await call('POST', '/slide', acme.key, { pollId: poll.id, type: 'short-answer', title: 'T', ...extra }),
      400,
      'validation_failed',
    );
    expect(paths(body)).toContain(path);
  });

  it.each([
    ['a title that is only HTML', { title: '<br>' }, '/title'],
    ['a choice slide without answers', { type: 'dropdown' }, '/answers'],
    ['duplicate answers', { type: 'question', answers: [{ title: 'A' }, { title: ' A ' }] }, '/answers/1/title'],
  ])('POST /slide refuses %s', async (_why, extra, path) => {
    const count = (await slideIds(poll.id)).length;
    const body = expectProblem(
      await call('POST', '/slide', acme.key, { pollId: poll.id, type: 'short-answer', title: 'T', ...extra }),
      400,
      'validation_failed',
    );
    expect(paths(body)).toContain(path);
    expect(await slideIds(poll.id)).toHaveLength(count);
  });

  it('slides added at the same time each get their own place', async () => {
    const target = await createPoll(acme, { title: 'Concurrent slides' });
    const made = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        call('POST', '/slide', acme.key, { pollId: target.id, type: 'short-answer', title: `S${i}` }),
      ),
    );
    expect(made.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    const slides = (await call('GET', `/slides?pollId=${target.id}`, acme.key)).json().data as {
      idx: number;
      title: string;
    }[];
    expect(slides.map((s) => s.idx)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(slides.map((s) => s.title).sort()).toEqual(['S0', 'S1', 'S2', 'S3', 'S4', 'S5', 'S6', 'S7']);
  });

  it('a binary slide needs no answers', async () => {
    const s = await addSlide(poll.id, { type: 'binary', title: 'Yes or no?' });
    expect(s.answers).toEqual([]);
  });

  it('POST /slide on a missing poll is 404', async () => {
    expectProblem(
      await call('POST', '/slide', acme.key, { pollId: 'poll_missing', type: 'short-answer', title: 'T' }),
      404,
      'not_found',
    );
  });
});

describe('question logic and survey action logic', () => {
  let poll: Json & { id: string };
  let q: Json & { id: string };
  let end: Json & { id: string };
  beforeAll(async () => {
    poll = await createPoll(acme, { title: 'Logic' });
    end = await addSlide(poll.id, { type: 'thank-you', title: 'Bye' });
    q = await addSlide(poll.id, {
      type: 'question',
      title: 'Happy?',
      answers: [{ title: 'Yes' }, { title: 'No' }],
      idx: 0,
    });
  });

  it('stores valid question logic', async () => {
    const logic = [
      {
        match: 'any',
        conditions: [{ op: 'equals', value: 'No' }],
        action: { type: 'trigger-webhook', url: 'https://hooks.example.com/unhappy' },
      },
      { match: 'all', conditions: [{ op: 'answered' }], action: { type: 'skip-to', slideId: end.id } },
      {
        match: 'all',
        conditions: [
          { op: 'gt', value: 3 },
          { op: 'contains', value: ['a', 'b'] },
        ],
        action: { type: 'end-survey' },
      },
    ];
    const res = await call('POST', '/slide/update', acme.key, { slideId: q.id, logic });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.logic).toEqual(logic);
    const listed = (await call('GET', `/slides?pollId=${poll.id}`, acme.key))
      .json()
      .data.find((s: { id: string }) => s.id === q.id);
    expect(listed.logic).toEqual(logic);
    const created = await addSlide(poll.id, {
      title: 'Self',
      logic: [{ match: 'all', conditions: [], action: { type: 'continue' } }],
    });
    expect(created.logic).toEqual([{ match: 'all', conditions: [], action: { type: 'continue' } }]);
  });

  it('refuses skip-to a slide that is not in the poll', async () => {
    const other = await createPoll(acme, { title: 'Other' });
    const foreign = await addSlide(other.id, { title: 'Elsewhere' });
    for (const slideId of ['sld_doesnotexist0000000000', foreign.id]) {
      const body = expectProblem(
        await call('POST', '/slide', acme.key, {
          pollId: poll.id,
          type: 'short-answer',
          title: 'T',
          logic: [{ match: 'all', conditions: [], action: { type: 'skip-to', slideId } }],
        }),
        400,
        'validation_failed',
      );
      expect(paths(body)).toEqual(['/logic/0/action/slideId']);
    }
    const upd = expectProblem(
      await call('POST', '/slide/update', acme.key, {
        slideId: q.id,
        logic: [{ match: 'all', conditions: [], action: { type: 'skip-to', slideId: foreign.id } }],
      }),
      400,
      'validation_failed',
    );
    expect(paths(upd)).toEqual(['/logic/0/action/slideId']);
  });

  it.each([
    ['http://', 'http://hooks.example.com/x'],
    ['loopback', 'https://127.0.0.1/x'],
    ['metadata address', 'https://169.254.169.254/latest'],
    ['localhost', 'https://localhost/x'],
    ['credentials', 'https://u:p@hooks.example.com/x'],
  ])('refuses a trigger-webhook URL that is %s with invalid_url', async (_why, url) => {
    const body = expectProblem(
      await call('POST', '/slide', acme.key, {
        pollId: poll.id,
        type: 'short-answer',
        title: 'T',
        logic: [
          { match: 'all', conditions: [], action: { type: 'continue' } },
          { match: 'any', conditions: [{ op: 'answered' }], action: { type: 'trigger-webhook', url } },
        ],
      }),
      400,
      'invalid_url',
    );
    expect(paths(body)).toEqual(['/logic/1/action/url']);
  });

  it.each([
    [
      'an unknown op',
      [{ match: 'all', conditions: [{ op: 'matches', value: 'x' }], action: { type: 'continue' } }],
      'validation_failed',
    ],
    [
      'a comparison without a value',
      [{ match: 'all', conditions: [{ op: 'equals' }], action: { type: 'continue' } }],
      'validation_failed',
    ],
    ['an unknown action', [{ match: 'all', conditions: [], action: { type: 'explode' } }], 'validation_failed'],
    ['skip-to without slideId', [{ match: 'all', conditions: [], action: { type: 'skip-to' } }], 'validation_failed'],
    ['an unknown match', [{ match: 'some', conditions: [], action: { type: 'continue' } }], 'validation_failed'],
  ])('refuses question logic with %s', async (_why, logic, code) => {
    expectProblem(await call('POST', '/slide/update', acme.key, { slideId: q.id, logic }), 400, code);
  });

  it('stores valid survey action logic through /poll/update', async () => {
    const actionLogic = [
      {
        on: 'complete',
        match: 'all',
        conditions: [{ slideId: q.id, op: 'equals', value: 'No' }],
        action: { type: 'trigger-webhook', url: 'https://hooks.example.com/complete' },
      },
      { on: 'complete', action: { type: 'skip-to', slideId: end.id } },
    ];
    const res = await call('POST', '/poll/update', acme.key, { pollId: poll.id, actionLogic });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.actionLogic).toEqual(actionLogic);
    expect((await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data.actionLogic).toEqual(actionLogic);
  });

  it.each([
    [
      'skip-to an unknown slide',
      () => [{ on: 'complete', action: { type: 'skip-to', slideId: 'sld_doesnotexist0000000000' } }],
      'validation_failed',
      '/actionLogic/0/action/slideId',
    ],
    [
      'a condition on an unknown slide',
      () => [{ on: 'complete', conditions: [{ slideId: 'sld_nope', op: 'answered' }], action: { type: 'end-survey' } }],
      'validation_failed',
      '/actionLogic/0/conditions/0/slideId',
    ],
    [
      'a comparison without value',
      () => [{ on: 'complete', conditions: [{ slideId: q.id, op: 'lt' }], action: { type: 'end-survey' } }],
      'validation_failed',
      '/actionLogic/0/conditions/0/value',
    ],
    [
      'an http:// webhook',
      () => [
        { on: 'complete', action: { type: 'continue' } },
        { on: 'complete', action: { type: 'trigger-webhook', url: 'http://hooks.example.com/x' } },
      ],
      'invalid_url',
      '/actionLogic/1/action/url',
    ],
    [
      'a private webhook address',
      () => [{ on: 'complete', action: { type: 'trigger-webhook', url: 'https://[::ffff:10.0.0.1]/x' } }],
      'invalid_url',
      '/actionLogic/0/action/url',
    ],
    [
      'another trigger than complete',
      () => [{ on: 'start', action: { type: 'end-survey' } }],
      'validation_failed',
      '/actionLogic/0/on',
    ],
  ])('/poll/update refuses action logic with %s', async (_why, actionLogic, code, path) => {
    const before = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data.actionLogic;
    const body = expectProblem(
      await call('POST', '/poll/update', acme.key, { pollId: poll.id, actionLogic: actionLogic() }),
      400,
      code,
    );
    expect(paths(body)).toContain(path);
    expect((await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data.actionLogic).toEqual(before);
  });

  it('a slide that another slide skips to cannot be deleted', async () => {
    await call('POST', '/slide/update', acme.key, {
      slideId: q.id,
      logic: [{ match: 'all', conditions: [{ op: 'answered' }], action: { type: 'skip-to', slideId: end.id } }],
    });
    expectProblem(await call('DELETE', `/slide?slideId=${end.id}`, acme.key), 409, 'conflict');
    expect(await slideIds(poll.id)).toContain(end.id);
  });

  it.each([
    ['skips to it', (id: string) => [{ on: 'complete', action: { type: 'skip-to', slideId: id } }]],
    [
      'has a condition on it',
      (id: string) => [
        { on: 'complete', conditions: [{ slideId: id, op: 'answered' }], action: { type: 'end-survey' } },
      ],
    ],
  ])('a slide that survey action logic %s cannot be deleted', async (_why, actionLogic) => {
    const target = await createPoll(acme, { title: 'Action logic refs' });
    const s = await addSlide(target.id, { title: 'Referenced' });
    expect(
      (await call('POST', '/poll/update', acme.key, { pollId: target.id, actionLogic: actionLogic(s.id) })).statusCode,
    ).toBe(200);
    expectProblem(await call('DELETE', `/slide?slideId=${s.id}`, acme.key), 409, 'conflict');
    expect(await slideIds(target.id)).toEqual([s.id]);
    expect((await call('POST', '/poll/update', acme.key, { pollId: target.id, actionLogic: [] })).statusCode).toBe(200);
    expect((await call('DELETE', `/slide?slideId=${s.id}`, acme.key)).statusCode).toBe(200);
  });
});

describe('point-of-sale rule: no file-upload slides', () => {
  it.each(['/pos/home', '/pos/post-purchase'])(
    'a poll with pageRules [%s] refuses a file-upload slide',
    async (rule) => {
      const poll = await createPoll(acme, { pageRules: [rule] });
      expectProblem(
        await call('POST', '/slide', acme.key, { pollId: poll.id, type: 'file-upload', title: 'Receipt' }),
        400,
        'pos_file_upload',
      );
      expect(await slideIds(poll.id)).toEqual([]);
      const other = await addSlide(poll.id, { type: 'short-answer', title: 'Ok' });
      expectProblem(
        await call('POST', '/slide/update', acme.key, { slideId: other.id, type: 'file-upload' }),
        400,
        'pos_file_upload',
      );
      expect((await call('GET', `/slides?pollId=${poll.id}`, acme.key)).json().data[0].type).toBe('short-answer');
    },
  );

  it.each(['/pos/post-purchase', '/pos/home'])(
    'a poll holding a file-upload slide refuses pageRules [%s]',
    async (rule) => {
      const poll = await createPoll(acme, { pageRules: ['/account'] });
      await addSlide(poll.id, { type: 'file-upload', title: 'Upload' });
      expectProblem(
        await call('POST', '/poll/update', acme.key, { pollId: poll.id, pageRules: ['/checkouts/(.)', rule] }),
        400,
        'pos_file_upload',
      );
      expect((await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data.pageRules).toEqual(['/account']);
    },
  );

  it('a point-of-sale rule and a file-upload slide sent at the same time never both land', async () => {
    for (let i = 0; i < 5; i++) {
      const poll = await createPoll(acme, { title: `Race ${i}` });
      const [rule, slide] = await Promise.all([
        call('POST', '/poll/update', acme.key, { pollId: poll.id, pageRules: ['/pos/home'] }),
        call('POST', '/slide', acme.key, { pollId: poll.id, type: 'file-upload', title: 'Upload' }),
      ]);
      expect(rule.statusCode === 200 && slide.statusCode === 201, `${rule.body} ${slide.body}`).toBe(false);
      const loser = rule.statusCode === 200 ? slide : rule;
      expectProblem(loser, 400, 'pos_file_upload');
      const read = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
      expect(
        read.pageRules.includes('/pos/home') && read.slides.some((s: { type: string }) => s.type === 'file-upload'),
      ).toBe(false);
    }
  });

  it('other surfaces take file-upload slides', async () => {
    const poll = await createPoll(acme, { pageRules: ['/(.)/thank_you', '/:order_number/orders/:variable'] });
    const s = await addSlide(poll.id, { type: 'file-upload', title: 'Upload' });
    expect(s.type).toBe('file-upload');
  });
});

describe('authentication and authorisation', () => {
  let acmePoll: Json & { id: string };
  let acmeSlide: Json & { id: string };
  let rivalPoll: Json & { id: string };
  let free: TestAccount;
  let basic: TestAccount;

  beforeAll(async () => {
    acmePoll = await createPoll(acme, {
      title: 'Private to Acme',
      isSynthetic: true,
      languageSettings: { defaultLanguage: 'en', languages: { en: { enabled: true, translations: { title: 'Hi' } } } },
    });
    acmeSlide = await addSlide(acmePoll.id, { title: 'Acme slide' });
    rivalPoll = await createPoll(rival, { title: 'Rival poll' });
    free = await h.account({ plan: 'free', name: 'Free' });
    basic = await h.account({ plan: 'basic', name: 'Basic' });
  });

  type Req = { method: Method; url: string; body?: Json };
  /** Every endpoint, aimed at the given poll, slide and account. */
  const endpoints = (pollId: string, slideId: string, accountId: string): [string, Req][] => [
    ['POST /poll', { method: 'POST', url: '/poll', body: { accountId, title: 'x' } }],
    ['POST /survey', { method: 'POST', url: '/survey', body: { accountId, title: 'x' } }],
    ['POST /poll dryRun', { method: 'POST', url: '/poll', body: { accountId, title: 'x', dryRun: true } }],
    [
      'POST /commit',
      { method: 'POST', url: '/commit', body: { data: { id: 'poll_0000000000000000000000', accountId, title: 'x' } } },
    ],
    ['GET /poll', { method: 'GET', url: `/poll?pollId=${pollId}` }],
    ['GET /polls', { method: 'GET', url: `/polls?accountId=${accountId}` }],
    ['POST /poll/update', { method: 'POST', url: '/poll/update', body: { pollId, title: 'Hijacked' } }],
    ['DELETE /poll', { method: 'DELETE', url: `/poll?pollId=${pollId}` }],
    ['POST /research/start', { method: 'POST', url: '/research/start', body: { pollId, participants: 1 } }],
    ['GET /poll/translations', { method: 'GET', url: `/poll/translations?pollId=${pollId}&language=en` }],
    [
      'POST /poll/translations/update',
      {
        method: 'POST',
        url: '/poll/translations/update',
        body: { pollId, language: 'en', translations: { title: 'Hijacked' } },
      },
    ],
    ['GET /account/settings', { method: 'GET', url: `/account/settings?accountId=${accountId}` }],
    [
      'PATCH /account/settings',
      { method: 'PATCH', url: '/account/settings', body: { accountId, smsDisplaySettings: { message: 'Hijacked' } } },
    ],
    ['POST /slide', { method: 'POST', url: '/slide', body: { pollId, type: 'short-answer', title: 'x' } }],
    ['GET /slides', { method: 'GET', url: `/slides?pollId=${pollId}` }],
    ['POST /slide/update', { method: 'POST', url: '/slide/update', body: { slideId, title: 'Hijacked' } }],
    ['DELETE /slide', { method: 'DELETE', url: `/slide?slideId=${slideId}` }],
  ];
  const send = (r: Req, key: string | undefined, headers: Record<string, string> = {}) =>
    h.app.inject({
      method: r.method,
      url: r.url,
      headers: { ...(key ? bearer(key) : {}), ...headers },
      ...(r.body ? { payload: r.body } : {}),
    });

  it('every endpoint answers 401 unauthenticated without a key, before looking at the body', async () => {
    for (const [name, r] of endpoints(acmePoll.id, acmeSlide.id, acme.accountId)) {
      const res = await send(r, undefined);
      expect(res.statusCode, name).toBe(401);
      expectProblem(res, 401, 'unauthenticated');
    }
    expectProblem(await call('POST', '/poll', undefined, { nonsense: true }), 401, 'unauthenticated');
  });

  it.each([
    ['an unknown key', { authorization: `Bearer cvk_${'A'.repeat(32)}` }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['another scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('every endpoint answers 401 for %s', async (_why, headers) => {
    for (const [name, r] of endpoints(acmePoll.id, acmeSlide.id, acme.accountId)) {
      const res = await send(r, undefined, headers);
      expect(res.statusCode, name).toBe(401);
      expectProblem(res, 401, 'unauthenticated');
    }
  });

  it('accounts on the free and basic plans get 403 plan_required', async () => {
    for (const acct of [free, basic]) {
      expectProblem(
        await call('POST', '/poll', acct.key, { accountId: acct.accountId, title: 'x' }),
        403,
        'plan_required',
      );
      expectProblem(await call('GET', `/polls?accountId=${acct.accountId}`, acct.key), 403, 'plan_required');
      expectProblem(
        await call('PATCH', '/account/settings', acct.key, {
          accountId: acct.accountId,
          smsDisplaySettings: { message: 'x' },
        }),
        403,
        'plan_required',
      );
      // a non-member learns nothing about the account, not even its plan
      expectProblem(
        await call('POST', '/poll', rival.key, { accountId: acct.accountId, title: 'x' }),
        404,
        'not_found',
      );
    }
  });

  it('an account downgraded below premium loses access to its polls and slides', async () => {
    const down = await h.account({ name: 'Downgraded' });
    const poll = await createPoll(down);
    const slide = await addSlide(poll.id, {}, down.key);
    await setPlan(h.deps, down.accountId, 'basic');
    for (const [name, r] of endpoints(poll.id, slide.id, down.accountId)) {
      const res = await send(r, down.key);
      expect(res.statusCode, name).toBe(403);
      expectProblem(res, 403, 'plan_required');
    }
    await setPlan(h.deps, down.accountId, 'enterprise');
    expect((await call('GET', `/poll?pollId=${poll.id}`, down.key)).statusCode).toBe(200);
  });

  it('a read_only key may read but every write is 403 role_forbidden', async () => {
    const reads = ['GET /poll', 'GET /polls', 'GET /poll/translations', 'GET /account/settings', 'GET /slides'];
    for (const [name, r] of endpoints(acmePoll.id, acmeSlide.id, acme.accountId)) {
      const res = await send(r, acmeReader);
      if (reads.includes(name)) {
        expect(res.statusCode, name).toBe(200);
      } else {
        expect(res.statusCode, `${name}: ${res.body}`).toBe(403);
        expectProblem(res, 403, 'role_forbidden');
      }
    }
    const read = (await call('GET', `/poll?pollId=${acmePoll.id}`, acme.key)).json().data;
    expect(read.title).toBe('Private to Acme');
    expect(await slideIds(acmePoll.id)).toEqual([acmeSlide.id]);
  });

  it('an editor may write polls and slides', async () => {
    const poll = await createPoll(acme, { title: 'By editor' }, acmeEditor);
    const slide = await addSlide(poll.id, {}, acmeEditor);
    expect(
      (await call('POST', '/poll/update', acmeEditor, { pollId: poll.id, isVisible: true })).json().data.isVisible,
    ).toBe(true);
    expect((await call('DELETE', `/slide?slideId=${slide.id}`, acmeEditor)).statusCode).toBe(200);
    expect((await call('DELETE', `/poll?pollId=${poll.id}`, acmeEditor)).statusCode).toBe(200);
  });

  it("another account's poll, slide or account id is a 404 identical to a missing one", async () => {
    const foreign = endpoints(acmePoll.id, acmeSlide.id, acme.accountId);
    const missing = endpoints('poll_0000000000MISSING0000', 'sld_00000000000MISSING0000', 'acc_00000000000MISSING0000');
    for (const [i, [name, r]] of foreign.entries()) {
      const a = await send(r, rival.key);
      const b = await send(missing[i]![1], rival.key);
      const pa = expectProblem(a, 404, 'not_found');
      const pb = expectProblem(b, 404, 'not_found');
      expect(pa, name).toEqual(pb);
      expect(a.headers['content-type'], name).toBe(b.headers['content-type']);
    }
    // nothing of Acme's changed, and Rival's own poll is still there
    const read = (await call('GET', `/poll?pollId=${acmePoll.id}`, acme.key)).json().data;
    expect(read.title).toBe('Private to Acme');
    expect(read.slides.map((s: { id: string; title: string }) => [s.id, s.title])).toEqual([
      [acmeSlide.id, 'Acme slide'],
    ]);
    const tr = (await call('GET', `/poll/translations?pollId=${acmePoll.id}&language=en`, acme.key)).json().data;
    expect(tr.translations).toEqual({ title: 'Hi' });
    const settings = (await call('GET', `/account/settings?accountId=${acme.accountId}`, acme.key)).json().data;
    expect(settings.smsDisplaySettings).not.toEqual({ message: 'Hijacked' });
    const rivalList = (await call('GET', `/polls?accountId=${rival.accountId}`, rival.key))
      .json()
      .data.map((p: { id: string }) => p.id);
    expect(rivalList).toEqual([rivalPoll.id]);
    const research = await h.database.db
      .selectFrom('responses')
      .select('id')
      .where('poll_id', '=', acmePoll.id)
      .execute();
    expect(research).toEqual([]);
  });

  it('a 404 for a foreign poll does not reveal that it exists, even to a read_only key of another account', async () => {
    const rivalReader = await h.member(rival.accountId, 'read_only');
    const foreign = expectProblem(
      await call('POST', '/poll/update', rivalReader, { pollId: acmePoll.id, title: 'x' }),
      404,
      'not_found',
    );
    const missing = expectProblem(
      await call('POST', '/poll/update', rivalReader, { pollId: 'poll_0000000000MISSING0000', title: 'x' }),
      404,
      'not_found',
    );
    expect(foreign).toEqual(missing);
  });

  it('unknown routes answer a problem document too', async () => {
    expectProblem(await call('GET', '/nope', acme.key), 404, 'not_found');
  });
});
