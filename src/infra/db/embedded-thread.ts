/**
 * The embedded database's own thread (embedded-client.ts starts it): PGlite runs its queries,
 * WASM and result parsing here, so the main thread keeps serving sockets while it works.
 * One message in, one answer out, in the order sent (below); the driver lets only one
 * transaction send at once.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import type { ThreadRequest, ThreadAnswer, ThreadInit, ThreadError, ThreadResult } from './embedded-protocol.js';
import { closeStatementMessage, readAnswer, scriptMessage, statementMessage } from './embedded-wire.js';
import { preparedName } from './prepared.js';

const init = workerData as ThreadInit;
const port = parentPort!;
const lite = new PGlite({
  ...(init.dataDir ? { dataDir: init.dataDir } : {}),
  ...(init.pgliteWasmModule ? { pgliteWasmModule: init.pgliteWasmModule as PGliteOptions['pgliteWasmModule'] } : {}),
});

// The error's own fields (code, detail, constraint, ...) survive the trip; its class does not.
function plain(e: unknown): ThreadError {
  const out: ThreadError = { message: e instanceof Error ? e.message : String(e) };
  if (e && typeof e === 'object')
    for (const [k, v] of Object.entries(e))
      if (typeof v === 'string' || typeof v === 'number') (out as Record<string, unknown>)[k] = v;
  return out;
}

// One call into PostgreSQL per request (embedded-wire.ts). The answer's bytes are taken raw,
// which skips PGlite's own parsing of them; each chunk is a view of PostgreSQL's memory, which
// its next write reuses, so it is copied.
async function run(message: Buffer): Promise<ThreadResult[]> {
  const chunks: Buffer[] = [];
  await lite.execProtocolRawStream(message, {
    onRawData: (chunk: Uint8Array) => void chunks.push(Buffer.from(chunk)),
  });
  return readAnswer(chunks);
}

// Statements named by a `prepared:NAME` comment are parsed once per database, as on each
// PostgreSQL connection (prepared.ts): later calls bind the statement parsed before, whose plan
// PostgreSQL keeps under the caller's plan_cache_mode (docs/performance.md). Name → text.
const prepared = new Map<string, string>();

async function query(sql: string, params: unknown[]): Promise<ThreadResult[]> {
  const name = preparedName(sql);
  if (!name) return run(statementMessage(sql, params));
  const known = prepared.get(name);
  if (known !== undefined) {
    if (known !== sql) throw new Error(`the prepared statement "${name}" was already parsed from another text`);
    return run(statementMessage(sql, params, { name, parse: false }));
  }
  try {
    const results = await run(statementMessage(sql, params, { name, parse: true }));
    prepared.set(name, sql);
    return results;
  } catch (e) {
    // The call may have failed after its Parse: forget the name, so that the next call parses it again.
    await run(closeStatementMessage(name)).catch(() => {});
    throw e;
  }
}

async function answer(req: ThreadRequest): Promise<ThreadAnswer> {
  switch (req.op) {
    case 'query':
      return { id: req.id, ok: true, results: (await query(req.sql, req.params)).slice(0, 1) };
    case 'exec':
      return { id: req.id, ok: true, results: await run(scriptMessage(req.sql)) };
    case 'close':
      await lite.close();
      return { id: req.id, ok: true, results: [] };
  }
}

// Requests run one after another in the order they came, each to its end before the next
// starts (the raw calls bypass PGlite's own query lock); none runs once close was asked for.
let tail: Promise<unknown> = lite.waitReady.catch(() => {});
let closing = false;
port.on('message', (req: ThreadRequest) => {
  const closed = closing;
  if (req.op === 'close') closing = true;
  const turn = tail.then((): ThreadAnswer | Promise<ThreadAnswer> => {
    if (!closed) return answer(req);
    if (req.op === 'close') return { id: req.id, ok: true, results: [] };
    // A connection failure, as for a stopped thread (embedded-client.ts): storage unavailable.
    throw Object.assign(new Error('the embedded database is closed'), { code: '08006' });
  });
  tail = turn.catch(() => {});
  turn.then(
    (a) => port.postMessage(a),
    (e: unknown) => port.postMessage({ id: req.id, ok: false, error: plain(e) } satisfies ThreadAnswer),
  );
});
lite.waitReady.then(
  () => port.postMessage({ id: 0, ok: true, results: [] } satisfies ThreadAnswer),
  (e: unknown) => port.postMessage({ id: 0, ok: false, error: plain(e) } satisfies ThreadAnswer),
);
