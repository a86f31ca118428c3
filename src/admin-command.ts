import { existsSync } from 'node:fs';
import { adminHandlers } from './admin-handlers.js';
import { adminSocketPath, type Config } from './config/index.js';
import { callAdminSocket } from './http/admin-socket.js';
import { DataDirLockedError } from './infra/db/data-dir-lock.js';
import type { Runtime } from './main.js';

/**
 * Runs an operator command on the runtime `open` makes (main.ts binds it). When a running server
 * holds the embedded data directory, the command goes to that server through its admin socket.
 */
export async function runOperatorCommand(
  open: (config: Config) => Promise<Runtime>,
  config: Config,
  command: string,
  args: Record<string, unknown>,
): Promise<unknown> {
  let rt: Runtime;
  try {
    rt = await open(config);
  } catch (e) {
    if (e instanceof DataDirLockedError && !config.databaseUrl && existsSync(adminSocketPath(config))) {
      try {
        return await callAdminSocket(adminSocketPath(config), command, args);
      } catch (err) {
        // No server listens there (one killed left its socket file): the command was not sent,
        // and the lock's own message says what holds the directory and how to free it.
        const refused = ['ECONNREFUSED', 'ENOENT'].includes((err as NodeJS.ErrnoException).code ?? '');
        throw refused ? e : err;
      }
    }
    throw e;
  }
  try {
    const handler = adminHandlers(rt.deps)[command];
    if (!handler) throw new Error(`no such command: ${command}`);
    return await handler(args);
  } finally {
    await rt.close();
  }
}
