import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, expect, it } from 'vitest';
import { callAdminSocket, startAdminSocket } from '../../src/http/admin-socket.js';
import { stopServing } from '../../src/stopping.js';
import { logged } from '../support/logged.js';

/**
 * Stopping `canvass serve` (src/stopping.ts) with a request under way on the API and a command
 * under way on the admin socket: both are cut once the grace has passed, and storage is closed
 * even when a later part fails to close, that failure thrown after.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'canvass-stopping-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('cuts a stuck request and a stuck admin command after the grace, closes storage, then throws the failure', async () => {
  const app = Fastify();
  // A response that never ends, as a CSV export whose client has stopped reading.
  app.get('/endless', (_req, reply) => {
    const body = new Readable({ read() {} });
    body.push('first row\n');
    return reply.send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const socketPath = path.join(dir, 'canvass.sock');
  const admin = await startAdminSocket(socketPath, { stuck: () => new Promise(() => {}) });

  const endless = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/endless`, resolve).on('error', reject),
  );
  const endlessCut = new Promise((resolve) => endless.once('close', resolve));
  const command = callAdminSocket(socketPath, 'stuck', {}).catch((e: unknown) => e);

  const { lines, logger } = logged();
  let storageClosed = false;
  const stopped = stopServing(
    {
      logger,
      close: async () => {
        storageClosed = true;
      },
    },
    {
      app,
      admin,
      worker: { stop: async () => {} },
      scrape: {
        close: async () => {
          throw new Error('metrics port would not close');
        },
      },
    },
    200,
  );
  await expect(stopped).rejects.toThrow('metrics port would not close');
  expect(storageClosed).toBe(true);
  await endlessCut;
  expect(await command).toBeInstanceOf(Error);
  expect(lines.map((l) => l.msg)).toContain('closing the connections of requests still under way at the stop');
});
