import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness, type TestAccount } from '../support/app.js';

/**
 * Pages of the server's origin in real Chromium, served by the real app: `/docs` (Swagger UI)
 * under a Content-Security-Policy of its own scripts, as it shares the tab that keeps the
 * dashboard's key (README, "API overview"); and the dashboard when a page fails while it draws.
 */
const CHROMIUM = '/usr/bin/chromium';

let h: Harness;
let acct: TestAccount;
let browser: Browser;
let base: string;
beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`This test drives Debian's chromium at ${CHROMIUM}: apt-get install -y chromium`);
  h = await harness();
  acct = await h.account();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('GET /docs in a browser', () => {
  it('renders the operations under its policy, which allows only its own scripts and no framing', async () => {
    const res = await fetch(`${base}/docs/`);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).not.toMatch(/upgrade-insecure-requests/);
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && problems.push(m.text())));
    page.on('pageerror', (e) => problems.push(e.message));
    try {
      await page.goto(`${base}/docs/`);
      await page
        .locator('.opblock-summary-path', { hasText: '/participant/responses' })
        .first()
        .waitFor({ timeout: 15_000 });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

// An answer of a shape the dashboard does not expect: a proxy's `{}` for the polls list, the one
// answer the browser is given in place of the server's.
describe('the dashboard when a page fails to draw', () => {
  it('says what failed and offers Reload and Sign out, which forgets the key', async () => {
    const page = await browser.newPage();
    try {
      await page.route(
        (url) => url.pathname === '/polls',
        (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '{}' }),
      );
      await page.goto(`${base}/app/`);
      await page.getByLabel('API key').fill(acct.key);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'This page could not be shown' }).waitFor({ timeout: 15_000 });
      expect(await page.getByRole('alert').textContent()).not.toBe('');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Canvass dashboard' }).waitFor({ timeout: 15_000 });
      expect(await page.evaluate("sessionStorage.getItem('canvass.apiKey')")).toBeNull();
    } finally {
      await page.close();
    }
  });
});
