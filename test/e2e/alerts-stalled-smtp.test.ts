import net from 'node:net';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/e2e.js';
import { seededDataDir } from '../support/pglite-template.js';
import { apiClient, freePort, spawnCanvass, waitForHttp, type CanvassProcess } from '../support/processes.js';
import { startReceiver } from '../support/receiver.js';

/**
 * A mail server that takes the connection and never answers (README, Guarantees): alert
 * emails wait on it (up to nodemailer's 10 s greeting timeout), but on a loop of their own, so a
 * recover goes on meanwhile, and SIGTERM does not wait for the email to be given up on.
 */

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let dataDir: string;
let serve: CanvassProcess | undefined;
const stalled: { server: net.Server; open: Set<net.Socket>; opened: number } = {
  server: net.createServer((socket) => {
    stalled.opened++;
    stalled.open.add(socket);
    socket.on('close', () => stalled.open.delete(socket));
    socket.on('error', () => {});
  }),
  open: new Set(),
  opened: 0,
};

beforeAll(async () => {
  receiver = await startReceiver();
  dataDir = await seededDataDir('stalled-smtp');
  await new Promise<void>((r) => stalled.server.listen(0, '127.0.0.1', () => r()));
});
afterAll(async () => {
  await serve?.stop(5_000);
  for (const s of stalled.open) s.destroy();
  await new Promise((r) => stalled.server.close(r));
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('alert emails to a mail server that never answers', () => {
  it('hold up no recover, and SIGTERM exits without waiting for them', async () => {
    const port = await freePort();
    const smtpPort = (stalled.server.address() as net.AddressInfo).port;
    serve = spawnCanvass('canvass serve', ['serve'], {
      PORT: String(port),
      HOST: '127.0.0.1',
      CANVASS_DATA_DIR: dataDir,
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      CANVASS_ALERT_QUIET_MS: '1000',
      CANVASS_BATCH_WINDOW_MS: '0',
      CANVASS_SCHEDULER_TICK_MS: '50',
      CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
      LOG_LEVEL: 'warn',
    });
    const base = `http://127.0.0.1:${port}`;
    await waitForHttp(`${base}/healthz`, 60_000, serve);
    const m = await serve.waitForOutput(/(acc_[A-Za-z0-9]+)[^\n]*\n[^\n]*shown only this once: (cvk_[A-Za-z0-9]+)/);
    const [accountId, key] = [m[1]!, m[2]!];
    const api = apiClient(base, key);
    const ok = async (method: string, url: string, body?: object) => {
      const res = await api(method, url, body);
      expect(res.status, JSON.stringify(res.json)).toBeLessThan(300);
      return res.json.data as Record<string, unknown>;
    };

    const poll = await ok('POST', '/poll', { accountId, title: 'Stalled mail' });
    const slide = await ok('POST', '/slide', { pollId: poll.id, type: 'short-answer', title: 'Anything?' });
    await ok('POST', '/poll/update', { pollId: poll.id, isVisible: true });
    receiver.script('/stalled-gone', [{ status: 410 }, { status: 200 }]);
    const hook = await ok('POST', '/webhooks', {
      pollId: poll.id,
      url: receiver.url('/stalled-gone'),
      deliveryRule: 'partial',
    });
    const since = new Date(Date.now() - 1000).toISOString();
    const answered = await fetch(`${base}/participant/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pollId: poll.id, answers: [{ slideId: slide.id, value: 'x' }] }),
    });
    expect(answered.status).toBe(201);
    await receiver.waitFor((r) => r.some((x) => x.path === '/stalled-gone'));

    // The alert check is now stuck on the mail server...
    await until('the alert email under way', async () => stalled.open.size > 0, 15_000, 20);
    // ...and a recover still resends the rejected delivery while it waits.
    await ok('POST', '/webhooks/recover', { webhookId: hook.id, since });
    await receiver.waitFor((r) => r.filter((x) => x.path === '/stalled-gone').length >= 2, 15_000);
    expect(stalled.open.size, 'the email was given up on before the recover went on').toBe(1);

    // A stop leaves the email as it is (unrecorded, it would be sent again later): the process
    // exits without waiting for the mail server's greeting to time out.
    const exited = new Promise<number | null>((r) => serve!.child.once('exit', (code) => r(code)));
    serve.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(serve.output()).not.toMatch(/alert email\(s\) not sent/);
    serve = undefined;
  }, 90_000);
});
