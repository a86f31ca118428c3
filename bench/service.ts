import { spawn, type ChildProcess } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { HERE, sleep } from './lib.js';

/** The `canvass` the api, workers and pipeline sections run: BENCH_CLI names another build, for an A/B in one run. */
export const CLI = process.env.BENCH_CLI ?? path.join(HERE, '..', 'dist', 'cli', 'index.js');

/** A port free on loopback now, as the system picks one (a fixed range can hold epmd's 4369, say). */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * The environment of a bench's `canvass` processes: a free port, warnings only, no rate limit,
 * and room for the polls the api section creates in its one account (tens of thousands).
 */
export async function serviceEnv(dataDir: string, databaseUrl: string | undefined, extra: NodeJS.ProcessEnv = {}) {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    CANVASS_RATE_LIMIT_PER_MINUTE: '0',
    CANVASS_QUOTA_POLLS: '100000000',
    CANVASS_DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...extra,
  };
  return { env, base: `http://127.0.0.1:${port}` };
}

/** A `canvass` command run to its end with `--json`: its printed object. */
export async function cli(env: NodeJS.ProcessEnv, args: string[]): Promise<Record<string, string>> {
  const child = spawn(process.execPath, [CLI, ...args, '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((r) => child.on('exit', r));
  return JSON.parse(out) as Record<string, string>;
}

/** A long-running `canvass` process (serve, worker). BENCH_CPU_PROF=dir: it writes a V8 CPU profile there when it stops. */
export function startCanvass(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  return spawn(process.execPath, ['--max-semi-space-size=64', ...prof, CLI, ...args], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** SIGTERM, and its exit. A process that already stopped or died (its error is on stderr) fires no second 'exit'. */
export async function stopCanvass(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.on('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Until `server` answers its health check; fails at once if it exits first (its error is on stderr). */
export async function waitForHealth(base: string, server: ChildProcess): Promise<void> {
  for (let i = 0; !(await fetch(`${base}/healthz`).catch(() => null))?.ok; i++) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error('the server exited before it answered');
    if (i > 300) throw new Error('server did not start');
    await sleep(100);
  }
}

/**
 * A visible poll with one short-answer slide and the given webhooks, made through the API as an
 * owner would. Returns the ids and the signing secret the owner is shown.
 */
export async function benchPoll(
  base: string,
  apiKey: string,
  accountId: string,
  webhooks: { url: string; deliveryRule: 'partial' | 'complete' }[],
): Promise<{ pollId: string; slideId: string; signingSecret: string | undefined }> {
  const auth = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const post = async (url: string, body: unknown) => {
    const res = await fetch(base + url, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { data: { id: string }; signingSecret?: string };
  };
  const pollId = (await post('/poll', { accountId, title: 'Bench poll' })).data.id;
  const slideId = (await post('/slide', { pollId, type: 'short-answer', title: 'Why?' })).data.id;
  await post('/poll/update', { pollId, isVisible: true });
  let signingSecret: string | undefined;
  for (const w of webhooks) {
    const made = await post('/webhooks', { pollId, ...w });
    signingSecret ??= made.signingSecret;
  }
  return { pollId, slideId, signingSecret };
}
