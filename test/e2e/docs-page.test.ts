import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../support/app.js';

/**
 * GET /docs (Swagger UI) in real Chromium: it shares the dashboard's origin, and with it the tab
 * that keeps the dashboard's key, so it runs under a Content-Security-Policy of its own scripts
 * (README, "API overview"). The page still renders the API's operations, with no violation.
 */
const CHROMIUM = '/usr/bin/chromium';

let h: Harness;
let browser: Browser;
let base: string;
beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`This test drives Debian's chromium at ${CHROMIUM}: apt-get install -y chromium`);
  h = await harness();
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
