/**
 * Benchmark receiver, in its own process: an HTTPS keep-alive server that verifies every
 * signature (as a real consumer would) and records when each delivery id first arrived.
 * The parent talks to it over IPC: {cmd:'reset'|'stats'|'delay', ...}.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { verifySignature } from '@canvass/verify';

const dir = process.env.BENCH_TLS_DIR!;
const secret = process.env.BENCH_SECRET!;
let delayMs = 0;
let first = new Map<string, number>();
let requests = 0;
let badSignatures = 0;

const server = https.createServer(
  {
    key: readFileSync(path.join(dir, 'server.key')),
    cert: readFileSync(path.join(dir, 'server.crt')),
    keepAliveTimeout: 120_000,
  },
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      requests++;
      const body = Buffer.concat(chunks);
      let failure = false;
      try {
        verifySignature({ secret, header: req.headers['x-service-signature'], rawBody: body, now });
      } catch {
        failure = true;
        badSignatures++;
      }
      const id = req.headers['x-service-delivery-id'] as string;
      if (!first.has(id)) first.set(id, now);
      const reply = () => res.writeHead(failure ? 400 : 200, { 'content-type': 'text/plain' }).end('ok');
      if (delayMs) setTimeout(reply, delayMs);
      else reply();
    });
  },
);
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));

process.on('message', (m: { cmd: string; delayMs?: number }) => {
  if (m.cmd === 'reset') {
    first = new Map();
    requests = 0;
    badSignatures = 0;
    process.send!({ ok: true });
  } else if (m.cmd === 'delay') {
    delayMs = m.delayMs ?? 0;
    process.send!({ ok: true });
  } else if (m.cmd === 'count') {
    process.send!({ requests, unique: first.size, badSignatures });
  } else if (m.cmd === 'stats') {
    process.send!({ requests, unique: first.size, badSignatures, arrivals: [...first] });
  }
});
