/**
 * The dashboard's API types, generated from the OpenAPI document the server serves at
 * GET /openapi.json (built by @fastify/swagger from the route schemas in src/http).
 *
 *   tsx scripts/openapi.ts          writes web/src/api/schema.d.ts
 *   tsx scripts/openapi.ts --check  fails when web/src/api/schema.d.ts differs from a fresh generation
 *
 * The app is built in-process and asked for the document with inject(): nothing listens and no
 * database is opened.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from 'openapi-typescript';
import type { Deps } from '../src/app/ports/index.js';
import { buildApp } from '../src/http/app.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TARGET = path.join(ROOT, 'web', 'src', 'api', 'schema.d.ts');
const HEADER = `${COMMENT_HEADER}// Source: GET /openapi.json. Regenerate with \`npm run gen:web-types\`; \`npm run check:web-types\` fails when it is stale.\n\n`;

async function openapiDocument(): Promise<OpenAPI3> {
  // Routes use their dependencies only while answering a request, and the document's own
  // route is outside the API: no store, clock or mailer is needed.
  const app = await buildApp({
    deps: {} as Deps,
    submissions: { submit: () => Promise.reject(new Error('not served')) },
    logger: false,
  });
  try {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    if (res.statusCode !== 200)
      throw new Error(`GET /openapi.json answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    return res.json() as OpenAPI3;
  } finally {
    await app.close();
  }
}

/**
 * `additionalProperties: { not: {} }` (how the route schemas refuse unknown fields) rewritten as
 * the equivalent `false`: openapi-typescript reads only `false` as "no other keys" and would
 * otherwise add an index signature of unknown to every request object.
 */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    const refusesAll = key === 'additionalProperties' && isEmptyNot(value);
    out[key] = refusesAll ? false : closeObjects(value);
  }
  return out;
}

const isEmptyNot = (v: unknown): boolean => {
  if (v === null || typeof v !== 'object' || Object.keys(v).length !== 1) return false;
  const not = (v as { not?: unknown }).not;
  return not !== null && typeof not === 'object' && Object.keys(not).length === 0;
};

/**
 * Every schema with a `title` (the answers' Poll, Slide, Webhook, Problem…) moved to
 * components.schemas under that title, and each place it was written refers to it: the
 * dashboard names the types (components['schemas']['Poll']) and they are generated once, not
 * once per operation. Two different schemas under one title are an error.
 */
function hoistTitled(doc: OpenAPI3): OpenAPI3 {
  const named = new Map<string, { schema: unknown; text: string }>();
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const out = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, visit(value)]));
    const title = (node as { title?: unknown }).title;
    if (typeof title !== 'string') return out;
    const text = JSON.stringify(out);
    const seen = named.get(title);
    if (seen && seen.text !== text) throw new Error(`two different schemas are titled ${JSON.stringify(title)}`);
    if (!seen) named.set(title, { schema: out, text });
    return { $ref: `#/components/schemas/${title}` };
  };
  // Only the operations: the document's info has a title too.
  const paths = visit(doc.paths) as OpenAPI3['paths'];
  const schemas = Object.fromEntries([...named].map(([title, { schema }]) => [title, schema]));
  return { ...doc, paths, components: { ...doc.components, schemas: { ...doc.components?.schemas, ...schemas } } };
}

async function generate(): Promise<string> {
  const doc = hoistTitled(closeObjects(await openapiDocument()) as OpenAPI3);
  const ast = await openapiTS(doc, { silent: true });
  return HEADER + astToString(ast);
}

const DIFF_LINES = 60;

/** The start of `diff -u committed fresh`, or nothing where diff is not installed. */
function diffExcerpt(committed: string, fresh: string): string {
  const res = spawnSync('diff', ['-u', '--label', 'committed', '--label', 'generated', committed, fresh], {
    encoding: 'utf8',
  });
  if (res.error || !res.stdout) return '';
  const lines = res.stdout.split('\n');
  const more = lines.length > DIFF_LINES ? `\n… ${lines.length - DIFF_LINES} more lines` : '';
  return `${lines.slice(0, DIFF_LINES).join('\n')}${more}\n`;
}

async function main(): Promise<void> {
  const fresh = await generate();
  const relative = path.relative(ROOT, TARGET);
  if (!process.argv.includes('--check')) {
    mkdirSync(path.dirname(TARGET), { recursive: true });
    writeFileSync(TARGET, fresh);
    console.log(`wrote ${relative}`);
    return;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'canvass-web-types-'));
  try {
    const temp = path.join(dir, 'schema.d.ts');
    writeFileSync(temp, fresh);
    if (existsSync(TARGET) && readFileSync(TARGET, 'utf8') === fresh) {
      console.log(`${relative} matches GET /openapi.json`);
      return;
    }
    const what = existsSync(TARGET)
      ? `is out of date with the API's OpenAPI document:\n${diffExcerpt(TARGET, temp)}`
      : 'is missing.\n';
    console.error(
      `${relative} ${what}` +
        `The route schemas in src/http changed: run \`npm run gen:web-types\`, fix what \`npx tsc -p web/tsconfig.json\` then reports, and commit ${relative}.`,
    );
    process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
