import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { createAccount } from '../dist/app/accounts/create-account.js';
import { createPoll } from '../dist/app/polls/create-poll.js';
import { createSlide } from '../dist/app/polls/create-slide.js';
import { updatePoll } from '../dist/app/polls/update-poll.js';
import { createWebhook } from '../dist/app/webhooks/create-webhook.js';
import { benchDeps, freshDatabase, HERE } from './lib.js';

export type SubmitAbSide = { dist: string; postgresUs: number[]; nodeUs: number[] };

/**
 * The submission path's CPU, this build (A) against another (B): groups of `group` one-go
 * respondents on a poll with a `partial` and a `complete` webhook, written with each build's
 * submitGroup on one PostgreSQL database. Each side's block runs in a process of its own
 * (submit-block.ts), the sides alternating within each round (A then B, then B then A): in one
 * process, the build holding the first connection measured faster (docs/performance.md).
 */
export async function submitAb(
  otherDist: string,
  rounds: number,
  group: number,
  groups: number,
  log: (line: string) => void,
): Promise<[SubmitAbSide, SubmitAbSide]> {
  const { database, url, drop } = await freshDatabase('postgres');
  try {
    const deps = benchDeps(database);
    const account = await createAccount(deps, { name: 'Bench', ownerEmail: 'bench@example.com', plan: 'enterprise' });
    const caller = { userId: account.userId, keyId: 'bench', accountId: account.accountId };
    const { poll } = await createPoll(deps, caller, { accountId: account.accountId, title: 'Why Canvass?' });
    const { slide } = await createSlide(deps, caller, { pollId: poll.id, type: 'short-answer', title: 'Why?' });
    await updatePoll(deps, caller, poll.id, { isVisible: true });
    for (const deliveryRule of ['partial', 'complete'] as const)
      await createWebhook(deps, caller, { pollId: poll.id, url: `https://127.0.0.1:9/${deliveryRule}`, deliveryRule });
    await database.close();

    const sides: [SubmitAbSide, SubmitAbSide] = [
      { dist: path.join(HERE, '..', 'dist'), postgresUs: [], nodeUs: [] },
      { dist: path.resolve(otherDist), postgresUs: [], nodeUs: [] },
    ];
    for (let r = 0; r < rounds; r++) {
      for (const i of r % 2 ? [1, 0] : [0, 1]) {
        const side = sides[i]!;
        const run = spawnSync(
          process.execPath,
          [
            '--import',
            'tsx',
            path.join(HERE, 'submit-block.ts'),
            side.dist,
            url!,
            poll.id,
            slide.id,
            String(group),
            String(groups),
          ],
          { encoding: 'utf8' },
        );
        if (run.status !== 0) throw new Error(`submit-block ${side.dist} failed: ${run.stderr}`);
        const { postgresUs, nodeUs } = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, number>;
        side.postgresUs.push(postgresUs!);
        side.nodeUs.push(nodeUs!);
        log(
          `submit-ab round ${r + 1} ${i ? 'B' : 'A'}: PostgreSQL ${postgresUs!.toFixed(1)} µs, this process ${nodeUs!.toFixed(1)} µs per submission`,
        );
      }
    }
    return sides;
  } finally {
    await drop();
  }
}
