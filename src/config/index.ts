import path from 'node:path';
import { BlockList, isIP } from 'node:net';
import { DEFAULT_QUOTAS, type Quotas } from '../domain/quotas.js';

export type Config = Readonly<{
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** How long opening one PostgreSQL connection may take before it counts as unavailable. */
  dbConnectTimeoutMs: number;
  dataDir: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  retryLadderMs: readonly number[];
  dnsRetryLadderMs: readonly number[];
  deliveryTimeoutMs: number;
  batchWindowMs: number;
  alertQuietMs: number;
  alertReminderMs: number;
  schedulerTickMs: number;
  /** How long a rotated signing secret still signs alongside the new one. */
  secretOverlapMs: number;
  /** Deliveries a recover resends per transaction. */
  recoverBatch: number;
  allowPrivateTargets: boolean;
  logLevel: string;
  retentionMs: number;
  rateLimitPerMinute: number;
  workerConcurrency: number;
  /** Connections to one endpoint origin from all workers together (each keeps its share). */
  endpointConnections: number;
  /** `canvass worker` runs under SCHED_BATCH on Linux (infra/process/batch-scheduling.ts). */
  workerBatchScheduling: boolean;
  /** When set, GET /metrics asks for `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** A port of its own for GET /metrics (the only one `canvass worker` has); 0 picks a free one. */
  metricsPort: number | undefined;
  quotas: Quotas;
}>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `expected a whole number, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/**
 * Finished deliveries are kept a week at least: alert emails count the responses lost in the
 * past week from the deliveries kept, and a shorter retention would undercount them.
 */
const MIN_RETENTION_MS = 7 * 86_400_000;

function retention(env: Env): number {
  const n = int(env, 'CANVASS_RETENTION_MS', 30 * 86_400_000, 0, 3650 * 86_400_000);
  if (n < MIN_RETENTION_MS)
    throw new ConfigError(
      'CANVASS_RETENTION_MS',
      `must be at least ${MIN_RETENTION_MS} (7 days: alert emails count the responses lost in the past week), got ${n}`,
    );
  return n;
}

/** The longest delay a ladder may hold: a year; far longer would make no writable due time. */
const MAX_LADDER_DELAY_MS = 365 * 86_400_000;

function ladder(env: Env, name: string, fallback: number[], length: number): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length !== length || parts.some((p) => !/^\d+$/.test(p))) {
    throw new ConfigError(name, `expected ${length} comma-separated millisecond delays, got "${raw}"`);
  }
  const delays = parts.map(Number);
  if (delays.some((d) => d > MAX_LADDER_DELAY_MS))
    throw new ConfigError(name, `each delay must be at most ${MAX_LADDER_DELAY_MS} ms (365 days), got "${raw}"`);
  return delays;
}

/** An optional value that must not hold whitespace: set but blank, or spaced, is a mistake. */
function word(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const v = raw.trim();
  if (v === '' || /\s/.test(v)) throw new ConfigError(name, 'must be one word, without spaces');
  return v;
}

/** Scrapes are not rate-limited, so the token alone stands against guesses: long enough to hold. */
export const MIN_METRICS_TOKEN_CHARS = 16;

function metricsToken(env: Env): string | undefined {
  const token = word(env, 'CANVASS_METRICS_TOKEN');
  if (token !== undefined && token.length < MIN_METRICS_TOKEN_CHARS)
    throw new ConfigError(
      'CANVASS_METRICS_TOKEN',
      `must be at least ${MIN_METRICS_TOKEN_CHARS} characters (a random token: scrapes are not rate-limited), got ${token.length}`,
    );
  return token;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

/**
 * A URL with no host would fall back to the client's default (localhost, or PGHOST) unseen, so
 * it is refused; a PostgreSQL socket directory is named by a `host` parameter instead (`socket`).
 */
function url(env: Env, name: string, protocols: string[], socket = false): string | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const noHost = socket
    ? 'names no host (for a Unix socket: postgres:///db?host=/socket/dir, with user= and password= there too)'
    : 'names no host';
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, /^[a-z]+:\/\/[^/]*@\//i.test(raw) ? noHost : 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => p + '//').join(' or ')}`);
  }
  if (!parsed.hostname && !(socket && parsed.searchParams.get('host'))) throw new ConfigError(name, noHost);
  return raw;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** For a process that serves the API on PORT: a metrics port of its own cannot be the same. */
export function checkServePorts(cfg: Config): void {
  if (cfg.metricsPort !== undefined && cfg.metricsPort !== 0 && cfg.metricsPort === cfg.port)
    throw new ConfigError('CANVASS_METRICS_PORT', `must differ from PORT (${cfg.port}): the API listens there`);
}

/**
 * Whether GET /metrics would answer anyone who reaches HOST: no token, and an address other than
 * a loopback one. Metrics count every account's traffic together; the process logs a warning.
 */
export function metricsOpenBeyondLoopback(cfg: Config): boolean {
  if (cfg.metricsToken) return false;
  const host = cfg.host.toLowerCase();
  const family = isIP(host);
  if (!family) return host !== 'localhost';
  return !LOOPBACK.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** Where a server on embedded storage takes operator commands (docs/operations.md). */
export const adminSocketPath = (cfg: Pick<Config, 'dataDir'>): string => path.join(cfg.dataDir, 'canvass.sock');

// A Unix socket's path holds at most 107 bytes on Linux; Node cuts a longer one short without a word.
const MAX_SOCKET_PATH_BYTES = 107;

/** The only reader of process.env: everything else receives a frozen Config. */
export function loadConfig(env: Env = process.env): Config {
  // Empty counts as unset, as for every other variable.
  const logLevel = env.LOG_LEVEL?.trim() || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  const host = env.HOST?.trim() || '127.0.0.1';
  // An address or a host name to listen on, as the operating system resolves it.
  if (!/^[A-Za-z0-9.:%_-]+$/.test(host))
    throw new ConfigError('HOST', `expected an address or host name, got "${host}"`);
  const port = int(env, 'PORT', 3000, 0, 65535);
  const metricsPort = env.CANVASS_METRICS_PORT ? int(env, 'CANVASS_METRICS_PORT', 0, 0, 65535) : undefined;
  const mailFrom = env.CANVASS_MAIL_FROM?.trim() || 'Canvass <alerts@localhost>';
  // One address, bare or in angle brackets after a display name (quoted where it holds a comma).
  const address = '[^\\s<>@,"]+@[^\\s<>@,"]+';
  if (!new RegExp(`^(?:${address}|(?:"[^"\\\\]*"|[^<>@,"]*)\\s*<${address}>)$`).test(mailFrom))
    throw new ConfigError('CANVASS_MAIL_FROM', `expected an address, as "Name <a@example.com>" or "a@example.com"`);
  // Set but blank is an empty secret, not a wish for embedded storage: only unset means PGlite.
  if (env.DATABASE_URL !== undefined && !env.DATABASE_URL.trim())
    throw new ConfigError('DATABASE_URL', 'is set but blank; unset it for embedded storage (PGlite)');
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], true);
  const dataDir = path.resolve(env.CANVASS_DATA_DIR?.trim() || './data');
  const socketBytes = Buffer.byteLength(adminSocketPath({ dataDir }));
  if (!databaseUrl && socketBytes > MAX_SOCKET_PATH_BYTES)
    throw new ConfigError(
      'CANVASS_DATA_DIR',
      `"${dataDir}" is too long: the server's admin socket inside it (canvass.sock) needs a path of at most ${MAX_SOCKET_PATH_BYTES} bytes, and would have ${socketBytes}; choose a shorter directory`,
    );
  return Object.freeze({
    port,
    host,
    databaseUrl,
    dbConnectTimeoutMs: int(env, 'CANVASS_DB_CONNECT_TIMEOUT_MS', 10_000, 1, 600_000),
    dataDir,
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom,
    retryLadderMs: Object.freeze(
      ladder(env, 'CANVASS_RETRY_LADDER_MS', [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000], 5),
    ),
    dnsRetryLadderMs: Object.freeze(ladder(env, 'CANVASS_DNS_RETRY_LADDER_MS', [60_000, 180_000], 2)),
    deliveryTimeoutMs: int(env, 'CANVASS_DELIVERY_TIMEOUT_MS', 10_000, 1, 600_000),
    batchWindowMs: int(env, 'CANVASS_BATCH_WINDOW_MS', 5_000, 0, 3_600_000),
    alertQuietMs: int(env, 'CANVASS_ALERT_QUIET_MS', 86_400_000, 1, 365 * 86_400_000),
    alertReminderMs: int(env, 'CANVASS_ALERT_REMINDER_MS', 604_800_000, 1, 365 * 86_400_000),
    schedulerTickMs: int(env, 'CANVASS_SCHEDULER_TICK_MS', 1_000, 10, 3_600_000),
    recoverBatch: int(env, 'CANVASS_RECOVER_BATCH', 200, 1, 10_000),
    secretOverlapMs: int(env, 'CANVASS_SECRET_OVERLAP_MS', 86_400_000, 0, 30 * 86_400_000),
    allowPrivateTargets: bool(env, 'CANVASS_ALLOW_PRIVATE_TARGETS', false),
    logLevel,
    retentionMs: retention(env),
    rateLimitPerMinute: int(env, 'CANVASS_RATE_LIMIT_PER_MINUTE', 600, 0, 10_000_000),
    workerConcurrency: int(env, 'CANVASS_WORKER_CONCURRENCY', 512, 1, 10_000),
    endpointConnections: int(env, 'CANVASS_ENDPOINT_CONNECTIONS', 32, 1, 1_024),
    workerBatchScheduling: bool(env, 'CANVASS_WORKER_BATCH_SCHEDULING', true),
    metricsToken: metricsToken(env),
    metricsPort,
    quotas: Object.freeze({
      pollsPerAccount: int(env, 'CANVASS_QUOTA_POLLS', DEFAULT_QUOTAS.pollsPerAccount, 1, 100_000_000),
      membersPerAccount: int(env, 'CANVASS_QUOTA_MEMBERS', DEFAULT_QUOTAS.membersPerAccount, 1, 1_000_000),
      liveKeysPerAccount: int(env, 'CANVASS_QUOTA_KEYS', DEFAULT_QUOTAS.liveKeysPerAccount, 1, 1_000_000),
      syntheticParticipantsPerPoll: int(
        env,
        'CANVASS_QUOTA_RESEARCH_PARTICIPANTS',
        DEFAULT_QUOTAS.syntheticParticipantsPerPoll,
        1,
        100_000_000,
      ),
    }),
  });
}
