import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, type TestAccount } from '../../support/app.js';
import {
  acme,
  addSlide,
  call,
  createPoll,
  expectProblem,
  h,
  paths,
  rival,
  SPEC_DISPLAY,
  SPEC_EMAIL,
  SPEC_SETTINGS,
  SPEC_SMS,
  SPEC_VISIBILITY,
  usePollsApi,
  type Json,
} from '../../support/polls-api.js';

/**
 * Route tests for polls (src/http/routes/polls.ts): POST /poll and its alias POST /survey, the
 * dry run and POST /commit, GET /poll, GET /polls, POST /poll/update and DELETE /poll, with every
 * error path. Slides, logic, translations and research have files of their own beside this one.
 */

usePollsApi();

describe('POST /poll and POST /survey', () => {
  it.each(['/poll', '/survey'])('%s saves a hidden poll with no slides and every default', async (url) => {
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

  it.each([
    ['emailDisplaySettings.subject', { emailDisplaySettings: { subject: '   ' } }, '/emailDisplaySettings/subject'],
    ['smsDisplaySettings.message', { smsDisplaySettings: { message: '\n\t ' } }, '/smsDisplaySettings/message'],
    ['a pageRules entry', { pageRules: ['/ok', '  '] }, '/pageRules/1'],
    ['a pageExcludeRules entry', { pageExcludeRules: [' '] }, '/pageExcludeRules/0'],
    ['displaySettings.shape', { displaySettings: { shape: '  ' } }, '/displaySettings/shape'],
    [
      'a targeting browsers entry',
      { targetingSettings: { browsers: ['chrome', ' '] } },
      '/targetingSettings/browsers/1',
    ],
    ['a targeting referrers entry', { targetingSettings: { referrers: ['\t'] } }, '/targetingSettings/referrers/0'],
    [
      'a targeting ipAddresses entry',
      { targetingSettings: { ipAddresses: [' '] } },
      '/targetingSettings/ipAddresses/0',
    ],
  ])('refuses %s that is empty once trimmed, on create and update', async (_what, fields, path) => {
    const created = expectProblem(
      await call('POST', '/poll', acme.key, { accountId: acme.accountId, title: 'Blank text', ...fields }),
      400,
      'validation_failed',
    );
    expect(paths(created)).toEqual([path]);
    const poll = await createPoll(acme, { title: 'Blank text' });
    const updated = expectProblem(
      await call('POST', '/poll/update', acme.key, { pollId: poll.id, title: 'Changed', ...fields }),
      400,
      'validation_failed',
    );
    expect(paths(updated)).toEqual([path]);
    const read = (await call('GET', `/poll?pollId=${poll.id}`, acme.key)).json().data;
    expect(read).toMatchObject({ title: 'Blank text', pageRules: [], pageExcludeRules: null });
    expect([read.emailDisplaySettings, read.smsDisplaySettings]).toEqual([SPEC_EMAIL, SPEC_SMS]);
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
      'a schedule starting on a leap second',
      { schedule: { type: 'scheduled', startAt: '2030-12-31T23:59:60Z', endAt: '2030-01-01T00:00:00Z' } },
      '/schedule/startAt',
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

  it('targeting metadata merges up to 100 keys in all, and a key set to null is removed', async () => {
    const id = created[1]!;
    const keys = (from: number, n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${from + i}`, 'x'.repeat(1000)]));
    const first = await call('POST', '/poll/update', pager.key, {
      pollId: id,
      targetingSettings: { percentage: 50, metadata: keys(0, 60) },
    });
    expect(first.statusCode, first.body).toBe(200);
    const over = expectProblem(
      await call('POST', '/poll/update', pager.key, { pollId: id, targetingSettings: { metadata: keys(60, 60) } }),
      409,
      'limit_reached',
    );
    expect(paths(over)).toContain('/targetingSettings/metadata');
    const read = (await call('GET', `/poll?pollId=${id}`, pager.key)).json().data;
    expect(Object.keys(read.targetingSettings.metadata)).toHaveLength(60);
    // Twenty removed, forty added: 80 in all.
    const removed = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, null]));
    const res = await call('POST', '/poll/update', pager.key, {
      pollId: id,
      targetingSettings: { metadata: { ...removed, ...keys(60, 40) } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const metadata = res.json().data.targetingSettings.metadata;
    expect(Object.keys(metadata)).toHaveLength(80);
    expect(metadata).not.toHaveProperty('k0');
    expect(metadata.k99).toBe('x'.repeat(1000));
    expect(res.json().data.targetingSettings.percentage).toBe(50);
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
