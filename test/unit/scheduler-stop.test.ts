import pino from 'pino';
import { expect, it } from 'vitest';
import type { Deps } from '../../src/app/ports/index.js';
import { startScheduler, type SchedulerTask } from '../../src/worker/scheduler.js';

// A stop starts no further task of the pass under way: stop() waits only for the one running
// (docs/operations.md, "Stopping and draining").
it('a stop during a pass starts none of its later tasks', async () => {
  const controller = new AbortController();
  const ran: string[] = [];
  const task = (name: string, run: () => void): SchedulerTask => ({
    name,
    run: async () => {
      ran.push(name);
      run();
      return 0;
    },
  });
  const done = startScheduler({} as Deps, controller.signal, {
    tickMs: 60_000,
    logger: pino({ level: 'silent' }),
    tasks: [task('first', () => controller.abort()), task('second', () => {})],
  });
  await done;
  expect(ran).toEqual(['first']);
});
