import { existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/db.js';
import { seededDataDir } from '../support/pglite-template.js';
import {
  apiClient,
  freePort,
  runCanvass,
  runCanvassJson,
  spawnCanvass,
  waitForHttp,
  type CanvassProcess,
  type Env,
} from '../support/processes.js';

/**
 * With embedded storage the running server holds the data directory; operator commands run
 * by `canvass` meanwhile go to that server through its admin socket and take effect at once.
 */

let dataDir: string;
let env: Env;
let serve: CanvassProcess | undefined;

beforeAll(async () => {
  dataDir = await seededDataDir('cli-serving');
  env = { CANVASS_DATA_DIR: dataDir, CANVASS_RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn' };
});
afterAll(async () => {
  await serve?.stop(5_000);
  rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(onPostgres)('admin commands while the embedded server runs', () => {
  it('create, list and revoke keys, remove a member and rotate the secret through the server', async () => {
    const port = await freePort();
    serve = spawnCanvass('canvass serve', ['serve', '--no-worker'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`, 60_000, serve);
    const m = await serve.waitForOutput(
      /(acc_[A-Za-z0-9]+)[^\n]*\n[^\n]*Owner API key, shown only this once: (cvk_[A-Za-z0-9]+)/,
    );
    const accountId = m[1]!;
    // The socket opens just after the key is printed. Only the directory's owner may open it.
    const socket = path.join(dataDir, 'canvass.sock');
    await expect.poll(() => existsSync(socket), { timeout: 15_000 }).toBe(true);
    expect(statSync(socket).mode & 0o777).toBe(0o600);

    const made = await runCanvassJson<{ apiKey: string; role: string }>(
      ['keys', 'create', '--account', accountId, '--email', 'helper@example.com', '--role', 'editor', '--json'],
      env,
    );
    expect(made.role).toBe('editor');
    const api = apiClient(base, made.apiKey);
    expect((await api('GET', `/polls?accountId=${accountId}`)).status).toBe(200);

    const listed = await runCanvassJson<{ data: { id: string; prefix: string; email: string }[] }>(
      ['keys', 'list', '--account', accountId, '--json'],
      env,
    );
    const id = listed.data.find((k) => k.email === 'helper@example.com')!.id;
    expect(JSON.stringify(listed)).not.toContain(made.apiKey);
    // Paged: the owner's and the helper's keys, one a page.
    type Page = { data: { id: string }[]; hasNextPage: boolean; endCursor: string | null };
    const first = await runCanvassJson<Page>(['keys', 'list', '--account', accountId, '--limit', '1', '--json'], env);
    expect(first).toMatchObject({ hasNextPage: true, endCursor: first.data[0]!.id });
    const second = await runCanvassJson<Page>(
      ['keys', 'list', '--account', accountId, '--limit', '1', '--start-cursor', first.endCursor!, '--json'],
      env,
    );
    expect(second.hasNextPage).toBe(false);
    expect([...first.data, ...second.data].map((k) => k.id).sort()).toEqual(listed.data.map((k) => k.id).sort());
    await runCanvassJson(['keys', 'revoke', '--key', id, '--json'], env);
    expect((await api('GET', `/polls?accountId=${accountId}`)).status).toBe(401);
    // Times read through the server print as they do read from storage: ISO 8601.
    const human = await runCanvass(['keys', 'list', '--account', accountId], env);
    expect(human.split('\n').find((l) => l.startsWith(id))).toMatch(
      / revoked \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/,
    );

    const again = await runCanvassJson<{ apiKey: string }>(
      ['keys', 'create', '--account', accountId, '--email', 'leaver@example.com', '--role', 'read_only', '--json'],
      env,
    );
    const removed = await runCanvassJson<{ removed: boolean; revokedKeys: number }>(
      ['members', 'remove', '--account', accountId, '--email', 'leaver@example.com', '--json'],
      env,
    );
    expect(removed).toMatchObject({ removed: true, revokedKeys: 1 });
    expect((await apiClient(base, again.apiKey)('GET', `/polls?accountId=${accountId}`)).status).toBe(401);

    const rotated = await runCanvassJson<{ signingSecret: string }>(
      ['support', 'rotate-secret', '--account', accountId, '--json'],
      env,
    );
    expect(rotated.signingSecret).toMatch(/^whsec_/);
  }, 120_000);
});
