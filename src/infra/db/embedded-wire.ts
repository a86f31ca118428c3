/**
 * PostgreSQL's wire protocol for the embedded database's thread (embedded-thread.ts): a statement
 * goes to PGlite as one buffer (Parse, Bind, Describe, Execute, Sync) and its answer is read with
 * node-postgres's own parser and type parsers, so rows, parameters and errors are exactly what
 * the PostgreSQL driver gives. PGlite's `query` makes six calls into PostgreSQL per statement
 * and parses every answer into its own messages, copying each field into an ArrayBuffer before
 * decoding it; this is one call, and the answer's bytes are parsed once (docs/performance.md).
 */
import { serialize } from 'pg-protocol';
import { Parser } from 'pg-protocol/dist/parser.js';
import type {
  BackendMessage,
  CommandCompleteMessage,
  DataRowMessage,
  RowDescriptionMessage,
} from 'pg-protocol/dist/messages.js';
import { prepareValue } from 'pg/lib/utils.js';
import type { ThreadResult } from './embedded-protocol.js';
import { typeParsers } from './type-parsers.js';

const SYNC = serialize.sync();
const DESCRIBE_PORTAL = serialize.describe({ type: 'P' });
const EXECUTE = serialize.execute({});

/**
 * One statement with parameters, in the extended protocol; the server infers their types.
 * `prepared`: a named statement, parsed (and given its name) only when `parse` is set, and
 * otherwise bound to the one parsed before.
 */
export function statementMessage(
  sql: string,
  params: readonly unknown[],
  prepared?: { name: string; parse: boolean },
): Buffer {
  return Buffer.concat([
    ...(prepared?.parse === false ? [] : [serialize.parse({ text: sql, name: prepared?.name })]),
    serialize.bind({
      statement: prepared?.name,
      values: params as unknown[],
      valueMapper: (v: unknown) => prepareValue(v),
    }),
    DESCRIBE_PORTAL,
    EXECUTE,
    SYNC,
  ]);
}

/** Forgets a named statement; closing a name that was never parsed is no error. */
export function closeStatementMessage(name: string): Buffer {
  return Buffer.concat([serialize.close({ type: 'S', name }), SYNC]);
}

/** Statements without parameters, possibly several (migrations), in the simple protocol. */
export function scriptMessage(sql: string): Buffer {
  return serialize.query(sql);
}

const AFFECTING = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY']);

/**
 * The results of one answer (its bytes as they came, in chunks), one per statement; throws the
 * first error the server sent.
 */
export function readAnswer(chunks: readonly Buffer[]): ThreadResult[] {
  const results: ThreadResult[] = [];
  let names: string[] = [];
  let parsers: ((v: string) => unknown)[] = [];
  let rows: Record<string, unknown>[] = [];
  let error: Record<string, unknown> | undefined;
  const parser = new Parser();
  const onMessage = (msg: BackendMessage) => {
    switch (msg.name) {
      case 'rowDescription': {
        const fields = (msg as RowDescriptionMessage).fields;
        names = fields.map((f) => f.name);
        parsers = fields.map((f) => typeParsers.getTypeParser(f.dataTypeID, 'text') as (v: string) => unknown);
        break;
      }
      case 'dataRow': {
        const values = (msg as DataRowMessage).fields;
        const row: Record<string, unknown> = {};
        for (let i = 0; i < values.length; i++) {
          const v = values[i];
          row[names[i]!] = v === null || v === undefined ? null : parsers[i]!(v);
        }
        rows.push(row);
        break;
      }
      case 'commandComplete': {
        const tag = (msg as CommandCompleteMessage).text;
        const command = tag.split(' ', 1)[0]!;
        const n = Number(tag.slice(tag.lastIndexOf(' ') + 1));
        results.push({ rows, affectedRows: AFFECTING.has(command) ? n : undefined, command });
        rows = [];
        break;
      }
      case 'emptyQuery':
        results.push({ rows: [], affectedRows: undefined });
        break;
      case 'error': {
        // The server's fields; `name` and `length` are the parser's own.
        const { name: _name, length: _length, ...fields } = msg as unknown as Record<string, unknown>;
        error ??= { ...fields, message: (msg as unknown as Error).message };
        break;
      }
    }
  };
  for (const chunk of chunks) parser.parse(chunk, onMessage);
  // The server's error, its fields (code, constraint, ...) on it as node-postgres gives them.
  if (error) throw Object.assign(new Error(String(error.message)), error);
  return results;
}
