import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_DEFAULTS } from '../../../src/domain/poll-defaults.js';
import { bearer, harness, type Harness, type TestAccount } from '../../support/app.js';

let h: Harness;
let acme: TestAccount;

beforeAll(async () => {
  h = await harness();
  acme = await h.account();
});
afterAll(() => h?.close());

describe('POST /poll', () => {
  it('saves a hidden poll with no slides and every default', async () => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/poll',
      headers: bearer(acme.key),
      payload: { accountId: acme.accountId, title: 'Checkout feedback' },
    });
    expect(res.statusCode).toBe(201);
    const poll = res.json().data;
    expect(poll).toMatchObject({
      accountId: acme.accountId,
      title: 'Checkout feedback',
      isVisible: false,
      slides: [],
      pageRules: [],
    });
    expect(poll.settings).toEqual(SPEC_DEFAULTS.settings);
    expect(poll.displaySettings).toEqual(SPEC_DEFAULTS.displaySettings);
    expect(poll.emailDisplaySettings).toEqual(SPEC_DEFAULTS.emailDisplaySettings);
    expect(poll.smsDisplaySettings).toEqual(SPEC_DEFAULTS.smsDisplaySettings);
    expect(poll.visibilitySettings).toEqual(SPEC_DEFAULTS.visibilitySettings);
    const read = await h.app.inject({ url: `/poll?pollId=${poll.id}`, headers: bearer(acme.key) });
    expect(read.json().data).toEqual(poll);
  });
});
