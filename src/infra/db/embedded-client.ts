import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { ThreadAnswer, ThreadError, ThreadRequest, ThreadResult } from './embedded-protocol.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The part of PGlite the dialect uses, answered by PGlite on a thread of its own. */
export type EmbeddedDb = {
  query(sql: string, params: readonly unknown[]): Promise<ThreadResult>;
  /** Parameterless text, which may hold several statements (migrations): one result each. */
  exec(sql: string): Promise<ThreadResult[]>;
  close(): Promise<void>;
  /** Why its thread stopped, when it stopped on its own (a WebAssembly abort, say); never after close(). */
  failure(): Error | undefined;
  /** Its thread: ended by terminate() as a crash would end it. */
  readonly thread: Pick<Worker, 'threadId' | 'terminate'>;
};

/**
 * The thread is gone (a WebAssembly abort, say): a connection failure (08006), so requests
 * answer 503 storage unavailable, as when PostgreSQL cannot be reached.
 */
export class EmbeddedDatabaseStopped extends Error {
  readonly code = '08006';
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'EmbeddedDatabaseStopped';
  }
}

/** PGlite's error, rebuilt with its fields (code, detail, constraint, ...) on this side. */
export class EmbeddedDatabaseError extends Error {
  code?: string;
  constructor(fields: ThreadError) {
    super(fields.message);
    Object.assign(this, fields);
    this.name = 'DatabaseError';
  }
}

// Compiled once per process and shared with each database's thread: compiling PGlite's 9 MB
// of WASM again per database would add its time to every open.
// (The WebAssembly global is in Node but not in the type libraries this project compiles with.)
const wasmApi = (globalThis as unknown as { WebAssembly: { compile(b: Uint8Array): Promise<object> } }).WebAssembly;
let wasm: Promise<object> | undefined;
const require = createRequire(import.meta.url);
const compiledWasm = () =>
  (wasm ??= readFile(require.resolve('@electric-sql/pglite/pglite.wasm'))
    .then((b) => wasmApi.compile(b))
    .catch((e: unknown) => {
      wasm = undefined; // the next open tries again
      throw e;
    }));

// Under the test runner this module is TypeScript source, and so is the thread's entry: the
// thread then registers tsx's loader (found from the working directory, the repository's root
// when tests run) before importing it.
const source = import.meta.url.endsWith('.ts');
const entry = new URL(source ? './embedded-thread.ts' : './embedded-thread.js', import.meta.url);
const startThread = (workerData: unknown) =>
  source
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`,
        { eval: true, workerData },
      )
    : new Worker(entry, { workerData });

/**
 * Opens PGlite (in `dataDir`, or in memory when null) on a worker thread. The thread keeps the
 * process alive only while a statement is outstanding; if it dies, every outstanding and later
 * call fails with the reason.
 */
export async function openEmbedded(
  dataDir: string | null,
  opts: { onStopped?: (e: Error) => void } = {},
): Promise<EmbeddedDb> {
  const worker = startThread({ dataDir, pgliteWasmModule: await compiledWasm() });
  const pending = new Map<number, { resolve(r: ThreadResult[]): void; reject(e: Error): void }>();
  let next = 1;
  let dead: Error | undefined;
  let crashed: Error | undefined;
  let ready = false;
  let closing = false;

  const settle = (a: ThreadAnswer) => {
    const p = pending.get(a.id);
    if (!p) return;
    pending.delete(a.id);
    if (pending.size === 0) worker.unref();
    if (a.ok) p.resolve(a.results);
    else p.reject(new EmbeddedDatabaseError(a.error));
  };
  const fail = (e: Error) => {
    // Stopped on its own once open, not by close(): said once, after what waited is refused.
    const crash = !dead && ready && !closing;
    dead ??= e;
    for (const p of pending.values()) p.reject(dead);
    pending.clear();
    if (crash) {
      crashed = e;
      opts.onStopped?.(e);
    }
  };
  worker.on('message', settle);
  worker.on('error', (e) =>
    fail(new EmbeddedDatabaseStopped(`the embedded database stopped: ${e.message}`, { cause: e })),
  );
  worker.on('exit', (code) => fail(new EmbeddedDatabaseStopped(`the embedded database stopped (thread exit ${code})`)));

  const answerTo = (id: number) =>
    new Promise<ThreadResult[]>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      worker.ref();
    });
  const call = (req: DistributiveOmit<ThreadRequest, 'id'>): Promise<ThreadResult[]> => {
    if (dead) return Promise.reject(dead);
    const id = next++;
    const answer = answerTo(id);
    try {
      worker.postMessage({ ...req, id });
    } catch (e) {
      // A parameter that cannot be copied to the thread: this statement fails, nothing is sent.
      pending.delete(id);
      if (pending.size === 0) worker.unref();
      return Promise.reject(e);
    }
    return answer;
  };

  // Id 0 is the thread's own answer once PGlite is ready (or failed to start).
  try {
    await answerTo(0);
  } catch (e) {
    await worker.terminate();
    throw e;
  }
  ready = true;
  return {
    failure: () => crashed,
    thread: worker,
    query: async (sql, params) => (await call({ op: 'query', sql, params: params as unknown[] }))[0]!,
    exec: (sql) => call({ op: 'exec', sql }),
    async close() {
      closing = true;
      try {
        if (!dead) await call({ op: 'close' });
      } finally {
        dead ??= new EmbeddedDatabaseStopped('the embedded database is closed');
        await worker.terminate();
      }
    },
  };
}
