/** Messages between the embedded database's thread (embedded-thread.ts) and its client. */
export type ThreadInit = {
  /** PGlite's data directory; null keeps the database in memory. */
  dataDir: string | null;
  /**
   * PGlite's compiled WASM (a WebAssembly.Module, whose type the build's type libraries lack),
   * shared by every database of the process instead of compiled per thread.
   */
  pgliteWasmModule?: object;
};

export type ThreadRequest =
  | { id: number; op: 'query'; sql: string; params: unknown[] }
  | { id: number; op: 'exec'; sql: string }
  | { id: number; op: 'close' };

export type ThreadResult = {
  rows: unknown[];
  affectedRows: number | undefined;
  /** The command tag's verb: a COMMIT in a failed transaction answers ROLLBACK. */
  command?: string | undefined;
};

/** A database error's message and its own fields (code, detail, constraint, ...). */
export type ThreadError = { message: string; code?: string; [field: string]: unknown };

/** Id 0 answers the start: the database is ready, or failed to open. */
export type ThreadAnswer =
  { id: number; ok: true; results: ThreadResult[] } | { id: number; ok: false; error: ThreadError };
