import type { ServerResponse } from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import type { Build } from './build.js';
import type { NewDelivery } from '../dist/domain/delivery.js';
import { newId } from '../dist/domain/ids.js';
import { benchDeps, freshDatabase, SECRET, sleep, tlsDir } from './lib.js';

/**
 * Whose deliveries wait behind the stalled ones: another account's, or the same account's to
 * another host; for `host`, the stalled ones go to five endpoints on the stalled host; for
 * `backlog`, another account's wait behind 3,000 stalled ones, more than a claim's window
 * (2,048), due a millisecond apart before them (for `tied`, all at one instant, which a claim
 * window cannot read past; no statement of the service queues that many at one); for `hosts`,
 * the same account's wait behind 1,000 stalled ones on each of two hosts.
 */
export type StallCase = 'account' | 'endpoint' | 'host' | 'backlog' | 'tied' | 'hosts';

export type StallRun = { build: string; case: StallCase; firstMs: number; lastMs: number };

const STALLED = 1_000;
const BACKLOG = 3_000;
const WAITING = 50;
const AFTER_MS = 3_000;

/**
 * One worker (512 slots, 10 s deadline) on PostgreSQL with 1,000 deliveries of one account due
 * to an HTTPS endpoint that takes requests and never answers; 3 s later, 50 deliveries fall due
 * for an endpoint that answers at once, of another account or of the same one. How long after
 * they fell due did the first and the last of them arrive? Both endpoints are servers in this
 * process; the worker is each build's runner, in this process too.
 */
export async function stallRun(build: Build, which: StallCase): Promise<StallRun> {
  const dir = tlsDir();
  const tls = { key: readFileSync(path.join(dir, 'server.key')), cert: readFileSync(path.join(dir, 'server.crt')) };
  const held: ServerResponse[] = [];
  const stalled = https.createServer(tls, (_req, res) => void held.push(res));
  // Another port is another host to the worker's shares (account-share.ts).
  const stalledToo = https.createServer(tls, (_req, res) => void held.push(res));
  const arrivals: number[] = [];
  const answering = https.createServer(tls, (req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(Date.now());
      res.end('ok');
    });
  });
  const listen = (s: https.Server) =>
    new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
  const stalledPort = await listen(stalled);
  const stalledTooPort = await listen(stalledToo);
  const answeringPort = await listen(answering);
  const fresh = await freshDatabase('postgres', build);
  const controller = new AbortController();
  const sender = build.createH1Sender({ allowPrivateTargets: true });
  try {
    const deps = benchDeps(fresh.database, build);
    const now = new Date();
    for (const id of ['acc_stalled', 'acc_other']) {
      await deps.store.accounts.insert({ id, name: id, plan: 'premium', createdAt: now, updatedAt: now });
      await deps.store.accounts.setSigningSecret(id, SECRET, now, now);
    }
    // `dueFrom`: the first row due then, each next `apart` milliseconds later; otherwise all due now.
    const rows = (
      n: number,
      accountId: string,
      endpointId: string,
      url: string,
      dueFrom?: number,
      apart = 1,
    ): NewDelivery[] =>
      Array.from({ length: n }, (_, i) => ({
        id: newId('dlv'),
        accountId,
        pollId: 'poll_stall',
        webhookId: null,
        endpointId,
        source: 'question-logic',
        url,
        participantId: `prt_${i}`,
        type: 'submitted-responses',
        body: '{}',
        createdAt: new Date(),
        nextAttemptAt: dueFrom === undefined ? new Date() : new Date(dueFrom + apart * i),
      }));
    const spread = which === 'host' ? 5 : 1;
    const stalledUrl = (e: number) => `https://127.0.0.1:${stalledPort}/stalled/${e}`;
    if (which === 'backlog' || which === 'tied')
      await deps.store.deliveries.insert(
        rows(BACKLOG, 'acc_stalled', 'end_stalled_0', stalledUrl(0), Date.now() - BACKLOG, which === 'tied' ? 0 : 1),
      );
    else if (which === 'hosts')
      for (const port of [stalledPort, stalledTooPort])
        await deps.store.deliveries.insert(
          rows(STALLED, 'acc_stalled', `end_stalled_${port}`, `https://127.0.0.1:${port}/stalled`),
        );
    else
      for (let e = 0; e < spread; e++)
        await deps.store.deliveries.insert(rows(STALLED / spread, 'acc_stalled', `end_stalled_${e}`, stalledUrl(e)));
    const runner = build.startDeliveryRunner({ ...deps, sender }, controller.signal, {
      concurrency: 512,
      claimBatch: 512,
      idleMs: 200,
      drainMs: 0,
      logger: pino({ level: 'silent' }),
    });
    await sleep(AFTER_MS);
    const accountId = which === 'account' || which === 'backlog' || which === 'tied' ? 'acc_other' : 'acc_stalled';
    await deps.store.deliveries.insert(
      rows(WAITING, accountId, 'end_answering', `https://127.0.0.1:${answeringPort}/answering`),
    );
    const dueAt = Date.now();
    runner.wake();
    const until = dueAt + 60_000;
    while (arrivals.length < WAITING && Date.now() < until) await sleep(5);
    if (arrivals.length < WAITING) throw new Error(`only ${arrivals.length}/${WAITING} arrived within 60 s`);
    controller.abort();
    for (const res of held.splice(0)) res.destroy();
    await runner.done;
    return { build: build.name, case: which, firstMs: arrivals[0]! - dueAt, lastMs: arrivals.at(-1)! - dueAt };
  } finally {
    controller.abort();
    for (const res of held) res.destroy();
    await sender.close();
    stalled.closeAllConnections();
    stalledToo.closeAllConnections();
    answering.closeAllConnections();
    stalled.close();
    stalledToo.close();
    answering.close();
    await fresh.drop();
  }
}
