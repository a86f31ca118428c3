/**
 * Benchmark receiver, in its own process: an HTTPS keep-alive server that verifies every
 * signature (as a real consumer would) and records when each delivery id first arrived.
 * The parent talks to it over IPC: {cmd:'reset'|'count'|'stats'|'events'|'delay', ...}; a reset may
 * name another secret (an account's own).
 * With `track` on (the pipeline section) it also records when each event (its type and
 * respondent, read from the body) first arrived; with `ports` on (the workers section), when
 * each request arrived by the client's port, which tells the sending process.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { verifySignature } from '@canvass/verify';

const dir = process.env.BENCH_TLS_DIR!;
let secret = process.env.BENCH_SECRET!;
let track = false;
let events = new Map<string, number>();
let ports: Map<number, number[]> | undefined;
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
      if (ports) {
        const port = req.socket.remotePort ?? 0;
        const times = ports.get(port);
        if (times) times.push(now);
        else ports.set(port, [now]);
      }
      if (track && !failure) {
        const e = JSON.parse(body.toString()) as { type: string; participantId: string };
        const key = `${e.type}:${e.participantId}`;
        if (!events.has(key)) events.set(key, now);
      }
      const reply = () => res.writeHead(failure ? 400 : 200, { 'content-type': 'text/plain' }).end('ok');
      if (delayMs) setTimeout(reply, delayMs);
      else reply();
    });
  },
);
server.keepAliveTimeout = 120_000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));

process.on('message', (m: { cmd: string; delayMs?: number; secret?: string; track?: boolean; ports?: boolean }) => {
  if (m.cmd === 'reset') {
    first = new Map();
    events = new Map();
    secret = m.secret ?? process.env.BENCH_SECRET!;
    track = m.track ?? false;
    ports = m.ports ? new Map() : undefined;
    requests = 0;
    badSignatures = 0;
    process.send!({ ok: true });
  } else if (m.cmd === 'delay') {
    delayMs = m.delayMs ?? 0;
    process.send!({ ok: true });
  } else if (m.cmd === 'count') {
    process.send!({ requests, unique: first.size, badSignatures });
  } else if (m.cmd === 'ports') {
    process.send!({ ports: [...(ports ?? [])] });
  } else if (m.cmd === 'events') {
    process.send!({ events: [...events] });
  } else if (m.cmd === 'stats') {
    process.send!({ requests, unique: first.size, badSignatures, arrivals: [...first] });
  }
});
