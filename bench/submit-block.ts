/**
 * One side of the submit-ab section, in a process of its own: groups of one-go respondents
 * written with one build's submitGroup on an existing database, after a warm-up. Prints
 * {postgresUs, nodeUs}: CPU per submission of PostgreSQL and of this process.
 *   argv: <dist> <database url> <pollId> <slideId> <group size> <groups>
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { openDatabase as OpenDatabase } from '../dist/infra/db/database.js';
import type { createStore as CreateStore } from '../dist/infra/db/store.js';
import type { submitGroup as SubmitGroup } from '../dist/app/responses/submit-responses.js';
import { postgresSnapshot, postgresTicksSince } from './lib.js';

const [dist, url, pollId, slideId, groupText, groupsText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const group = Number(groupText);
const groups = Number(groupsText);
const load = async <T>(file: string, name: string): Promise<T> =>
  ((await import(pathToFileURL(path.join(path.resolve(dist), file)).href)) as Record<string, T>)[name]!;
const openDatabase = await load<typeof OpenDatabase>('infra/db/database.js', 'openDatabase');
const createStore = await load<typeof CreateStore>('infra/db/store.js', 'createStore');
const submitGroup = await load<typeof SubmitGroup>('app/responses/submit-responses.js', 'submitGroup');

const database = await openDatabase({ databaseUrl: url, dataDir: '', schema: 'check', poolSize: 1 });
const deps = {
  store: createStore(database.db),
  clock: { now: () => new Date() },
  urlPolicy: { allowPrivateTargets: true },
  delivery: {
    retryLadderMs: [60_000],
    dnsRetryLadderMs: [60_000],
    deliveryTimeoutMs: 10_000,
    batchWindowMs: 1_000,
    userAgent: 'Canvass-Webhooks/bench',
    secretOverlapMs: 0,
  },
};
const block = async (n: number) => {
  for (let g = 0; g < n; g++) {
    const subs = Array.from({ length: group }, () => ({
      caller: null,
      input: { pollId, answers: [{ slideId, value: 'Because it is fast' }] },
    }));
    const out = await submitGroup(deps, subs);
    if (!out.every((o) => o.ok && o.value.complete)) throw new Error(`a submission failed: ${JSON.stringify(out)}`);
  }
};
await block(Math.ceil(groups * 0.3)); // warm-up: JIT, plans, the connection
const pgStart = postgresSnapshot();
const nodeStart = process.cpuUsage();
await block(groups);
const node = process.cpuUsage(nodeStart);
const n = group * groups;
console.log(
  JSON.stringify({ postgresUs: (postgresTicksSince(pgStart) * 10_000) / n, nodeUs: (node.user + node.system) / n }),
);
await database.close();
