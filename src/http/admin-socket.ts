import { chmodSync, rmSync } from 'node:fs';
import http from 'node:http';
import { DomainError } from '../domain/errors.js';
import { STATUS } from './problem.js';

export type AdminHandler = (args: Record<string, unknown>) => Promise<unknown>;

/**
 * Operator commands over a Unix socket in the data directory, so the CLI works while the
 * embedded server holds the directory. The socket is made readable and writable by its owner
 * only (mode 0600): whoever may open it may already read the database files beside it.
 * Requests: `POST /<command>` with a JSON object of arguments; answers `{result}` or `{error}`.
 */
export async function startAdminSocket(
  socketPath: string,
  handlers: Record<string, AdminHandler>,
): Promise<{ close(): Promise<void>; closeAllConnections(): void }> {
  // A socket file left by a process that died: the data directory's lock says none is running.
  rmSync(socketPath, { force: true });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (status: number, body: object) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const command = (req.url ?? '').slice(1);
      const handler = req.method === 'POST' && Object.hasOwn(handlers, command) ? handlers[command] : undefined;
      if (!handler) return answer(404, { error: `no such command: ${req.url ?? ''}` });
      let args: unknown;
      try {
        args = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        return answer(400, { error: 'the arguments are not JSON' });
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) {
        return answer(400, { error: 'the arguments must be a JSON object' });
      }
      Promise.resolve(args as Record<string, unknown>)
        .then(handler)
        .then(
          (result) => answer(200, { result }),
          (e: unknown) =>
            e instanceof DomainError
              ? answer(STATUS[e.code], { error: e.message, code: e.code })
              : answer(500, { error: e instanceof Error ? e.message : String(e) }),
        );
    });
  });
  // Made owner-only from the start (umask), not only after it exists (chmod). A socket is bound
  // within listen()'s call, so the process-wide umask is put back before anything else runs.
  const umask = process.umask(0o177);
  let bound: Promise<void>;
  try {
    bound = new Promise<void>((resolve, reject) => server.once('error', reject).listen(socketPath, resolve));
  } finally {
    process.umask(umask);
  }
  await bound;
  chmodSync(socketPath, 0o600);
  return {
    close: () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          rmSync(socketPath, { force: true });
          resolve();
        }),
      ),
    closeAllConnections: () => server.closeAllConnections(),
  };
}

/** How long an operator command waits for the server's whole answer (a paused server never gives one). */
export const ADMIN_CALL_TIMEOUT_MS = 30_000;

/**
 * Sends one command to a running server's admin socket; throws with the server's message, or
 * once `timeoutMs` has passed without its whole answer, naming the socket.
 */
export function callAdminSocket(
  socketPath: string,
  command: string,
  args: object,
  timeoutMs = ADMIN_CALL_TIMEOUT_MS,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const fail = (e: unknown) => {
      clearTimeout(timer);
      reject(e instanceof Error ? e : new Error(String(e)));
    };
    const req = http.request({ socketPath, path: `/${command}`, method: 'POST' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { result?: unknown; error?: string };
          if (res.statusCode === 200) resolve(body.result);
          else reject(new Error(body.error ?? `the server answered ${res.statusCode}`));
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      });
    });
    const timer = setTimeout(() => {
      fail(
        new Error(
          `the server at ${socketPath} did not answer within ${timeoutMs / 1000} s (a paused or stuck process?); ` +
            'the command may still take effect there: check before trying it again',
        ),
      );
      req.destroy();
    }, timeoutMs);
    req.on('error', fail);
    req.end(JSON.stringify(args));
  });
}
