/**
 * One side of the submit-ab section, in a process of its own: groups of one-go respondents
 * written with one build's submitGroup on an existing database, after a warm-up. Prints
 * {postgresUs, nodeUs}: CPU per submission of PostgreSQL and of this process.
 *   argv: <dist> <database url> <pollId> <slideId> <group size> <groups>
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { submitGroup as SubmitGroup } from '../dist/app/responses/submit-responses.js';
import { loadBuild } from './build.js';
import { benchDeps, postgresSnapshot, postgresTicksSince } from './lib.js';

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
const build = await loadBuild(dist);
const { submitGroup } = (await import(
  pathToFileURL(path.join(path.resolve(dist), 'app/responses/submit-responses.js')).href
)) as { submitGroup: typeof SubmitGroup };

const database = await build.openDatabase({ databaseUrl: url, dataDir: '', schema: 'check', poolSize: 1 });
const deps = benchDeps(database, build);
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
