/**
 * The embedded database's own thread (embedded-client.ts starts it): PGlite runs its queries,
 * WASM and result parsing here, so the main thread keeps serving sockets while it works.
 * One message in, one answer out. PGlite runs its calls one at a time in the order they were
 * made, so statements run in the order sent; the driver lets only one transaction send at once.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import type { ThreadRequest, ThreadAnswer, ThreadInit, ThreadError } from './embedded-protocol.js';

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

async function answer(req: ThreadRequest): Promise<ThreadAnswer> {
  switch (req.op) {
    case 'query': {
      const r = await lite.query(req.sql, req.params);
      return { id: req.id, ok: true, results: [{ rows: r.rows, affectedRows: r.affectedRows, command: r.command }] };
    }
    case 'exec': {
      const rs = await lite.exec(req.sql);
      return {
        id: req.id,
        ok: true,
        results: rs.map((r) => ({ rows: r.rows, affectedRows: r.affectedRows, command: r.command })),
      };
    }
    case 'close':
      await lite.close();
      return { id: req.id, ok: true, results: [] };
  }
}

port.on('message', (req: ThreadRequest) => {
  answer(req).then(
    (a) => port.postMessage(a),
    (e: unknown) => port.postMessage({ id: req.id, ok: false, error: plain(e) } satisfies ThreadAnswer),
  );
});
lite.waitReady.then(
  () => port.postMessage({ id: 0, ok: true, results: [] } satisfies ThreadAnswer),
  (e: unknown) => port.postMessage({ id: 0, ok: false, error: plain(e) } satisfies ThreadAnswer),
);
