import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const run = promisify(execFile);

/**
 * A throwaway PostgreSQL cluster of the test's own (initdb in a temporary directory, its own
 * port and socket directory), never the machine's shared one: tests may stop and start it.
 * As root (initdb refuses root) the server binaries run as the `postgres` user via runuser.
 */
export type PgCluster = {
  /** Connection string of its `postgres` database (trust authentication, user postgres). */
  url: string;
  port: number;
  dir: string;
  /** pg_ctl stop (`fast` by default: sessions are terminated, open transactions roll back). */
  stop(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  /** pg_ctl start, same port and options; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it if running and deletes its directory. Safe to call more than once. */
  destroy(): Promise<void>;
};

/** The bin directory of the newest PostgreSQL ≥ 15 installed in the Debian layout, or null. */
export function findPgBin(): string | null {
  const fromEnv = process.env.CANVASS_TEST_PG_BIN;
  if (fromEnv) return existsSync(path.join(fromEnv, 'initdb')) ? fromEnv : null;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .map(Number)
    .filter((v) => Number.isInteger(v) && v >= 15)
    .sort((a, b) => b - a);
  for (const v of versions) {
    const bin = path.join(root, String(v), 'bin');
    if (['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(path.join(bin, b)))) return bin;
  }
  return null;
}

/** uid/gid of the unprivileged user the server runs as when we are root; null when not root. */
function serverUser(): { uid: number; gid: number } | null | undefined {
  if (process.getuid?.() !== 0) return null;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined; // root without a postgres user: cannot run a cluster
  }
}

/** Whether this machine can run a private cluster (binaries present, a non-root user to run them). */
export function canRunPgCluster(): boolean {
  if (findPgBin() === null) return false;
  const user = serverUser();
  return user === null || (user !== undefined && (existsSync('/usr/sbin/runuser') || existsSync('/sbin/runuser')));
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = findPgBin();
  const user = serverUser();
  if (!bin || user === undefined) throw new Error('no PostgreSQL ≥ 15 binaries (or no postgres user to run them as)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'canvass-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = path.join(dir, 'data');
  const port = await freePort();
  const cmd = (tool: string, args: string[]): [string, string[]] =>
    user ? ['runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args]] : [path.join(bin, tool), args];
  const exec = async (tool: string, args: string[]) => {
    const [file, argv] = cmd(tool, args);
    try {
      await run(file, argv, { cwd: dir, timeout: 120_000 });
    } catch (e) {
      const err = e as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${tool} ${args.join(' ')} failed: ${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
    }
  };
  // Unix sockets only in our directory, TCP only on loopback; fsync off: this cluster is thrown away.
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c full_page_writes=off`;
  let running = false;
  let destroyed = false;
  const stopSync = () => {
    if (!running) return;
    try {
      const [file, argv] = cmd('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      execFileSync(file, argv, { stdio: 'ignore', timeout: 30_000 });
    } catch {
      // already gone
    }
  };
  // If the test process ends without afterAll (a crash), do not leave a postmaster behind.
  process.once('exit', stopSync);

  const cluster: PgCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    async stop(mode = 'fast') {
      await exec('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    async start() {
      await exec('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', '-o', options, 'start']);
      running = true;
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      if (running) await cluster.stop('immediate').catch(() => stopSync());
      process.removeListener('exit', stopSync);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await exec('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
      '--no-instructions',
    ]);
    await cluster.start();
  } catch (e) {
    await cluster.destroy();
    throw e;
  }
  return cluster;
}
