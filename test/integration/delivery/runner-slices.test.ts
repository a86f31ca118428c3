import pino from 'pino';
import { expect, it } from 'vitest';
import type { HttpSender } from '../../../src/app/ports/index.js';
import { newSigningSecret } from '../../../src/domain/signature.js';
import { createH1Sender } from '../../../src/infra/http-sender/h1-sender.js';
import { startDeliveryRunner } from '../../../src/worker/delivery-runner.js';
import { countingClaims, harnessWithReceiver, queueDue } from '../../support/worker.js';

/**
 * A claim's attempts start 32 at a time, with a turn of the event loop between slices, so the
 * answers that arrived meanwhile are read (and their connections given new requests) before the
 * rest of a large claim is started.
 */

const env = harnessWithReceiver();

it('starts the 100 attempts of one claim in slices of at most 32, each in its own turn of the event loop', async () => {
  const { h, receiver } = env;
  receiver.script('/sliced', [{ status: 200 }]);
  const { accountId } = await h.account({ name: 'Slices' });
  // With its secret in the claim, an attempt reaches the sender without awaiting anything.
  await h.deps.store.accounts.setSigningSecretIfMissing(accountId, newSigningSecret(), new Date());
  const ids = await queueDue(h, accountId, receiver.url('/sliced'), 100);
  // Counts the event loop's turns: an immediate that schedules the next one runs once a turn.
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const startedIn = new Map<number, number>();
  const real = createH1Sender({ allowPrivateTargets: true });
  const sender: HttpSender = {
    send: (req) => {
      startedIn.set(turns, (startedIn.get(turns) ?? 0) + 1);
      return real.send(req);
    },
    close: () => real.close(),
  };
  const { deps, claims } = countingClaims(h, sender);
  const controller = new AbortController();
  const runner = startDeliveryRunner(deps, controller.signal, {
    concurrency: 128,
    claimBatch: 128,
    idleMs: 60_000,
    drainMs: 5_000,
    logger: pino({ level: 'silent' }),
  });
  try {
    await receiver.waitFor((r) => r.filter((x) => x.path === '/sliced').length >= ids.length, 20_000);
    expect(claims()).toBe(1);
    const slices = [...startedIn.values()];
    expect(slices.reduce((a, b) => a + b, 0)).toBe(100);
    expect(Math.max(...slices)).toBeLessThanOrEqual(32);
    expect(slices.length).toBeGreaterThanOrEqual(4);
  } finally {
    ticking = false;
    controller.abort();
    await runner.done;
    await sender.close();
  }
});
