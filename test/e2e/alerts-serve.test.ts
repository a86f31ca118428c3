import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededDataDir } from '../support/pglite-template.js';
import { CLI } from '../support/processes.js';
import { startReceiver } from '../support/receiver.js';
import { mailBody, mailHeaders, startSmtpSink } from '../support/smtp-sink.js';

/**
 * The environment wiring of failure alerts (README, Configuration): a real
 * `canvass serve` process on a fresh embedded database, told only through its environment to
 * mail through an SMTP server (a real one on loopback), to use short alert windows and a short
 * retry ladder, and to allow a loopback HTTPS receiver (trusted through NODE_EXTRA_CA_CERTS,
 * which the test setup exports).
 */

type Json = Record<string, unknown>;
type AlertView = { kind: string; sequence: number; recipients: string[]; sentAt: string };
type Health = { state: string; alertEmailsSent: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let sink: Awaited<ReturnType<typeof startSmtpSink>>;

beforeAll(async () => {
  receiver = await startReceiver();
  sink = await startSmtpSink();
  spawned = spawnServe(await seededDataDir('serve'));
  server = await spawned.ready();
});
afterAll(async () => {
  await spawned?.stop();
  await receiver?.close();
  await sink?.close();
});

const mailsTo = (addr: string) => sink.messages.filter((m) => m.to.includes(addr));
const waitMails = (addr: string, n: number, timeoutMs = 10_000) =>
  sink.waitFor((all) => all.filter((m) => m.to.includes(addr)).length >= n, timeoutMs).then(() => mailsTo(addr));

const SERVE_LADDER = [100, 150, 200, 250, 300];
const SERVE_QUIET = 1_500;
const SERVE_REMINDER = 800;

/**
 * `canvass serve` (the build, CLI) on `dataDir`, configured only through
 * the environment: SMTP to the sink, short alert windows and retry ladder.
 */
function spawnServe(dataDir: string) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    CANVASS_DATA_DIR: dataDir,
    SMTP_URL: sink.url,
    CANVASS_MAIL_FROM: 'Canvass Ops <alerts@canvass.test>',
    CANVASS_ALERT_QUIET_MS: String(SERVE_QUIET),
    CANVASS_ALERT_REMINDER_MS: String(SERVE_REMINDER),
    CANVASS_RETRY_LADDER_MS: SERVE_LADDER.join(','),
    CANVASS_BATCH_WINDOW_MS: '0',
    CANVASS_SCHEDULER_TICK_MS: '50',
    CANVASS_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'info',
  };
  delete env.DATABASE_URL;
  const child: ChildProcess = spawn(process.execPath, [...CLI, 'serve'], {
    cwd: process.cwd(),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return {
    /** The base URL and the Default owner's key, once the server says it is serving. */
    async ready(timeoutMs = 55_000): Promise<{ base: string; key: string }> {
      const started = Date.now();
      while (!/"msg":"canvass serving"/.test(stdout)) {
        if (child.exitCode !== null || Date.now() - started > timeoutMs)
          throw new Error(`serve did not start:\n${stdout}\n${stderr}`);
        await sleep(50);
      }
      const key = /Owner API key, shown only this once: (cvk_[0-9A-Za-z]{32})\n/.exec(stdout)?.[1];
      if (!key) throw new Error(`no owner key line in:\n${stdout}`);
      const base = (
        JSON.parse(stdout.split('\n').find((l) => l.includes('"msg":"canvass serving"'))!) as { url: string }
      ).url;
      return { base, key };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(10_000)]);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
let spawned: ReturnType<typeof spawnServe> | undefined;
let server: { base: string; key: string };

describe('a spawned `canvass serve`, configured only by its environment', () => {
  it('retries on CANVASS_RETRY_LADDER_MS, then alerts through SMTP_URL on CANVASS_ALERT_QUIET_MS / CANVASS_ALERT_REMINDER_MS', async () => {
    const { base, key } = server;
    const api = async (method: string, url: string, body?: Json) => {
      const res = await fetch(base + url, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const json = (await res.json()) as { data: Json & { id: string } };
      expect(res.status, JSON.stringify(json)).toBeLessThan(300);
      return json.data;
    };

    const accounts = (await api('GET', '/accounts')) as unknown as { accountId: string; accountName: string }[];
    const accountId = accounts.find((a) => a.accountName === 'Default')!.accountId;
    const poll = await api('POST', '/poll', { accountId, title: 'Spawned' });
    const slide = await api('POST', '/slide', { pollId: poll.id, type: 'short-answer', title: 'Say something' });
    await api('POST', '/poll/update', { pollId: poll.id, isVisible: true });
    receiver.script('/cli-down', [{ status: 503 }]);
    const hook = await api('POST', '/webhooks', {
      pollId: poll.id,
      url: receiver.url('/cli-down'),
      deliveryRule: 'partial',
    });
    const createdAt = Date.parse(hook.createdAt as string);
    const sub = await fetch(base + '/participant/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pollId: poll.id, answers: [{ slideId: slide.id, value: 'hello' }] }),
    });
    expect(sub.status).toBe(201);

    // The configured ladder: six attempts, each retry after (at least) its configured delay.
    // A retry is scheduled from when the previous answer came back, so the gaps seen by the
    // receiver are never shorter than the delays; the spec's ladder would take hours.
    const reqs = (await receiver.waitFor((r) => r.filter((x) => x.path === '/cli-down').length >= 6, 20_000)).filter(
      (x) => x.path === '/cli-down',
    );
    const gaps = reqs.slice(1).map((r, i) => r.at - reqs[i]!.at);
    SERVE_LADDER.forEach((d, i) => expect(gaps[i]).toBeGreaterThanOrEqual(d - 20));
    expect(reqs.map((r) => r.headers['x-service-attempt'])).toEqual(['1', '2', '3', '4', '5', '6']);
    expect(new Set(reqs.map((r) => r.headers['x-service-delivery-id'])).size).toBe(1);

    // Alerts through the SMTP sink, to the Default account's owner, from the configured sender.
    const mails = await waitMails('owner@localhost', 3, 20_000);
    expect(mails[0]!.from).toBe('alerts@canvass.test');
    expect(mailHeaders(mails[0]!.raw).from).toBe('Canvass Ops <alerts@canvass.test>');
    const text = mailBody(mails[0]!.raw);
    expect(text).toContain(`Endpoint: ${receiver.url('/cli-down')}`);
    expect(text).toContain('What went wrong: HTTP 503');
    expect(text).toContain('Responses lost in the past week: 1');

    // Each email is sent just before its row commits: read once all three are stored.
    let stored: AlertView[] = [];
    for (const end = Date.now() + 10_000; stored.length < 3 && Date.now() < end; await sleep(30)) {
      stored = (await api('GET', `/alerts?accountId=${accountId}`)) as unknown as AlertView[];
    }
    expect(stored.map((a) => [a.kind, a.sequence])).toEqual([
      ['reminder', 3],
      ['reminder', 2],
      ['first', 1],
    ]);
    expect(stored.map((a) => a.recipients)).toEqual([['owner@localhost'], ['owner@localhost'], ['owner@localhost']]);
    const [t3, t2, t1] = stored.map((a) => Date.parse(a.sentAt));
    // The configured windows, not the defaults (a day, a week).
    expect(t1! - createdAt).toBeGreaterThanOrEqual(SERVE_QUIET);
    expect(t1! - createdAt).toBeLessThan(SERVE_QUIET + 15_000);
    expect(t2! - t1!).toBeGreaterThanOrEqual(SERVE_REMINDER);
    expect(t3! - t2!).toBeGreaterThanOrEqual(SERVE_REMINDER);
    expect(t3! - t2!).toBeLessThan(SERVE_REMINDER + 10_000);

    // No fourth email.
    await sleep(Math.max(0, t3! + SERVE_REMINDER * 1.5 - Date.now()));
    expect(mailsTo('owner@localhost')).toHaveLength(3);
    const webhooks = (await api('GET', `/webhooks?pollId=${poll.id}`)) as unknown as { health: Health }[];
    expect(webhooks[0]!.health).toMatchObject({ state: 'alerted', alertEmailsSent: 3 });
  });
});
