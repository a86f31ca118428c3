import { existsSync, mkdirSync, mkdtempSync, readFileSync, copyFileSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxMailer } from '../../src/infra/mail/mailer.js';
import { DASHBOARD_DIST } from '../../src/http/routes/dashboard.js';
import { alertCheck, startScheduler } from '../../src/worker/scheduler.js';
import { bearer, harness, type Harness, type TestAccount } from '../support/app.js';
import { answer, visiblePoll } from '../support/fixtures.js';
import { ROOT } from '../support/processes.js';
import { startReceiver } from '../support/receiver.js';
import { startTestWorker } from '../support/worker.js';

/**
 * The dashboard (web/, served at /app) in headless Chromium against a real server: the API on
 * a loopback port with the real delivery worker and alert scheduler, a real HTTPS receiver for
 * the webhook. Signs in, creates a poll through its dry-run preview, adds a slide with logic, a
 * translation and webhooks, answers the poll, and watches the delivery and its attempt appear.
 * Then the controls: pause and resume, edit, recover a window, resend a delivery (its new attempt
 * and the resend event in the timeline), a test event, and the account's delivery log. Keys:
 * a new key shown once, revoked behind Confirm (the key is refused from then on), a member
 * removed, the last owner kept, and revoking the dashboard's own key signing it out.
 * Any console error in the page fails the test. Screenshots go to test-artifacts/dashboard/;
 * with UPDATE_DOCS_SCREENSHOT=1 the deliveries view is also written to docs/dashboard.png.
 */

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'dashboard');
const QUIET_MS = 1_000;

let h: Harness;
let acct: TestAccount;
let beta: TestAccount;
let gamma: TestAccount;
/** The email of the user who owns Acme (and is an editor of Beta and Gamma). */
let ownerEmail: string;
let base: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let worker: ReturnType<typeof startTestWorker>;
let alerts: { stop(): Promise<void> };
let outbox: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const consoleErrors: string[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms (last: ${JSON.stringify(v)})`);
    await sleep(100);
  }
}

/** A table whose rows name things (webhooks, polls, slides) that the page loads apart from the rows. */
type NamedRows = { rowsPath: string; labelsPath: string; rows: string; loading: string };
const DELIVERY_LOG = {
  rowsPath: '/webhooks/deliveries',
  rows: 'table.deliveries tbody tr',
  loading: 'Loading deliveries…',
};

/**
 * Opens a table (`open`) while the answer to `labelsPath` (the names its rows show) is held
 * back: once the rows' own answer has arrived and been rendered, no row may show yet (it would
 * name its webhook, poll or slide by id); released, every row names it (`named`).
 */
async function rowsWaitForLabels(t: NamedRows, open: () => Promise<void>, named: string): Promise<void> {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const isLabels = (url: URL) => url.pathname === t.labelsPath;
  await page.route(isLabels, async (route) => {
    await held;
    await route.continue();
  });
  const rowsAnswered = page.waitForResponse((r) => new URL(r.url()).pathname === t.rowsPath);
  await open();
  await (await rowsAnswered).finished();
  // Two frames after the answer's body arrived, the page has rendered what it does with it.
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
  const rows = page.locator(t.rows);
  expect(await rows.count()).toBe(0);
  expect(await page.getByText(t.loading).isVisible()).toBe(true);
  release();
  await rows.first().waitFor();
  for (const text of await rows.allTextContents()) expect(text).toContain(named);
  await page.unroute(isLabels);
}

/** Signs `p` in with Acme's key and waits for the polls page. */
async function signIn(p: Page): Promise<void> {
  await p.goto(`${base}/app/`);
  await p.getByLabel('API key').fill(acct.key);
  await p.getByRole('button', { name: 'Sign in' }).click();
  await p.getByRole('heading', { name: 'Polls', level: 1 }).waitFor();
}

/** Frames wait on a held clock; two turns of the page's task queue let any settled call render. */
async function taskTurns(p: Page): Promise<void> {
  await p.evaluate(
    'new Promise((r) => { const c = new MessageChannel(); let n = 0; c.port1.onmessage = () => (++n < 2 ? c.port2.postMessage(0) : r()); c.port2.postMessage(0); })',
  );
}

/**
 * A loopback server whose answer starts (status, headers and 3,000 bytes of CSV) and then
 * stops; `send` writes more of it. With `status`, the answer is that error's problem document,
 * stopped after its first bytes.
 */
async function stallingServer(status = 200) {
  let answer: ServerResponse | undefined;
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    answer = res;
    if (status !== 200) {
      res.writeHead(status, { 'content-type': 'application/problem+json' });
      res.write('{"type":"/problems/');
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': 'attachment; filename="stalled.csv"',
    });
    res.write('x'.repeat(3_000));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    send: (bytes: number) => answer!.write('x'.repeat(bytes)),
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

async function shot(name: string, p: Page = page): Promise<string> {
  const file = path.join(ARTIFACTS, `${name}.png`);
  await p.screenshot({ path: file, fullPage: true });
  return file;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The dashboard test drives Debian's chromium at ${CHROMIUM}, which is missing. Install it: apt-get update && apt-get install -y chromium`,
    );
  }
  if (!existsSync(path.join(DASHBOARD_DIST, 'index.html'))) {
    throw new Error(`The dashboard is not built (${DASHBOARD_DIST} has no index.html): run npm run build first.`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });

  receiver = await startReceiver();
  receiver.script('/gone', [{ status: 410, body: 'this endpoint is gone' }]);
  h = await harness({
    allowPrivateTargets: true,
    delivery: { batchWindowMs: 0, retryLadderMs: [200, 200, 200, 200, 200] },
  });
  h.clock.ms = Date.now();
  // A real clock: the worker, the alert windows and the browser all run in wall time.
  h.deps.clock = { now: () => new Date() };
  worker = startTestWorker(h.deps);
  outbox = mkdtempSync(path.join(os.tmpdir(), 'canvass-dashboard-outbox-'));
  const controller = new AbortController();
  const scheduler = startScheduler(
    {
      ...worker.deps,
      mailer: outboxMailer(outbox, 'Canvass <alerts@localhost>'),
      alerts: { quietMs: QUIET_MS, reminderMs: 60 * 60_000 },
    },
    controller.signal,
    { tickMs: 50, tasks: [alertCheck()], logger: pino({ level: 'silent' }) },
  );
  alerts = { stop: async () => (controller.abort(), await scheduler) };

  // A user in two accounts: owner of Acme, editor of Beta.
  acct = await h.account({ name: 'Acme' });
  beta = await h.account({ name: 'Beta' });
  ownerEmail = (
    await h.database.db.selectFrom('users').select('email').where('id', '=', acct.userId).executeTakeFirstOrThrow()
  ).email;
  await h.member(beta.accountId, 'editor', ownerEmail);
  // And an editor of Gamma, on a plan the API does not serve.
  gamma = await h.account({ name: 'Gamma', plan: 'basic' });
  await h.member(gamma.accountId, 'editor', ownerEmail);

  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;

  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  context.setDefaultTimeout(15_000);
  page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`page error: ${e.message}`));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await alerts?.stop();
  await worker?.stop();
  await receiver?.close();
  await h?.close();
  if (outbox) rmSync(outbox, { recursive: true, force: true });
});

describe('dashboard at /app', () => {
  it('signs in, creates a poll with a slide and webhooks, and shows a delivery with its attempt', async () => {
    // Sign in with the keyboard alone.
    await page.goto(`${base}/app/`);
    await page.getByRole('heading', { name: 'Canvass dashboard' }).waitFor();
    await shot('01-sign-in');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.id')).toBe('api-key');
    await page.keyboard.type(acct.key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Polls', level: 1 }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('canvass.apiKey')")).toBe(acct.key);
    expect(await page.evaluate('localStorage.length')).toBe(0);

    // The account switcher lists both memberships with role and plan.
    const switcher = page.getByLabel('Account', { exact: true });
    expect(await switcher.locator('option').allTextContents()).toEqual([
      'Acme — owner, premium',
      'Beta — editor, premium',
      'Gamma — editor, basic',
    ]);
    await switcher.selectOption(beta.accountId);
    await page.getByText('No polls yet').waitFor();
    // An editor is not shown alerts, which report webhooks' failures: the page says why, and asks nothing.
    const alertsAsked = { n: 0 };
    const countAlerts = (r: { url(): string }) => void (new URL(r.url()).pathname === '/alerts' && alertsAsked.n++);
    page.on('request', countAlerts);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Alerts' }).click();
    await page
      .getByText("Alerts report webhooks' failures and are seen by owners, admins and billing admins, as webhooks are")
      .waitFor();
    expect(alertsAsked.n).toBe(0);
    page.off('request', countAlerts);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Polls' }).click();
    await page.getByText('No polls yet').waitFor();
    // Each account's polls quota, and how much of it the account uses.
    const pollsUsed = async (accountId: string) =>
      (
        await h.app.inject({ method: 'GET', url: `/account/usage?accountId=${accountId}`, headers: bearer(acct.key) })
      ).json().data.polls as { used: number; quota: number };
    const pollUsage = () => page.getByTestId('poll-usage').textContent();
    const betaPolls = await pollsUsed(beta.accountId);
    expect(betaPolls.used).toBe(0);
    await expect.poll(pollUsage, { timeout: 5_000 }).toBe(`0 of ${betaPolls.quota} polls this account may hold.`);
    // On a plan the API does not serve, the page says so and does not ask for the usage it would be refused.
    const usageAsked = { n: 0 };
    const countUsage = (r: { url(): string }) =>
      void (new URL(r.url()).pathname === '/account/usage' && usageAsked.n++);
    page.on('request', countUsage);
    await switcher.selectOption(gamma.accountId);
    await page.getByText('Gamma is on the basic plan').waitFor();
    await page.getByText('API access requires the premium plan or higher').waitFor();
    expect(usageAsked.n).toBe(0);
    expect(await page.getByTestId('poll-usage').count()).toBe(0);
    page.off('request', countUsage);
    // The browser logs the refused /polls request; that refusal is what this step shows.
    const refused = consoleErrors.filter((e) => e.includes('403'));
    expect(refused.length).toBeGreaterThan(0);
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !e.includes('403')));
    await switcher.selectOption(acct.accountId);
    const acmePolls = await pollsUsed(acct.accountId);
    await expect
      .poll(pollUsage, { timeout: 5_000 })
      .toBe(`${acmePolls.used} of ${acmePolls.quota} polls this account may hold.`);

    // Create a poll: dry-run preview first, then commit.
    await page.getByLabel('Title').fill('Checkout survey');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('heading', { name: 'Preview — not saved yet' }).waitFor();
    // The Preview button is gone: focus is on the step shown, not the page's body.
    await expect.poll(() => page.evaluate('document.activeElement?.id'), { timeout: 5_000 }).toBe('poll-preview-title');
    const previewId = (await page.locator('.preview dd.mono').textContent())!;
    expect(previewId).toMatch(/^poll_/);
    expect(
      (await h.app.inject({ method: 'GET', url: `/poll?pollId=${previewId}`, headers: bearer(acct.key) })).statusCode,
    ).toBe(404);
    await shot('02-poll-preview');
    await page.getByRole('button', { name: 'Save poll' }).click();
    await page.getByRole('heading', { name: 'Checkout survey', level: 1 }).waitFor();
    const pollId = new URL(page.url()).pathname.split('/')[3]!;
    expect(pollId).toBe(previewId);

    // Make it visible.
    const visible = page.getByRole('switch', { name: 'Visible to respondents' });
    expect(await visible.isChecked()).toBe(false);
    const untilVisible = (what: string) =>
      until(
        what,
        async () =>
          (await h.app.inject({ method: 'GET', url: `/poll?pollId=${pollId}`, headers: bearer(acct.key) })).json().data
            .isVisible,
        (v) => v === true,
      );
    // One update at a time: the switch waits for its update's answer before it moves again.
    let answerUpdate!: () => void;
    const updating = new Promise<void>((r) => (answerUpdate = r));
    const isUpdate = (u: URL) => u.pathname === '/poll/update';
    await page.route(isUpdate, async (r) => (await updating, await r.continue()));
    await visible.check();
    expect(await visible.getAttribute('aria-disabled')).toBe('true');
    // A click meanwhile sends nothing, and leaves the switch as its update will.
    const updates = { n: 0 };
    const countUpdates = (r: { url(): string }) => void (new URL(r.url()).pathname === '/poll/update' && updates.n++);
    page.on('request', countUpdates);
    await visible.click({ force: true });
    expect(await visible.isChecked()).toBe(true);
    answerUpdate();
    await expect.poll(() => visible.getAttribute('aria-disabled'), { timeout: 5_000 }).toBeNull();
    page.off('request', countUpdates);
    expect(updates.n).toBe(0);
    await page.unroute(isUpdate);
    await untilVisible('poll visible');

    // A choice slide with question logic.
    await page.getByRole('link', { name: 'Slides' }).click();
    await page.getByRole('heading', { name: 'Add a slide' }).waitFor();
    await page.getByLabel('Question or title').fill('How was checkout?');
    await page.getByLabel('Answers, one per line').fill('Great\nFine\nBad');
    await page.getByRole('button', { name: 'Add a logic rule' }).click();
    await page.getByLabel('Condition 1 value').fill('Bad');
    await page.getByLabel('Then', { exact: true }).selectOption('end-survey');
    await page.getByRole('button', { name: 'Add slide' }).click();
    await page.getByText('If the answer equals "Bad" → end the survey').waitFor();
    await shot('03-slides');
    // The poll's overview counts it, without a reload.
    await page.getByRole('link', { name: 'Overview' }).click();
    await expect
      .poll(() => page.locator('dl.facts dt:text-is("Slides") + dd').textContent(), { timeout: 5_000 })
      .toBe('1');
    const slides = (
      await h.app.inject({ method: 'GET', url: `/slides?pollId=${pollId}`, headers: bearer(acct.key) })
    ).json().data as { id: string; logic: unknown }[];
    expect(slides).toHaveLength(1);
    expect(slides[0]!.logic).toEqual([
      { match: 'any', conditions: [{ op: 'equals', value: 'Bad' }], action: { type: 'end-survey' } },
    ]);

    // A translation. Meanwhile the poll is hidden elsewhere: the poll loaded again after the save
    // (a new language) turns the switch off, whatever it last sent.
    const setVisible = async (isVisible: boolean) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/poll/update',
        headers: bearer(acct.key),
        payload: { pollId, isVisible },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    await setVisible(false);
    await page.getByRole('link', { name: 'Translations' }).click();
    await page.getByLabel('Add a language').fill('fr');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByLabel('Text for title').fill('Le paiement, ça s’est bien passé ?');
    await page.getByRole('button', { name: 'Save fr' }).click();
    await page.getByText('Saved the fr translations.').waitFor();
    await expect.poll(() => visible.isChecked(), { timeout: 5_000 }).toBe(false);
    await visible.check();
    await untilVisible('poll visible again');
    const fr = await h.app.inject({
      method: 'GET',
      url: `/poll/translations?pollId=${pollId}&language=fr`,
      headers: bearer(acct.key),
    });
    expect(fr.json().data.translations).toEqual({ title: 'Le paiement, ça s’est bien passé ?' });
    // Another language, chosen while its texts are on their way: the first one's texts are
    // never shown, nor saved, under it. (Languages list in the order the poll stores them.)
    const de = await h.app.inject({
      method: 'POST',
      url: '/poll/translations/update',
      headers: bearer(acct.key),
      payload: { pollId, language: 'de', translations: { title: 'Lief die Zahlung gut?' } },
    });
    expect(de.statusCode, de.body).toBe(200);
    await page.reload();
    const language = page.getByLabel('Language', { exact: true });
    await page.getByLabel('Text for title').waitFor();
    const [first, other] = (await language.inputValue()) === 'de' ? ['de', 'fr'] : ['fr', 'de'];
    let answerOther!: () => void;
    const held = new Promise<void>((r) => (answerOther = r));
    const isOther = (u: URL) => u.pathname === '/poll/translations' && u.searchParams.get('language') === other;
    await page.route(isOther, async (r) => (await held, await r.continue()));
    await language.selectOption(other!);
    await page.getByText(`Loading the ${other} texts…`).waitFor();
    expect(await page.getByRole('button', { name: `Save ${other}` }).count()).toBe(0);
    expect(await page.getByRole('button', { name: `Save ${first}` }).count()).toBe(0);
    expect(await page.getByLabel('Text for title').count()).toBe(0);
    answerOther();
    await expect
      .poll(() => page.getByLabel('Text for title').inputValue(), { timeout: 5_000 })
      .toBe(other === 'de' ? 'Lief die Zahlung gut?' : 'Le paiement, ça s’est bien passé ?');
    await page.unroute(isOther);
    // A save sends the texts changed on the page only: a title another editor saved since the
    // page read it stays.
    const elsewhere = await h.app.inject({
      method: 'POST',
      url: '/poll/translations/update',
      headers: bearer(acct.key),
      payload: { pollId, language: other, translations: { title: 'saved elsewhere' } },
    });
    expect(elsewhere.statusCode, elsewhere.body).toBe(200);
    await page.getByRole('button', { name: 'Add a text' }).click();
    await page.getByLabel('Key 2', { exact: true }).fill('q1');
    await page.getByLabel('Text for q1').fill('<b>second</b> text');
    await page.getByRole('button', { name: `Save ${other}` }).click();
    await page.getByText(`Saved the ${other} translations.`).waitFor();
    const merged = await h.app.inject({
      method: 'GET',
      url: `/poll/translations?pollId=${pollId}&language=${other}`,
      headers: bearer(acct.key),
    });
    expect(merged.json().data.translations).toEqual({ title: 'saved elsewhere', q1: 'second text' });
    await expect.poll(() => page.getByLabel('Text for title').inputValue(), { timeout: 5_000 }).toBe('saved elsewhere');
    // Adding a language the poll has already shows its stored texts, not a blank one to save over them.
    await page.getByLabel('Add a language').fill(other!);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    expect(await page.getByLabel('Text for title').inputValue()).toBe('saved elsewhere');
    expect(await page.getByLabel('Text for q1').inputValue()).toBe('second text');
    // A save that fails shows its error alone, not beside the last one's "Saved".
    await page.getByLabel('Text for q1').fill('third text');
    await page.getByRole('button', { name: `Save ${other}` }).click();
    await page.getByText(`Saved the ${other} translations.`).waitFor();
    const isSave = (u: URL) => u.pathname === '/poll/translations/update';
    await page.route(isSave, (r) =>
      r.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify({
          type: 'about:blank',
          title: 'Service Unavailable',
          status: 503,
          detail: 'save refused',
        }),
      }),
    );
    await page.getByLabel('Text for q1').fill('fourth text');
    await page.getByRole('button', { name: `Save ${other}` }).click();
    await page.getByText('save refused').waitFor();
    expect(await page.getByText(/^Saved the/).count()).toBe(0);
    await page.unroute(isSave);
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !e.includes('503')));

    // Webhooks: the first shows the account's signing secret once; a second one fails for good.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL (public https)').fill(receiver.url('/hook'));
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = (await page.getByTestId('signing-secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    // It names the account it signs for.
    await page.getByRole('heading', { name: 'Signing secret of Acme — shown only this once' }).waitFor();
    await shot('04-webhook-secret');
    // A copy the browser refuses (no clipboard outside a secure context) says so.
    await page.evaluate('navigator.clipboard.writeText = () => Promise.reject(new Error("refused"))');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('The browser would not copy it').waitFor();
    // Another account chosen meanwhile keeps it until dismissed: it is never shown again.
    await switcher.selectOption(beta.accountId);
    await page.getByText('No polls yet').waitFor();
    expect(await page.getByTestId('signing-secret').textContent()).toBe(secret);
    await switcher.selectOption(acct.accountId);
    await page.getByRole('link', { name: 'Checkout survey' }).click();
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Endpoint URL (public https)').waitFor();
    expect(await page.getByTestId('signing-secret').textContent()).toBe(secret);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await expect.poll(() => page.evaluate('document.activeElement?.id'), { timeout: 5_000 }).toBe('main');
    await page.getByLabel('Endpoint URL (public https)').fill(receiver.url('/gone'));
    await page.getByRole('button', { name: 'Create webhook' }).click();
    await page.getByRole('heading', { name: receiver.url('/gone') }).waitFor();
    expect(await page.getByTestId('signing-secret').count()).toBe(0);
    const hooks = (
      await h.app.inject({ method: 'GET', url: `/webhooks?pollId=${pollId}`, headers: bearer(acct.key) })
    ).json().data as { id: string; url: string; legacySecret: string }[];
    const good = hooks.find((w) => w.url.endsWith('/hook'))!;
    const card = page.locator('.webhooks > li', { hasText: receiver.url('/hook') });
    await card.getByRole('button', { name: 'Reveal legacy secret' }).click();
    expect(await card.locator('code.secret').textContent()).toBe(good.legacySecret);
    expect(await card.locator('.badge').first().textContent()).toBe('healthy');

    // A respondent answers (the public API, no key).
    const answered = await fetch(`${base}/participant/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pollId, participantId: 'ann', answers: [{ slideId: slides[0]!.id, value: 'Great' }] }),
    });
    expect(answered.status).toBe(201);
    const [req] = await receiver.waitFor((r) => r.some((x) => x.path === '/hook'));
    expect(req!.headers['x-service-delivery-id']).toMatch(/^dlv_/);

    // The delivery log shows it, delivered; its detail shows the attempt and the payload.
    // Its rows name each webhook by its URL, not its id, even when the webhooks answer after the log.
    await rowsWaitForLabels(
      { ...DELIVERY_LOG, labelsPath: '/webhooks' },
      () => page.getByRole('link', { name: 'Deliveries' }).click(),
      receiver.url('/'),
    );
    await page.getByLabel('Webhook', { exact: true }).selectOption(good.id);
    const row = page.locator('table.deliveries tbody tr', { hasText: 'delivered' });
    await until(
      'a delivered delivery in the log',
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        await sleep(300);
        return row.count();
      },
      (n) => n === 1,
    );
    await row.getByRole('button', { name: /^View delivery/ }).click();
    const timeline = page.getByRole('list', { name: 'Attempts' });
    await timeline.waitFor();
    await expect.poll(() => timeline.locator('li').count(), { timeout: 5_000 }).toBe(1);
    expect(await timeline.locator('li').first().textContent()).toMatch(/Attempt 1\s*HTTP 200\s*\d+ ms/);
    const payload = JSON.parse((await page.getByLabel('Payload JSON').textContent())!);
    expect(payload).toMatchObject({ type: 'submitted-responses', pollId, participantId: 'ann' });
    expect(payload.responses[slides[0]!.id].value).toBe('Great');
    const docsShot = await shot('05-deliveries');

    // Filters: the failing webhook's delivery is rejected; status filter narrows the log.
    await page.getByLabel('Webhook', { exact: true }).selectOption('');
    await page.getByLabel('Status', { exact: true }).selectOption('rejected');
    await until(
      'the rejected delivery',
      async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        await sleep(300);
        return page.locator('table.deliveries tbody tr').allTextContents();
      },
      (rows) => rows.length === 1 && rows[0]!.includes('rejected') && rows[0]!.includes('/gone'),
    );

    // Responses: the table, a time filter, and the CSV export through the bearer header.
    // The row names the slide by its title, not its id, even when the slides answer after the responses.
    await rowsWaitForLabels(
      { rowsPath: '/responses', labelsPath: '/slides', rows: 'table tbody tr', loading: 'Loading responses…' },
      () => page.getByRole('link', { name: 'Responses' }).click(),
      'How was checkout?',
    );
    expect(await page.locator('table tbody tr').first().textContent()).toContain('Great');
    await page.getByLabel('Created after').fill('2999-01-01T00:00:00');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No responses in this time range.').waitFor();
    // The export follows the time range applied: none of its answers are in it.
    const [ranged] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV of this time range' }).click(),
    ]);
    const rangedCsv = readFileSync((await ranged.path())!, 'utf8');
    expect(rangedCsv.slice(1).split('\n')[0]).toMatch(/^responseId,participantId,slideId/);
    expect(rangedCsv).not.toContain(',ann,');
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.locator('table tbody tr', { hasText: 'Great' }).waitFor();
    await shot('06-responses');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`responses-${pollId}.csv`);
    const csv = readFileSync((await download.path())!, 'utf8');
    // A byte order mark first, for a spreadsheet opened from disk.
    expect(csv.charCodeAt(0)).toBe(0xfeff);
    expect(csv.slice(1).split('\n')[0]).toMatch(/^responseId,participantId,slideId/);
    expect(csv).toContain(',ann,');

    // Alerts: the failing endpoint is alerted once the quiet period has passed.
    await until(
      'an alert email',
      async () =>
        (
          await h.app.inject({ method: 'GET', url: `/alerts?accountId=${acct.accountId}`, headers: bearer(acct.key) })
        ).json().data.length,
      (n) => n >= 1,
    );
    await page.getByRole('link', { name: 'Alerts' }).click();
    await page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();
    const alert = page.locator('.alerts > li').first();
    expect(await alert.textContent()).toContain(receiver.url('/gone'));
    await alert.getByText('Email text').click();
    expect(await alert.locator('pre.mail').textContent()).toContain(`Endpoint: ${receiver.url('/gone')}`);
    await alert.getByRole('button', { name: 'Show the HTML version' }).click();
    await alert.locator('iframe.mail-html').waitFor();
    await shot('07-alerts');

    // The webhook page now shows the failing endpoint as alerted.
    await page.goto(`${base}/app/polls/${pollId}/webhooks`);
    const gone = page.locator('.webhooks > li', { hasText: receiver.url('/gone') });
    await gone.locator('.badge', { hasText: 'alerted' }).waitFor();
    expect(await gone.textContent()).toMatch(/Alert emails sent\s*1/);

    if (process.env.UPDATE_DOCS_SCREENSHOT === '1') copyFileSync(docsShot, path.join(ROOT, 'docs', 'dashboard.png'));
    expect(consoleErrors).toEqual([]);
  }, 120_000);

  it('pauses, resumes, edits and recovers a webhook, resends a delivery from its detail, sends a test event', async () => {
    const polls = (
      await h.app.inject({ method: 'GET', url: `/polls?accountId=${acct.accountId}`, headers: bearer(acct.key) })
    ).json().data as { id: string; title: string }[];
    const pollId = polls.find((p) => p.title === 'Checkout survey')!.id;
    const email = ownerEmail;
    const webhook = async (url: string) =>
      (
        (await h.app.inject({ method: 'GET', url: `/webhooks?pollId=${pollId}`, headers: bearer(acct.key) })).json()
          .data as { id: string; url: string; paused: boolean; deliveryRule: string }[]
      ).find((w) => w.url === url)!;

    // Pause: the button says Resume and the card shows a paused badge; the API agrees.
    await page.goto(`${base}/app/polls/${pollId}/webhooks`);
    const card = page.locator('.webhooks > li', { hasText: receiver.url('/hook') });
    await card.getByRole('button', { name: `Pause webhook ${receiver.url('/hook')}` }).click();
    await card.getByRole('button', { name: `Resume webhook ${receiver.url('/hook')}` }).waitFor();
    await card.locator('.badge', { hasText: 'paused' }).waitFor();
    expect((await webhook(receiver.url('/hook'))).paused).toBe(true);
    await shot('11-webhook-paused');

    // Recover asks first; a window with nothing rejected or given up queues nothing.
    await card.getByRole('button', { name: /^Recover failed deliveries/ }).click();
    await card.getByLabel('Created from').fill('2000-01-01T00:00:00');
    await card.getByRole('button', { name: 'Recover…' }).click();
    await card.getByRole('button', { name: 'Confirm' }).waitFor();
    await shot('12-webhook-recover-confirm');
    await card.getByRole('button', { name: 'Confirm' }).click();
    await card.getByText(`0 deliveries queued for ${receiver.url('/hook')}.`).waitFor();

    // Resume: the label and the badge go back.
    await card.getByRole('button', { name: `Resume webhook ${receiver.url('/hook')}` }).click();
    await card.getByRole('button', { name: `Pause webhook ${receiver.url('/hook')}` }).waitFor();
    await expect.poll(() => card.locator('.badge', { hasText: 'paused' }).count(), { timeout: 5_000 }).toBe(0);
    expect((await webhook(receiver.url('/hook'))).paused).toBe(false);

    // Edit in place: the failing webhook now sends only completed surveys, under the same id.
    const goneCard = page.locator('.webhooks > li', { hasText: receiver.url('/gone') });
    await goneCard.getByRole('button', { name: `Edit webhook ${receiver.url('/gone')}` }).click();
    await goneCard.getByLabel('When to send').selectOption('complete');
    await shot('13-webhook-edit');
    await goneCard.getByRole('button', { name: 'Save changes' }).click();
    await goneCard.getByText('Send only if fully completed ·').waitFor();
    expect(await webhook(receiver.url('/gone'))).toMatchObject({ deliveryRule: 'complete' });

    // An edit tells what changed against the webhook as its form opened: a URL another admin saves
    // meanwhile, shown by a reload of the list, is not put back by a change of the rule.
    const goneId = (await webhook(receiver.url('/gone'))).id;
    const byId = page.locator('.webhooks > li', { hasText: goneId });
    await byId.getByRole('button', { name: /^Edit webhook/ }).click();
    const moveTo = async (url: string, deliveryRule?: string) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/webhooks/update',
        headers: bearer(acct.key),
        payload: { webhookId: goneId, url, ...(deliveryRule ? { deliveryRule } : {}) },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    await moveTo(receiver.url('/moved'));
    await card.getByRole('button', { name: `Pause webhook ${receiver.url('/hook')}` }).click();
    await byId.getByRole('heading', { name: receiver.url('/moved') }).waitFor();
    await card.getByRole('button', { name: `Resume webhook ${receiver.url('/hook')}` }).click();
    await card.getByRole('button', { name: `Pause webhook ${receiver.url('/hook')}` }).waitFor();
    await byId.getByLabel('When to send').selectOption('partial');
    await byId.getByRole('button', { name: 'Save changes' }).click();
    await byId.getByText('Send if partially or fully completed ·').waitFor();
    expect(await webhook(receiver.url('/moved'))).toMatchObject({ id: goneId, deliveryRule: 'partial' });
    await moveTo(receiver.url('/gone'), 'complete');
    await page.reload();
    await goneCard.getByText('Send only if fully completed ·').waitFor();

    // Resend the delivered delivery from its detail: nothing goes out before Confirm.
    const sentBefore = (await receiver.waitFor(() => true)).filter((r) => r.path === '/hook');
    expect(sentBefore).toHaveLength(1);
    await page.getByRole('link', { name: 'Deliveries' }).click();
    await page.getByLabel('Webhook', { exact: true }).selectOption((await webhook(receiver.url('/hook'))).id);
    const row = page.locator('table.deliveries tbody tr', { hasText: 'delivered' });
    await row.getByRole('button', { name: /^View delivery/ }).click();
    const detail = page.locator('.delivery-detail');
    await detail.getByRole('button', { name: 'Resend' }).click();
    await detail.getByRole('button', { name: 'Confirm' }).waitFor();
    expect((await receiver.waitFor(() => true)).filter((r) => r.path === '/hook')).toHaveLength(1);
    await detail.getByRole('button', { name: 'Confirm' }).click();
    await detail.getByText('Resent as attempt 2.').waitFor();
    const sent = await receiver.waitFor((r) => r.filter((x) => x.path === '/hook').length === 2);
    const [first, again] = sent.filter((r) => r.path === '/hook');
    expect(again!.headers['x-service-delivery-id']).toBe(first!.headers['x-service-delivery-id']);
    expect(again!.rawBody).toBe(first!.rawBody);

    // The timeline shows attempt 2, answered, after the resend and who asked for it.
    const second = page.getByRole('list', { name: 'Attempts' }).locator('li', { hasText: 'Attempt 2' });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return second.textContent();
        },
        { timeout: 15_000, interval: 250 },
      )
      .toMatch(/Attempt 2\s*HTTP 200/);
    expect(await second.textContent()).toContain(`Followed a manual resend by ${email}`);
    await shot('14-delivery-resent');

    // A test event, after a confirmation: a made-up respondent, marked "test" in the log.
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await card.getByRole('button', { name: `Send a test event to ${receiver.url('/hook')}` }).click();
    await card.getByRole('button', { name: 'Confirm' }).click();
    const queued = (await card.getByText(/^Test event queued as delivery dlv_/).textContent())!;
    const testDelivery = /dlv_\w+/.exec(queued)![0];
    const tested = await receiver.waitFor((r) => r.filter((x) => x.path === '/hook').length === 3);
    expect(JSON.parse(tested.filter((r) => r.path === '/hook')[2]!.rawBody).participantId).toMatch(/^test_/);
    await page.getByRole('link', { name: 'Deliveries' }).click();
    await page
      .locator('table.deliveries tbody tr', { hasText: 'test' })
      .locator('.badge', { hasText: 'test' })
      .waitFor();
    // Another delivery's detail is its own: a resend's message on the one before does not follow.
    const logRows = page.locator('table.deliveries tbody tr');
    const isTest = page.locator('.badge', { hasText: 'test' });
    await logRows
      .filter({ hasText: 'delivered' })
      .filter({ hasNot: isTest })
      .first()
      .getByRole('button', { name: /^View delivery/ })
      .click();
    await detail.getByRole('button', { name: 'Resend' }).click();
    await detail.getByRole('button', { name: 'Confirm' }).click();
    await detail.getByText(/^Resent as attempt \d+\.$/).waitFor();
    await logRows
      .filter({ has: isTest })
      .getByRole('button', { name: /^View delivery/ })
      .click();
    await detail.locator('#delivery-title', { hasText: testDelivery }).waitFor();
    expect(await detail.getByText(/^Resent as/).count()).toBe(0);

    // The account's log, several statuses at once: the failing webhook's rejected delivery.
    // Its rows name each poll by its title, even when the polls answer after the log.
    await rowsWaitForLabels(
      { ...DELIVERY_LOG, labelsPath: '/polls' },
      () => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Delivery log' }).click(),
      'Checkout survey',
    );
    await page.getByRole('heading', { name: 'Delivery log', level: 1 }).waitFor();
    const rows = page.locator('table.deliveries tbody tr');
    await expect.poll(() => rows.count(), { timeout: 5_000 }).toBeGreaterThan(0);
    // A filter whose load fails shows its error, and none of the unfiltered rows under it.
    const filtered = (u: URL) => u.pathname === '/webhooks/deliveries' && u.searchParams.has('status');
    await page.route(filtered, (r) =>
      r.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'injected' }),
      }),
    );
    await page.getByRole('checkbox', { name: 'rejected' }).check();
    await page.getByText('injected').first().waitFor();
    expect(await rows.count()).toBe(0);
    await page.unroute(filtered);
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !e.includes('503')));
    await page.getByRole('checkbox', { name: 'given up' }).check();
    await expect
      .poll(() => rows.allTextContents(), { timeout: 5_000 })
      .toEqual([expect.stringMatching(/rejected[\s\S]*Checkout survey[\s\S]*\/gone/)]);
    await rows
      .first()
      .getByRole('button', { name: /^View delivery/ })
      .click();
    await page.getByRole('list', { name: 'Attempts' }).waitFor();
    await shot('15-account-deliveries');
    // Poll titles come over as many pages of polls as the API gives (a page ends early past 8 MiB
    // of settings): here the first is empty, with more after it.
    const firstPolls = (u: URL) => u.pathname === '/polls' && !u.searchParams.has('startCursor');
    await page.route(firstPolls, (r) =>
      r.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ data: [], hasNextPage: true, endCursor: `poll_${'0'.repeat(22)}` }),
      }),
    );
    await page.reload();
    await page.locator('table.deliveries tbody tr', { hasText: 'Checkout survey' }).first().waitFor();
    await page.unroute(firstPolls);

    expect(consoleErrors).toEqual([]);
  }, 60_000);

  it("names a logic-triggered delivery's URL in the poll's delivery log", async () => {
    const url = receiver.url('/logic-log');
    const poll = await visiblePoll(h, acct, {
      title: 'Logic log',
      actionLogic: [{ on: 'complete', action: { type: 'trigger-webhook', url } }],
    });
    await answer(h, { pollId: poll.pollId, answers: [{ slideId: poll.q1, value: 'hi' }], complete: true });
    await receiver.waitFor((r) => r.some((x) => x.path === '/logic-log'));
    await page.goto(`${base}/app/polls/${poll.pollId}/webhooks`);
    await page.getByRole('link', { name: 'Deliveries' }).click();
    const row = page.locator('table.deliveries tbody tr', { hasText: 'survey-logic' });
    await row.waitFor();
    expect(await row.locator('td[data-label="Endpoint"]').textContent()).toBe(url);
    expect(consoleErrors).toEqual([]);
  });

  it('creates a key shown once, revokes it behind Confirm, removes a member; keeps the last owner; signs out on its own key', async () => {
    // Internationalised, as the API takes it (an input of type email would refuse its local part).
    const newEditor = 'jörg-editor@exämple.de';
    const accountsStatus = async (key: string) => (await fetch(`${base}/accounts`, { headers: bearer(key) })).status;
    const nav = page.getByRole('navigation', { name: 'Main' });

    // Keys is an owner's and admin's page: no entry for the editor of Beta.
    await page.goto(`${base}/app/`);
    const switcher = page.getByLabel('Account', { exact: true });
    await switcher.selectOption(beta.accountId);
    await expect.poll(() => nav.getByRole('link', { name: 'Keys' }).count(), { timeout: 5_000 }).toBe(0);
    await switcher.selectOption(acct.accountId);
    await nav.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();

    // The key this dashboard is signed in with is marked; an owner may give any role.
    const own = page.locator('table.keys tbody tr', { hasText: 'this dashboard' });
    expect(await own.textContent()).toContain(`${acct.key.slice(0, 8)}…`);
    expect(await own.textContent()).toContain(ownerEmail);
    const role = page.getByLabel('Role', { exact: true });
    expect(await role.locator('option').allTextContents()).toEqual([
      'owner',
      'admin',
      'billing admin',
      'editor',
      'read only',
    ]);

    // The account's quotas of keys and members, as GET /account/usage has them.
    const usageText = () => page.getByTestId('key-usage').textContent();
    const usage = async () =>
      (
        await h.app.inject({
          method: 'GET',
          url: `/account/usage?accountId=${acct.accountId}`,
          headers: bearer(acct.key),
        })
      ).json().data as { liveKeys: { used: number; quota: number }; members: { used: number; quota: number } };
    const before = await usage();
    await expect
      .poll(usageText, { timeout: 5_000 })
      .toBe(
        `Live keys made for this account: ${before.liveKeys.used} of ${before.liveKeys.quota}. ` +
          `Members: ${before.members.used} of ${before.members.quota}.`,
      );

    // A new editor's key: shown once, and it works.
    await page.getByLabel('Member email').fill(newEditor);
    await role.selectOption('editor');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-api-key');
    const newKey = (await shown.textContent())!;
    expect(newKey).toMatch(/^cvk_[0-9A-Za-z]{32}$/);
    expect(await page.locator('.secret-once').textContent()).toContain('will not show it again');
    expect(await accountsStatus(newKey)).toBe(200);
    await shot('18-keys-new-key');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await shown.waitFor({ state: 'detached' });
    await expect.poll(() => page.evaluate('document.activeElement?.id'), { timeout: 5_000 }).toBe('new-key-email');
    expect(await page.content()).not.toContain(newKey);
    // One more live key, and one more member.
    await expect
      .poll(usageText, { timeout: 5_000 })
      .toContain(`${before.liveKeys.used + 1} of ${before.liveKeys.quota}. Members: ${before.members.used + 1} of`);

    // Another key for a member offers the member's own role, and names a change of it, whatever
    // the case and the form of the domain (Unicode or ASCII) typed.
    const typedAgain = 'JÖRG-EDITOR@XN--EXMPLE-CUA.DE';
    await page.getByLabel('Member email').fill(typedAgain);
    const memberRole = page.getByTestId('new-key-member-role');
    await expect
      .poll(() => memberRole.textContent(), { timeout: 5_000 })
      .toBe(`${typedAgain} is a member as editor; the key keeps that role.`);
    expect(await role.inputValue()).toBe('editor');
    await role.selectOption('read_only');
    await expect
      .poll(() => memberRole.textContent(), { timeout: 5_000 })
      .toBe(`${typedAgain} is a member as editor: this key makes them read only.`);
    await page.getByLabel('Member email').fill('');
    await memberRole.waitFor({ state: 'detached' });

    // Its row: a prefix, never the key. Revoke asks first; the key works until Confirm.
    const row = page.locator('table.keys tbody tr', { hasText: newEditor });
    expect(await row.locator('td[data-label="Role"]').textContent()).toBe('editor');
    await row.getByRole('button', { name: `Revoke key ${newKey.slice(0, 8)}… of ${newEditor}` }).click();
    await row.getByRole('button', { name: 'Confirm' }).waitFor();
    expect(await accountsStatus(newKey)).toBe(200);
    await shot('19-keys-revoke-confirm');
    // A usage reload that fails shows its error, not the figures from before the revoke.
    await page.route('**/account/usage?*', (r) =>
      r.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'injected' }),
      }),
    );
    await row.getByRole('button', { name: 'Confirm' }).click();
    await row.locator('.badge', { hasText: 'revoked' }).waitFor();
    expect(await accountsStatus(newKey)).toBe(401);
    await page.getByText("The account's usage could not be loaded").waitFor();
    expect(await page.getByTestId('key-usage').count()).toBe(0);
    await page.unroute('**/account/usage?*');
    consoleErrors.splice(0, consoleErrors.length, ...consoleErrors.filter((e) => !e.includes('503')));

    // Remove the member, after a Confirm: their rows leave the account's list.
    const member = page.locator('.members > li', { hasText: newEditor });
    await member.getByRole('button', { name: `Remove member ${newEditor}` }).click();
    await member.getByRole('button', { name: 'Confirm' }).click();
    await page.getByText(`Removed ${newEditor} from Acme; 0 keys revoked.`).waitFor();
    await expect.poll(() => row.count(), { timeout: 5_000 }).toBe(0);
    // The usage loads again once asked again, as it was before the new key.
    await expect
      .poll(usageText, { timeout: 5_000 })
      .toBe(
        `Live keys made for this account: ${before.liveKeys.used} of ${before.liveKeys.quota}. ` +
          `Members: ${before.members.used} of ${before.members.quota}.`,
      );
    const listed = (
      await h.app.inject({ method: 'GET', url: `/keys?accountId=${acct.accountId}`, headers: bearer(acct.key) })
    ).json().data as { email: string }[];
    expect(listed.map((k) => k.email)).not.toContain(newEditor);
    await shot('20-keys');
    expect(consoleErrors).toEqual([]);

    // A tab of its own for each refusal: Chromium logs a refused request as a console error,
    // and each tab must log that one and nothing else.
    const signedIn = async (key: string) => {
      const tab = await context.newPage();
      const errors: string[] = [];
      tab.on('console', (m) => m.type() === 'error' && errors.push(`${m.text()} ${m.location().url}`));
      tab.on('pageerror', (e) => errors.push(e.message));
      await tab.goto(`${base}/app/keys`);
      await tab.getByLabel('API key').fill(key);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
      return { tab, errors };
    };

    // The last owner stays: removing them shows the 409's message.
    const owner = await signedIn(acct.key);
    const self = owner.tab.locator('.members > li', { hasText: ownerEmail });
    await self.getByRole('button', { name: `Remove member ${ownerEmail}` }).click();
    expect(await self.locator('.confirm').textContent()).toContain('This is you.');
    await self.getByRole('button', { name: 'Confirm' }).click();
    await self.getByRole('alert').filter({ hasText: 'last owner' }).waitFor();
    await shot('21-keys-last-owner', owner.tab);
    expect(owner.errors).toEqual([expect.stringMatching(/status of 409[\s\S]*\/members\?/)]);
    await owner.tab.close();

    // An admin: no owner role to give, the owner's key out of reach; revoking the key it is
    // signed in with warns first, then signs out.
    const adminKey = await h.member(acct.accountId, 'admin', 'second-admin@example.com');
    const admin = await signedIn(adminKey);
    expect(await admin.tab.getByLabel('Role', { exact: true }).locator('option').allTextContents()).toEqual([
      'admin',
      'billing admin',
      'editor',
      'read only',
    ]);
    // The owner's key is out of reach: listed as outranking the admin, or not listed at all when
    // it also opens accounts the admin does not administer; never with a Revoke button.
    await admin.tab.locator('table.keys tbody tr', { hasText: 'this dashboard' }).waitFor();
    const ownerRows = admin.tab.locator('table.keys tbody tr', { hasText: ownerEmail });
    expect(await ownerRows.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    for (const row of await ownerRows.all()) expect(await row.textContent()).toContain('its member outranks you');
    const mine = admin.tab.locator('table.keys tbody tr', { hasText: 'this dashboard' });
    expect(await mine.textContent()).toContain(`${adminKey.slice(0, 8)}…`);
    await mine.getByRole('button', { name: /^Revoke key/ }).click();
    expect(await mine.locator('.confirm').textContent()).toContain('This is the key this dashboard is signed in with.');
    await shot('22-keys-revoke-own', admin.tab);
    await mine.getByRole('button', { name: 'Confirm' }).click();
    await admin.tab
      .getByText('You revoked the key this dashboard was signed in with. Sign in with another key.')
      .waitFor();
    await admin.tab.getByLabel('API key').waitFor();
    expect(await admin.tab.evaluate("sessionStorage.getItem('canvass.apiKey')")).toBeNull();
    expect(await accountsStatus(adminKey)).toBe(401);
    expect(admin.errors).toEqual([expect.stringMatching(/status of 401[\s\S]*\/accounts/)]);
    await admin.tab.close();

    // A key revoked elsewhere while a dashboard is open signs that dashboard out at its next call.
    const laterKey = await h.member(acct.accountId, 'admin', 'later-admin@example.com');
    const later = await signedIn(laterKey);
    // The page's own loads are answered before the key goes: one sent after would sign it out first.
    await later.tab.locator('table.keys tbody tr').first().waitFor();
    await later.tab.locator('.members > li').first().waitFor();
    const listedKeys = (
      await h.app.inject({ url: `/keys?accountId=${acct.accountId}&limit=100`, headers: bearer(acct.key) })
    ).json().data as { id: string; prefix: string }[];
    const laterId = listedKeys.find((k) => k.prefix === laterKey.slice(0, 8))!.id;
    const revoked = await h.app.inject({ method: 'DELETE', url: `/keys?keyId=${laterId}`, headers: bearer(acct.key) });
    expect(revoked.statusCode, revoked.body).toBe(200);
    await later.tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Polls' }).click();
    await later.tab.getByText('That API key is no longer accepted; sign in again.').waitFor();
    await later.tab.getByLabel('API key').waitFor();
    expect(await later.tab.evaluate("sessionStorage.getItem('canvass.apiKey')")).toBeNull();
    await later.tab.close();
  }, 60_000);

  it('works 375 px wide: no sideways scrolling, every control reachable', async () => {
    const phone = await context.newPage();
    const errors: string[] = [];
    phone.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    phone.on('pageerror', (e) => errors.push(e.message));
    await phone.setViewportSize({ width: 375, height: 812 });
    // Same context: the session key is per tab, so sign in again here.
    await signIn(phone);
    // Sideways scrolling (none expected); when there is some, what sticks out past the right edge.
    const overflow = () =>
      phone.evaluate<string[]>(`(() => {
        const w = document.documentElement.clientWidth;
        if (document.documentElement.scrollWidth <= w) return [];
        return [...document.querySelectorAll('body *')]
          .filter((e) => e.getBoundingClientRect().right > w + 0.5)
          .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' +' + Math.round(e.getBoundingClientRect().right - w) + 'px')
          .slice(0, 10);
      })()`);
    expect(await overflow()).toEqual([]);
    await shot('08-mobile-polls', phone);
    await phone.getByRole('link', { name: 'Checkout survey' }).click();
    await phone.getByRole('link', { name: 'Deliveries' }).click();
    await phone.locator('table.deliveries tbody tr').first().waitFor();
    await phone
      .locator('table.deliveries tbody tr')
      .first()
      .getByRole('button', { name: /^View delivery/ })
      .click();
    await phone.getByRole('list', { name: 'Attempts' }).waitFor();
    expect(await overflow()).toEqual([]);
    await shot('09-mobile-deliveries', phone);
    await phone.getByRole('link', { name: 'Webhooks' }).click();
    await phone.getByRole('heading', { name: 'Add a webhook' }).waitFor();
    expect(await overflow()).toEqual([]);
    await shot('10-mobile-webhooks', phone);

    // A reload keeps the app's address (index.html for /app/*) and the session. Keyboard: the
    // first Tab reaches the skip link, which moves focus to the page.
    await phone.reload();
    await phone.getByRole('heading', { name: 'Add a webhook' }).waitFor();
    await phone.keyboard.press('Tab');
    expect(await phone.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await phone.keyboard.press('Enter');
    expect(await phone.evaluate('document.activeElement.id')).toBe('main');

    // Deleting the failing webhook (after a confirmation) cancels nothing: its delivery is final.
    phone.once('dialog', (d) => void d.accept());
    await phone.getByRole('button', { name: `Delete webhook ${receiver.url('/gone')}` }).click();
    await phone.getByText(`Deleted the webhook to ${receiver.url('/gone')}; 0 pending deliveries cancelled.`).waitFor();
    // The list reloads after the message shows: wait for it rather than race it.
    await expect.poll(() => phone.locator('.webhooks > li').count(), { timeout: 5_000 }).toBe(1);

    // The webhook's edit and recover forms, and a confirmation step, fit the width too.
    await phone.getByRole('button', { name: /^Edit webhook/ }).click();
    await phone.getByRole('button', { name: /^Recover failed deliveries/ }).click();
    await phone.getByRole('button', { name: /^Send a test event/ }).click();
    await phone.getByRole('button', { name: 'Confirm' }).waitFor();
    expect(await overflow()).toEqual([]);
    await shot('16-mobile-webhook-controls', phone);
    await phone.getByRole('button', { name: 'Cancel' }).first().click();

    // The account's delivery log, a delivery open.
    await phone.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Delivery log' }).click();
    await phone
      .locator('table.deliveries tbody tr')
      .first()
      .getByRole('button', { name: /^View delivery/ })
      .click();
    await phone.getByRole('list', { name: 'Attempts' }).waitFor();
    expect(await overflow()).toEqual([]);
    await shot('17-mobile-account-deliveries', phone);

    // Keys: the rows as cards, the New key form, and a Revoke's warning step.
    await phone.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' }).click();
    const own = phone.locator('table.keys tbody tr', { hasText: 'this dashboard' });
    await own.getByRole('button', { name: /^Revoke key/ }).click();
    await own.getByRole('button', { name: 'Confirm' }).waitFor();
    expect(await overflow()).toEqual([]);
    await shot('23-mobile-keys', phone);
    await own.getByRole('button', { name: 'Cancel' }).click();
    await phone.close();
    expect(errors).toEqual([]);
  }, 60_000);

  it('a request that hangs, or an export that stops arriving, ends in an error after 30 s, saying whether a change may have been made', async () => {
    // A context of its own, whose clock the test holds still and moves on by hand.
    const slow = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await slow.clock.install();
    const tab = await slow.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    await signIn(tab);
    await slow.clock.pauseAt(Date.now() + 1_000);

    // A CSV export whose body stops arriving: the deadline starts again with each part that
    // arrives (the button counts them), and ends the export 30 s after the last.
    await tab.getByRole('link', { name: 'Checkout survey' }).click();
    await tab.getByRole('link', { name: 'Responses' }).click();
    await tab.locator('table tbody tr', { hasText: 'Great' }).waitFor();
    const stalled = await stallingServer();
    await tab.route(
      (url) => url.pathname === '/responses/export',
      (route) => route.continue({ url: `${stalled.base}/responses/export` }),
    );
    const exportButton = tab.locator('button', { hasText: /^Export/ });
    await exportButton.click();
    await tab.getByRole('button', { name: 'Exporting… 3 KB' }).waitFor();
    const noNewAlertAfter = async (ms: number) => {
      const shown = await tab.getByRole('alert').count();
      await slow.clock.fastForward(ms);
      await taskTurns(tab);
      expect(await tab.getByRole('alert').count()).toBe(shown);
    };
    await noNewAlertAfter(25_000);
    stalled.send(3_000);
    await tab.getByRole('button', { name: 'Exporting… 6 KB' }).waitFor();
    await noNewAlertAfter(29_000);
    await slow.clock.fastForward(1_500);
    await tab.getByRole('alert').filter({ hasText: 'Canvass stopped answering for 30 s; try again.' }).waitFor();
    await tab.getByRole('button', { name: 'Export CSV' }).waitFor();
    expect(stalled.requests).toBe(1);
    await stalled.close();

    // An error whose problem document stops arriving: the same deadline, not the bare status.
    const failing = await stallingServer(502);
    await tab.route(
      (url) => url.pathname === '/responses',
      (route) => route.continue({ url: `${failing.base}/responses` }),
    );
    const headed = tab.waitForResponse((r) => new URL(r.url()).pathname === '/responses');
    await tab.getByLabel('Per page').selectOption('50');
    await tab.getByRole('button', { name: 'Apply filters' }).click();
    expect((await headed).status()).toBe(502);
    await taskTurns(tab);
    await noNewAlertAfter(29_000);
    await slow.clock.fastForward(1_500);
    // The export's message above, this one below the filters.
    await tab.getByRole('alert').filter({ hasText: 'Canvass stopped answering for 30 s; try again.' }).nth(1).waitFor();
    await failing.close();

    // The poll titles the account's log names its rows with never answer: after 30 s the rows
    // show, with poll ids, and the error.
    const hung = new Map<string, { abort(): Promise<void> }[]>();
    const held = (pathname: string) => hung.get(pathname)?.length ?? 0;
    const hang = (pathname: string) =>
      tab.route(
        (url) => url.pathname === pathname,
        (route) => void hung.set(pathname, [...(hung.get(pathname) ?? []), route]),
      );
    await hang('/polls');
    const logAnswered = tab.waitForResponse((r) => new URL(r.url()).pathname === DELIVERY_LOG.rowsPath);
    await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Delivery log' }).click();
    await (await logAnswered).finished();
    const rows = tab.locator(DELIVERY_LOG.rows);
    await tab.getByText(DELIVERY_LOG.loading).waitFor();
    expect(await rows.count()).toBe(0);
    expect(held('/polls')).toBeGreaterThan(0);
    await noNewAlertAfter(29_000);
    await slow.clock.fastForward(1_500);
    await tab.getByRole('alert').filter({ hasText: 'Canvass did not answer within 30 s; try again.' }).waitFor();
    await rows.first().waitFor();
    for (const text of await rows.allTextContents()) expect(text).toMatch(/poll_\w+/);
    await shot('24-names-timed-out', tab);

    // A resend that never answers: the message says the change may have been made.
    await hang('/webhooks/delivery/resend');
    await rows
      .filter({ hasText: 'delivered' })
      .first()
      .getByRole('button', { name: /^View delivery/ })
      .click();
    const detail = tab.locator('.delivery-detail');
    await detail.getByRole('button', { name: 'Resend' }).click();
    await detail.getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(() => held('/webhooks/delivery/resend')).toBe(1);
    // The log's refresh that this move of the clock starts, awaited below.
    const refreshed = tab.waitForResponse((r) => new URL(r.url()).pathname === DELIVERY_LOG.rowsPath);
    await slow.clock.fastForward(30_500);
    await detail
      .getByRole('alert')
      .filter({
        hasText:
          'Canvass did not answer within 30 s; the change may still have been made, so reload before trying again.',
      })
      .waitFor();

    // A log whose load hangs is not asked again at each 5 s refresh meanwhile: the loads would
    // pile up on the browser's connections, and the one left running never show its error.
    // The last refresh answered first, so that no load is on its way when the log hangs (the
    // clock stands still between the test's moves, so no refresh starts another meanwhile).
    await (await refreshed).finished();
    await taskTurns(tab);
    await hang(DELIVERY_LOG.rowsPath);
    await tab.getByRole('button', { name: 'Refresh', exact: true }).click();
    await expect.poll(() => held(DELIVERY_LOG.rowsPath)).toBe(1);
    for (let i = 0; i < 5; i++) {
      await slow.clock.fastForward(5_500);
      await taskTurns(tab);
    }
    expect(held(DELIVERY_LOG.rowsPath)).toBe(1);

    for (const route of [...hung.values()].flat()) await route.abort().catch(() => undefined);
    await slow.close();
    expect(errors).toEqual([]);
  }, 60_000);

  it('offers an editor no Trigger webhook action, nor the deletion of a slide or poll that holds one', async () => {
    // Beta's owner makes a poll whose survey logic and one slide's logic trigger webhooks.
    const asOwner = async (url: string, payload: object) => {
      const res = await h.app.inject({ method: 'POST', url, headers: bearer(beta.key), payload });
      expect(res.statusCode, res.body).toBeLessThan(300);
      return res.json().data as { id: string };
    };
    const trigger = (path: string) => ({ type: 'trigger-webhook', url: `https://hooks.example.com/${path}` });
    const poll = await asOwner('/poll', {
      accountId: beta.accountId,
      title: 'Guarded survey',
      actionLogic: [{ on: 'complete', action: trigger('survey') }],
    });
    await asOwner('/slide', {
      pollId: poll.id,
      type: 'short-answer',
      title: 'Guarded slide',
      logic: [{ match: 'all', conditions: [{ op: 'answered' }], action: trigger('question') }],
    });
    await asOwner('/slide', { pollId: poll.id, type: 'short-answer', title: 'Plain slide' });

    // The owner of Acme is Beta's editor.
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      await signIn(tab);
      await tab.getByLabel('Account', { exact: true }).selectOption(beta.accountId);
      await tab.getByRole('link', { name: 'Guarded survey' }).click();
      const del = tab.getByRole('button', { name: 'Delete this poll' });
      await del.waitFor();
      expect(await del.isDisabled()).toBe(true);
      await tab.getByText('Its logic triggers webhooks: owners, admins and billing admins delete it.').waitFor();

      await tab.getByRole('link', { name: 'Slides' }).click();
      const guarded = tab.getByRole('button', { name: 'Delete slide Guarded slide' });
      await guarded.waitFor();
      expect(await guarded.isDisabled()).toBe(true);
      expect(await tab.getByRole('button', { name: 'Delete slide Plain slide' }).isDisabled()).toBe(false);
      await tab.getByText('Its logic triggers a webhook: owners, admins and billing admins delete it.').waitFor();

      await tab.getByRole('button', { name: 'Add a logic rule' }).click();
      const actions = await tab.getByLabel('Then', { exact: true }).locator('option').allTextContents();
      expect(actions).toEqual(['Continue', 'Skip to a slide', 'End the survey']);
      await tab.getByText('A rule that triggers a webhook is added by owners, admins and billing admins.').waitFor();
      await shot('25-editor-guarded', tab);

      // The owner, in Acme, is offered all of them.
      await tab.getByLabel('Account', { exact: true }).selectOption(acct.accountId);
      await tab.getByRole('link', { name: 'Checkout survey' }).first().click();
      await tab.getByRole('link', { name: 'Slides' }).click();
      await tab.getByRole('button', { name: 'Add a logic rule' }).click();
      expect(await tab.getByLabel('Then', { exact: true }).locator('option').allTextContents()).toContain(
        'Trigger a webhook',
      );
    } finally {
      await tab.close();
    }
    expect(errors).toEqual([]);
  });

  it("opens a poll of another of the user's accounts only under that account, and shows a signing secret to no one after a sign-out", async () => {
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      // Beta's poll, opened by its link while Acme is chosen: a notice, none of its controls.
      const betaMade = await h.app.inject({
        method: 'POST',
        url: '/poll',
        headers: bearer(beta.key),
        payload: { accountId: beta.accountId, title: 'Beta survey' },
      });
      expect(betaMade.statusCode, betaMade.body).toBe(201);
      const betaPoll = betaMade.json().data as { id: string };

      await signIn(tab);
      await tab.goto(`${base}/app/polls/${betaPoll.id}/webhooks`);
      await tab.getByText(`belongs to another of your accounts (${beta.accountId})`).waitFor();
      expect(await tab.getByRole('button', { name: 'Create webhook' }).count()).toBe(0);

      // An account's first webhook answers its signing secret; the answer lands after a sign-out.
      const delta = await h.account({ name: 'Delta' });
      const made = await h.app.inject({
        method: 'POST',
        url: '/poll',
        headers: bearer(delta.key),
        payload: { accountId: delta.accountId, title: 'Delta survey' },
      });
      expect(made.statusCode, made.body).toBe(201);
      await tab.goto(`${base}/app/`);
      await tab.getByRole('button', { name: 'Sign out' }).click();
      await tab.getByLabel('API key').fill(delta.key);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('heading', { name: 'Polls', level: 1 }).waitFor();
      await tab.goto(`${base}/app/polls/${made.json().data.id}/webhooks`);
      let answer!: () => void;
      const held = new Promise<void>((r) => (answer = r));
      const isCreate = (u: URL) => u.pathname === '/webhooks';
      await tab.route(isCreate, async (r) =>
        r.request().method() === 'POST' ? (await held, await r.continue()) : r.continue(),
      );
      await tab.getByLabel('Endpoint URL (public https)').fill(receiver.url('/delta'));
      const created = tab.waitForResponse((r) => isCreate(new URL(r.url())) && r.request().method() === 'POST');
      await tab.getByRole('button', { name: 'Create webhook' }).click();
      await tab.getByRole('button', { name: 'Sign out' }).click();
      await tab.getByLabel('API key').fill(acct.key);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      // Signed in again, on the same page (a reload would drop the answer still on its way).
      await tab.getByRole('navigation', { name: 'Main' }).waitFor();
      answer();
      expect(await (await created).json()).toMatchObject({ signingSecret: expect.stringMatching(/^whsec_/) });
      await taskTurns(tab);
      expect(await tab.getByTestId('signing-secret').count()).toBe(0);
      await tab.unroute(isCreate);
    } finally {
      await tab.close();
    }
    expect(errors).toEqual([]);
  });

  it('forgets a key the page opens on after 30 minutes without use; a late 401 of a key signed out signs out no one', async () => {
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      await signIn(tab);
      const usedAgo = (minutes: number) =>
        tab.evaluate(`sessionStorage.setItem('canvass.usedAt', String(Date.now() - ${minutes * 60_000}))`);
      // Used a minute ago: the page opened again keeps it.
      await usedAgo(1);
      await tab.reload();
      await tab.getByRole('heading', { name: 'Polls', level: 1 }).waitFor();
      // Unused for 31 minutes (as in a closed tab reopened, or a session restored): forgotten.
      await usedAgo(31);
      await tab.reload();
      await tab.getByText('Signed out: the key went unused for 30 minutes in this tab.').waitFor();
      expect(await tab.evaluate("sessionStorage.getItem('canvass.apiKey')")).toBeNull();

      // Another key's call, answered 401 after it signed out and this key signed in.
      const other = await h.account({ name: 'Theta' });
      const late: { fulfill(o: object): Promise<void> }[] = [];
      const isPolls = (u: URL) => u.pathname === '/polls';
      await tab.route(isPolls, (r) =>
        r.request().headers()['authorization'] === `Bearer ${other.key}` ? void late.push(r) : r.continue(),
      );
      await tab.getByLabel('API key').fill(other.key);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => late.length).toBeGreaterThan(0);
      await tab.getByRole('button', { name: 'Sign out' }).click();
      await tab.getByLabel('API key').fill(acct.key);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('link', { name: 'Checkout survey' }).waitFor();
      for (const r of late)
        await r.fulfill({
          status: 401,
          contentType: 'application/problem+json',
          body: JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status: 401, code: 'unauthenticated' }),
        });
      await taskTurns(tab);
      expect(await tab.evaluate("sessionStorage.getItem('canvass.apiKey')")).toBe(acct.key);
      expect(await tab.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
      await tab.unroute(isPolls);
    } finally {
      await tab.close();
    }
    expect(errors).toEqual([]);
  });

  it('leaves an account the key no longer opens, with a notice, at its next "not found"', async () => {
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      await signIn(tab);
      // A key made for oneself is shown until stored, though it sets one's own role.
      await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' }).click();
      await tab.getByLabel('Member email').fill(ownerEmail);
      await tab.getByTestId('new-key-member-role').waitFor();
      expect(await tab.getByLabel('Role', { exact: true }).inputValue()).toBe('owner');
      await tab.getByRole('button', { name: 'Create key' }).click();
      expect(await tab.getByTestId('new-api-key').textContent()).toMatch(/^cvk_/);
      await tab.getByRole('button', { name: 'I have stored it' }).click();
      await tab.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
      // One left on screen when the user moves on: the accounts are listed again all the same.
      const listed = { n: 0 };
      const countAccounts = (r: { url(): string }) => void (new URL(r.url()).pathname === '/accounts' && listed.n++);
      await tab.getByLabel('Member email').fill(ownerEmail);
      await tab.getByTestId('new-key-member-role').waitFor();
      await tab.getByRole('button', { name: 'Create key' }).click();
      await tab.getByTestId('new-api-key').waitFor();
      tab.on('request', countAccounts);
      await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Polls' }).click();
      await expect.poll(() => listed.n, { timeout: 5_000 }).toBeGreaterThan(0);
      tab.off('request', countAccounts);
      const switcher = tab.getByLabel('Account', { exact: true });
      await switcher.selectOption(beta.accountId);
      await tab.getByRole('heading', { name: 'Polls', level: 1 }).waitFor();
      // The page has loaded what it asks for (a 404 of its own loads would start the check).
      await tab.getByRole('link', { name: 'Guarded survey' }).waitFor();
      await tab.getByTestId('poll-usage').waitFor();
      // Beta's owner removes Acme's owner from Beta: the key no longer opens it.
      const removed = await h.app.inject({
        method: 'DELETE',
        url: `/members?accountId=${beta.accountId}&email=${encodeURIComponent(ownerEmail)}`,
        headers: bearer(beta.key),
      });
      expect(removed.statusCode, removed.body).toBe(200);
      // Beta's poll (the test before made it), opened from the list shown before the removal.
      await tab.getByRole('link', { name: 'Guarded survey' }).click();
      await tab.getByText('You are no longer a member of Beta.').waitFor();
      expect(await switcher.locator('option').allTextContents()).not.toContain('Beta — editor, premium');
      expect(await switcher.inputValue()).not.toBe(beta.accountId);
    } finally {
      await tab.close();
    }
    expect(errors).toEqual([]);
  });
  it('makes no key while the members are unread, nor for a member above the caller; says so when a new key cannot be copied; a held Enter confirms nothing', async () => {
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      await signIn(tab);
      // The members (every key, read 100 a page) held: an existing member's role is not known yet,
      // and a key made now would set it unseen.
      const everyKey = (u: URL) => u.pathname === '/keys' && u.searchParams.get('limit') === '100';
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      await tab.route(everyKey, async (r) => {
        await held;
        await r.continue();
      });
      await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' }).click();
      await tab.getByLabel('Member email').fill(ownerEmail);
      const create = tab.getByRole('button', { name: 'Create key' });
      const unknown = tab.getByTestId('new-key-members-unknown');
      expect(await unknown.textContent()).toContain('Reading the members');
      expect(await create.isDisabled()).toBe(true);
      expect(await tab.getByTestId('new-key-member-role').count()).toBe(0);
      release();
      await tab.getByTestId('new-key-member-role').waitFor();
      expect(await unknown.count()).toBe(0);
      expect(await create.isDisabled()).toBe(false);
      await tab.unroute(everyKey);

      // Members that could not be read: still no key, and the form says why.
      await tab.route(everyKey, (r) =>
        r.fulfill({
          status: 500,
          contentType: 'application/problem+json',
          body: JSON.stringify({
            type: 'about:blank',
            title: 'Internal Server Error',
            status: 500,
            detail: 'injected',
          }),
        }),
      );
      await tab.reload();
      await tab.getByLabel('Member email').fill(ownerEmail);
      await expect.poll(() => unknown.textContent(), { timeout: 10_000 }).toContain('could not be read');
      expect(await create.isDisabled()).toBe(true);
      await tab.unroute(everyKey);
      await tab.reload();

      // A new key the browser will not copy: the panel says so, since it is shown only this once.
      await tab.getByLabel('Member email').fill('copy-refused@example.com');
      await unknown.waitFor({ state: 'detached' });
      await tab.evaluate('navigator.clipboard.writeText = () => Promise.reject(new Error("refused"))');
      // The members read again after the key fails: the list read before misses the new member.
      await tab.route(everyKey, (r) => r.fulfill({ status: 500, body: 'injected' }));
      await create.click();
      await tab.getByTestId('new-api-key').waitFor();
      await tab.getByRole('button', { name: 'Copy', exact: true }).click();
      await tab.getByText('The browser would not copy it: select the key above and copy it by hand.').waitFor();
      await tab.getByRole('button', { name: 'I have stored it' }).click();
      await tab.getByLabel('Member email').fill('copy-refused@example.com');
      await expect.poll(() => unknown.textContent(), { timeout: 10_000 }).toContain('could not be read');
      expect(await create.isDisabled()).toBe(true);
      await tab.unroute(everyKey);
      await tab.reload();

      // Enter held on Revoke opens the confirmation; its repeats do not confirm it.
      const refused = tab.locator('table.keys tbody tr', { hasText: 'copy-refused@example.com' });
      await refused.getByRole('button', { name: /^Revoke key/ }).focus();
      await tab.keyboard.down('Enter');
      const confirm = refused.getByRole('button', { name: 'Confirm' });
      await confirm.waitFor();
      await expect.poll(() => tab.evaluate('document.activeElement?.textContent'), { timeout: 5_000 }).toBe('Confirm');
      await tab.keyboard.down('Enter'); // a repeat: the key is still down
      await tab.keyboard.down('Enter');
      await tab.keyboard.up('Enter');
      await taskTurns(tab);
      expect(await confirm.isVisible()).toBe(true);
      expect(await refused.locator('.badge', { hasText: 'revoked' }).count()).toBe(0);
      // A fresh press confirms.
      await tab.keyboard.press('Enter');
      await refused.locator('.badge', { hasText: 'revoked' }).waitFor();

      // An admin may make no key for the owner: the form names the owner's role and makes none.
      const adminKey = await h.member(acct.accountId, 'admin', 'keys-form-admin@example.com');
      await tab.evaluate('sessionStorage.clear()');
      await tab.goto(`${base}/app/`);
      await tab.getByLabel('API key').fill(adminKey);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Keys' }).click();
      await tab.getByLabel('Member email').fill(ownerEmail);
      await expect
        .poll(() => tab.getByTestId('new-key-member-role').textContent(), { timeout: 10_000 })
        .toBe(
          `${ownerEmail} is a member as owner, above your role: only a member of that role or higher can make them a key.`,
        );
      expect(await create.isDisabled()).toBe(true);
    } finally {
      await tab.close();
    }
    expect(errors).toEqual([]);
  }, 60_000);
  it('says when a poll could not be read again after a change, rather than showing it as read before', async () => {
    const made = await h.app.inject({
      method: 'POST',
      url: '/poll',
      headers: bearer(acct.key),
      payload: { accountId: acct.accountId, title: 'Read again' },
    });
    expect(made.statusCode, made.body).toBe(201);
    const pollId = made.json().data.id as string;
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      await signIn(tab);
      await tab.goto(`${base}/app/polls/${pollId}`);
      await tab.getByRole('heading', { name: 'Read again', level: 1 }).waitFor();
      // The update goes through; the poll's reload after it fails.
      const isPoll = (u: URL) => u.pathname === '/poll';
      await tab.route(isPoll, (r) => r.fulfill({ status: 500, body: 'injected' }));
      await tab.getByRole('switch', { name: 'Visible to respondents' }).check();
      await tab.getByText('The poll could not be read again, and may show what it was').waitFor();
      expect(await tab.getByRole('heading', { name: 'Read again', level: 1 }).count()).toBe(1);
      await tab.unroute(isPoll);
    } finally {
      await tab.close();
    }
    expect(errors).toEqual([]);
  });
});
