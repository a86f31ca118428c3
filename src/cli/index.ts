#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander';
import { PLANS, ROLES, type Plan, type Role } from '../domain/access.js';
import { isMemberAddress } from '../domain/email-address.js';
import { idPattern } from '../domain/ids.js';
import { ConfigError, loadConfig, type Config } from '../config/index.js';
import {
  applyMigrations,
  createLogger,
  openRuntime,
  runAdminCommand,
  runWorker,
  serve,
  VERSION,
  type Runtime,
} from '../main.js';
import { describeError, fail, print } from './output.js';

const oneOf =
  <T extends string>(values: readonly T[], what: string) =>
  (v: string): T => {
    if (!values.includes(v as T)) throw new InvalidArgumentError(`${what} must be one of ${values.join(', ')}`);
    return v as T;
  };

/** An operator's email, by the grammar the API takes (isMemberAddress). */
const emailArg = (v: string): string => {
  const email = v.trim();
  if (!isMemberAddress(email)) throw new InvalidArgumentError('must be an email address');
  return email;
};

const nameArg = (v: string): string => {
  const name = v.trim();
  if (!name || name.length > 200) throw new InvalidArgumentError('must be 1 to 200 characters once trimmed');
  return name;
};

const pageSize = (v: string): number => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > 100) throw new InvalidArgumentError('must be a whole number from 1 to 100');
  return n;
};

const keyCursor = (v: string): string => {
  if (!new RegExp(idPattern('key')).test(v))
    throw new InvalidArgumentError('must be a key_ id: the endCursor of the page before');
  return v;
};

function config(json: boolean): Config {
  try {
    return loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) fail(json, `bad configuration: ${e.message}`);
    throw e;
  }
}

function explain(json: boolean, e: unknown): never {
  // Start-up refusals (a locked data directory, a schema behind) and domain errors say what to do.
  fail(json, describeError(e));
}

/** Runs an operator command against storage; logs go to stderr so stdout holds only the answer. */
async function withRuntime(
  json: boolean,
  fn: (rt: Runtime) => Promise<void>,
  opts: { schema?: 'apply' | 'check' | 'none' } = {},
): Promise<void> {
  const cfg = config(json);
  let rt: Runtime | undefined;
  let failed: { error: unknown } | undefined;
  try {
    rt = await openRuntime(cfg, { schema: opts.schema, logger: createLogger(cfg, 2) });
    await fn(rt);
  } catch (e) {
    failed = { error: e };
  }
  // Closed before the exit, a failure too: embedded storage lets go of its data directory.
  await rt?.close().catch(() => {});
  if (failed) explain(json, failed.error);
}

/** A time as the API writes it, whether it came as a Date (storage) or as text (the server's socket). */
const isoTime = (t: unknown): string => (t instanceof Date ? t.toISOString() : String(t));

type KeyLine = {
  id: string;
  prefix: string | null;
  email: string;
  role: string;
  lastUsedAt: unknown;
  revokedAt: unknown;
};

/**
 * Runs an operator command (src/admin-handlers.ts) and prints its answer. With embedded
 * storage held by a running server, the server runs it.
 */
async function admin<R>(json: boolean, command: string, args: Record<string, unknown>, human: (r: R) => string) {
  const cfg = config(json);
  try {
    const r = (await runAdminCommand(cfg, command, args, createLogger(cfg, 2))) as R;
    print(json, r as Record<string, unknown>, human(r));
  } catch (e) {
    explain(json, e);
  }
}

/** Starts a long-running process kind and drains it on SIGTERM or SIGINT. */
type Running = { stop(): Promise<void>; stopped?: Promise<Error> };

async function runUntilSignal(start: (cfg: Config) => Promise<Running>): Promise<void> {
  const cfg = config(false);
  let running: Running | undefined;
  let first: NodeJS.Signals | undefined;
  let broken = false;
  const drain = (why: string, r: Running) =>
    void r.stop().then(
      () => process.exit(broken ? 1 : 0),
      (e: unknown) => fail(false, `stopping after ${why} failed: ${describeError(e)}`),
    );
  // A second signal (a supervisor repeating itself, Ctrl-C twice) does not cut the drain short:
  // only a third stops at once, leaving the attempts in flight to be sent again by another worker.
  // Heard from the start: a signal while the process starts stops it once it has started, so
  // what it opened is closed in order; a start still under way 10 s later (a database that does
  // not answer), or a second signal meanwhile, stops it at once.
  let signals = 0;
  // The limit on a start still under way after a signal; cleared once it has started.
  let startLimit: NodeJS.Timeout | undefined;
  const atOnce = (why: string) => {
    process.stderr.write(`canvass: ${why}; stopping at once\n`);
    process.exit(1);
  };
  const shutdown = (signal: NodeJS.Signals) => {
    if (++signals === 1) {
      first = signal;
      if (running) return drain(signal, running);
      process.stderr.write(`canvass: ${signal} while starting: stopping once started; a second signal stops at once\n`);
      startLimit = setTimeout(() => atOnce(`still starting 10 s after ${signal}`), 10_000).unref();
      return;
    }
    if (!running) return atOnce(`${signal} again while starting`);
    if (signals === 2) {
      const again = broken ? `${signal} while stopping for the stopped storage` : `${signal} again`;
      process.stderr.write(`canvass: ${again}: still draining; a third signal stops at once\n`);
      return;
    }
    process.exit(1);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  try {
    running = await start(cfg);
  } catch (e) {
    explain(false, e);
  }
  clearTimeout(startLimit);
  if (first) return drain(first, running);
  // Storage that cannot serve again (the embedded database stopped) stops the process with exit
  // code 1, so a supervisor restarts it: what it opened is closed first, for 10 s at most.
  const r = running;
  void r.stopped?.then((e) => {
    broken = true;
    if (signals) return;
    signals = 1;
    broken = true;
    process.stderr.write(`canvass: ${e.message}; stopping\n`);
    setTimeout(() => atOnce('still stopping 10 s after storage stopped'), 10_000).unref();
    drain('storage stopped', r);
  });
}

const program = new Command('canvass')
  .version(VERSION)
  .description('Canvass: polls and signed, retried response webhooks')
  // Argument errors (a bad --plan, a missing option) fail like any other: with --json, one JSON object on stdout too.
  .configureOutput({
    outputError: (message, write) => {
      write(message);
      if (process.argv.includes('--json'))
        process.stdout.write(JSON.stringify({ error: message.replace(/^error:\s*/, '').trim() }) + '\n');
    },
  });

program
  .command('serve')
  .description('run the HTTP API (and the delivery worker unless --no-worker)')
  .option('--no-worker', 'API only; run `canvass worker` processes separately')
  .action((opts: { worker: boolean }) => runUntilSignal((cfg) => serve(cfg, { worker: opts.worker })));

program
  .command('worker')
  .description('run the delivery worker and scheduler only (scale out by running more)')
  .action(() => runUntilSignal(runWorker));

program
  .command('support')
  .description('support-only operations')
  .command('rotate-secret')
  .description("replace an account's webhook signing secret; queued retries use the new one at once")
  .requiredOption('--account <id>', 'account id')
  .option('--force', "rotate within the last rotation's overlap, dropping the secret it gave out")
  .option('--json', 'print one JSON object')
  .action((opts: { account: string; force?: boolean; json?: boolean }) =>
    admin(
      !!opts.json,
      'support.rotate-secret',
      { accountId: opts.account, force: !!opts.force },
      (r: { accountId: string; signingSecret: string; previousUntil: string }) =>
        `account ${r.accountId}: new signing secret ${r.signingSecret}; the previous one signs alongside it until ${r.previousUntil}`,
    ),
  );

program
  .command('migrate')
  .description('bring the database schema up to date')
  .option('--json', 'print one JSON object')
  .action((opts: { json?: boolean }) =>
    withRuntime(
      !!opts.json,
      async (rt) => {
        const applied = await applyMigrations(rt);
        print(
          !!opts.json,
          { applied },
          applied.length ? `applied: ${applied.join(', ')}` : 'schema already up to date',
        );
      },
      { schema: 'none' },
    ),
  );

const accounts = program.command('accounts').description('manage accounts');
accounts
  .command('create')
  .requiredOption('--name <name>', 'account name', nameArg)
  .requiredOption('--owner-email <email>', "owner's email address", emailArg)
  .option('--plan <plan>', `one of ${PLANS.join(', ')}`, oneOf(PLANS, 'plan'), 'premium' as Plan)
  .option('--json', 'print one JSON object')
  .action((opts: { name: string; ownerEmail: string; plan: Plan; json?: boolean }) =>
    admin(
      !!opts.json,
      'accounts.create',
      { name: opts.name, ownerEmail: opts.ownerEmail, plan: opts.plan },
      (r: { accountId: string; userId: string; apiKey: string }) =>
        `account ${r.accountId}, owner ${r.userId}\nAPI key (shown once): ${r.apiKey}`,
    ),
  );
accounts
  .command('set-plan')
  .requiredOption('--account <id>', 'account id')
  .requiredOption('--plan <plan>', `one of ${PLANS.join(', ')}`, oneOf(PLANS, 'plan'))
  .option('--json', 'print one JSON object')
  .action((opts: { account: string; plan: Plan; json?: boolean }) =>
    admin(
      !!opts.json,
      'accounts.set-plan',
      { accountId: opts.account, plan: opts.plan },
      (r: { accountId: string; plan: string }) => `account ${r.accountId} is now on ${r.plan}`,
    ),
  );

const keys = program.command('keys').description('API keys');
keys
  .command('create')
  .requiredOption('--account <id>', 'account id')
  .requiredOption('--email <email>', "member's email (added to the account if new)", emailArg)
  .requiredOption('--role <role>', `one of ${ROLES.join(', ')}`, oneOf(ROLES, 'role'))
  .option('--json', 'print one JSON object')
  .action((opts: { account: string; email: string; role: Role; json?: boolean }) =>
    admin(
      !!opts.json,
      'keys.create',
      { accountId: opts.account, email: opts.email, role: opts.role },
      (r: { userId: string; role: string; apiKey: string }) =>
        `user ${r.userId} (${r.role})\nAPI key (shown once): ${r.apiKey}`,
    ),
  );
keys
  .command('list')
  .description("the keys of an account's members (a prefix, never the key)")
  .requiredOption('--account <id>', 'account id')
  .option('--limit <n>', 'keys per page, 1..100', pageSize, 100)
  .option('--start-cursor <id>', 'the page after this key (endCursor of the page before)', keyCursor)
  .option('--json', 'print one JSON object')
  .action((opts: { account: string; limit: number; startCursor?: string; json?: boolean }) =>
    admin(
      !!opts.json,
      'keys.list',
      { accountId: opts.account, limit: opts.limit, ...(opts.startCursor ? { startCursor: opts.startCursor } : {}) },
      (r: { data: KeyLine[]; hasNextPage: boolean; endCursor: string | null }) =>
        (r.data.length
          ? r.data
              .map(
                (k) =>
                  `${k.id}  ${k.prefix ?? '(no prefix)'}…  ${k.email} (${k.role})  ${k.revokedAt ? `revoked ${isoTime(k.revokedAt)}` : `last used ${k.lastUsedAt ? isoTime(k.lastUsedAt) : 'never'}`}`,
              )
              .join('\n')
          : 'no keys') + (r.hasNextPage ? `\nmore: --start-cursor ${r.endCursor}` : ''),
    ),
  );
keys
  .command('revoke')
  .description('revoke a key at once: its next request is refused')
  .requiredOption('--key <id>', 'key id (key_…), as `keys list` shows it')
  .option('--json', 'print one JSON object')
  .action((opts: { key: string; json?: boolean }) =>
    admin(!!opts.json, 'keys.revoke', { keyId: opts.key }, (r: { id: string }) => `key ${r.id} revoked`),
  );

program
  .command('members')
  .description('account members')
  .command('remove')
  .description('remove a member; a user left in no account has every key revoked')
  .requiredOption('--account <id>', 'account id')
  .requiredOption('--email <email>', "member's email")
  .option('--json', 'print one JSON object')
  .action((opts: { account: string; email: string; json?: boolean }) =>
    admin(
      !!opts.json,
      'members.remove',
      { accountId: opts.account, email: opts.email },
      (r: { email: string; accountId: string; revokedKeys: number }) =>
        `${r.email} removed from ${r.accountId}${r.revokedKeys ? `; ${r.revokedKeys} key(s) revoked` : ''}`,
    ),
  );

program.parseAsync().catch((e) => explain(process.argv.includes('--json'), e));
