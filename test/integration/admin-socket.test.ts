import { mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ADMIN_CALL_TIMEOUT_MS, callAdminSocket, startAdminSocket } from '../../src/http/admin-socket.js';

/**
 * The admin socket (docs/operations.md, "API keys, members and the signing secret"): an operator
 * command gives up on a server that took the connection but never answers, naming the socket;
 * the socket is owner-only from the start, without leaving the process's umask changed.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const socketIn = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'canvass-admin-'));
  dirs.push(dir);
  return path.join(dir, 'canvass.sock');
};

it(
  'gives up on a server that accepts the connection and never answers, naming the socket',
  { timeout: 10_000 },
  async () => {
    const socketPath = socketIn();
    // A paused server: the kernel accepts, the request is read, no answer ever comes.
    const held: net.Socket[] = [];
    let received = '';
    const server = net.createServer((s) => {
      held.push(s);
      s.on('data', (c: Buffer) => (received += c.toString('utf8')));
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const started = Date.now();
      const call = callAdminSocket(socketPath, 'keys.list', { accountId: 'acc_1' }, 300);
      await expect(call).rejects.toThrow(`the server at ${socketPath} did not answer within 0.3 s`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(received).toMatch(/^POST \/keys\.list HTTP\/1\.1/);
      // The connection is closed, not left open.
      await expect.poll(() => held.every((s) => s.readableEnded || s.destroyed), { timeout: 5_000 }).toBe(true);
      // Without a timeout given, an operator command waits 30 s.
      expect(ADMIN_CALL_TIMEOUT_MS).toBe(30_000);
    } finally {
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  },
);

it('takes an answer that comes within the time, and the server message of a refusal', async () => {
  const socketPath = socketIn();
  const admin = await startAdminSocket(socketPath, {
    echo: async (a) => a,
    slow: (a) => new Promise((resolve) => setTimeout(() => resolve(a), 100)),
  });
  try {
    expect(await callAdminSocket(socketPath, 'slow', { n: 1 }, 2_000)).toEqual({ n: 1 });
    expect(await callAdminSocket(socketPath, 'echo', { n: 2 })).toEqual({ n: 2 });
    await expect(callAdminSocket(socketPath, 'nope', {}, 2_000)).rejects.toThrow('no such command: /nope');
  } finally {
    await admin.close();
  }
});

it('binds the socket owner-only and puts the process umask back before its start goes on', async () => {
  const socketPath = socketIn();
  const mask = process.umask(0o022);
  const starting = startAdminSocket(socketPath, {});
  // What the start left in place while its listen completes: other work runs meanwhile.
  const during = process.umask(mask);
  const server = await starting;
  try {
    expect(during).toBe(0o022);
    expect(statSync(socketPath).mode & 0o777).toBe(0o600);
  } finally {
    await server.close();
  }
});
