import AjvModule, { type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';

// Both packages are CommonJS with a default export under .default when loaded from ESM.
const Ajv = AjvModule.default;
const addFormats = formatsModule.default;
import type { FastifySchemaCompiler } from 'fastify';
import { isMemberAddress } from '../domain/email-address.js';
import { invalid, pointerStep } from '../domain/errors.js';
import { MAX_NESTING } from '../domain/merge.js';
import { UNSTORABLE_TEXT as UNSTORABLE } from '../domain/sanitize.js';

function ajv(opts: Options) {
  const instance = new Ajv({ allErrors: true, strict: false, useDefaults: true, ...opts });
  addFormats(instance);
  // A member's address as the CLI takes it too (internationalised, or at a host without dots),
  // rather than ajv-formats' ASCII-only grammar: one member, one grammar (README, API overview).
  instance.addFormat('email', isMemberAddress);
  return instance;
}

/** Free-form values (metadata, answers) are stored as jsonb and walked recursively later. */
const MAX_DEPTH = MAX_NESTING;
const TEXT = 'must not contain NUL characters or unpaired surrogates';

/** Where a value holds something storage cannot take: such a string (value or key), a number that is not finite, or too deep a nesting. */
function unstorable(data: unknown): { path: string; message: string } | undefined {
  const stack: [unknown, string, number][] = [[data, '', 0]];
  while (stack.length) {
    const [value, path, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) return { path: path || '/', message: TEXT };
    } else if (typeof value === 'number') {
      // JSON reads 1e999 as Infinity, which JSON writes back as null: stored, it would come
      // back as a value of another type than was accepted.
      if (!Number.isFinite(value)) return { path: path || '/', message: 'must be a finite number' };
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_DEPTH) return { path: path || '/', message: `is nested more than ${MAX_DEPTH} levels deep` };
      for (const [k, v] of Object.entries(value)) {
        const p = `${path}/${pointerStep(k.slice(0, 200))}`;
        if (UNSTORABLE.test(k)) return { path: p, message: TEXT };
        stack.push([v, p, depth + 1]);
      }
    }
  }
  return undefined;
}

/** Schema validation, then (on what survived it) a check that every string can be stored. */
function guarded(validate: ValidateFunction) {
  const check = (data: unknown): boolean => {
    const ok = validate(data);
    check.errors = validate.errors ?? null;
    if (!ok) return false;
    const bad = unstorable(data);
    if (bad === undefined) return true;
    check.errors = [
      { instancePath: bad.path, schemaPath: '#', keyword: 'unstorable', params: {}, message: bad.message },
    ];
    return false;
  };
  check.errors = null as ErrorObject[] | null;
  return check;
}

/**
 * Bodies are JSON and must carry the right types: no coercion, so "true" is not a boolean.
 * Unknown keys in settings objects (additionalProperties: false) are dropped; request objects
 * mark extras as errors with additionalProperties: {not: {}}.
 * Query strings are text by nature and are coerced.
 * Strings with NUL or unpaired surrogates, numbers too large for a double (1e999), and values
 * nested deeper than MAX_DEPTH, are a 400, not a storage error, a 500 or a stack overflow.
 */
export function validatorCompiler(): FastifySchemaCompiler<object> {
  const body = ajv({ coerceTypes: false, removeAdditional: true });
  const query = ajv({ coerceTypes: 'array', removeAdditional: false });
  return ({ schema, httpPart }) => guarded((httpPart === 'body' ? body : query).compile(schema));
}

/**
 * A date-time query filter as an instant storage can compare. RFC 3339 (and so the schema)
 * allows a leap second and years 0000 and, through an offset, 10000; a Date holds none of them
 * in a form PostgreSQL or PGlite takes, which used to be a 500.
 */
export function queryInstant(value: string | undefined, param: string): Date | undefined {
  return instantAt(value, `query:/${param}`);
}

/** An inclusive start or exclusive end of a body's window, rounded up to the millisecond. */
export function bodyBound(value: string | undefined, field: string): Date | undefined {
  return roundedUp(instantAt(value, `/${field}`), value);
}

/**
 * A bound as sent, to the millisecond storage keeps: a finer one (`.0005`) is rounded up, where a
 * Date would cut it down, so an exclusive end (or inclusive start) leaves out no row at the
 * millisecond it passes, and takes in none before it.
 */
function roundedUp(at: Date | undefined, value: string | undefined): Date | undefined {
  if (!at || !/\.\d{3}\d*[1-9]/.test(value!)) return at;
  const up = new Date(at.getTime() + 1);
  // The last millisecond of 9999 stays as it is: storage takes no year 10000.
  return up.getUTCFullYear() > 9999 ? at : up;
}

/** An exclusive end of a query window (`createdBefore`), rounded up to the millisecond. */
export function queryEnd(value: string | undefined, param: string): Date | undefined {
  return roundedUp(queryInstant(value, param), value);
}

function instantAt(value: string | undefined, path: string): Date | undefined {
  if (value === undefined) return undefined;
  const at = new Date(value);
  const year = at.getUTCFullYear();
  if (Number.isNaN(at.getTime()) || year < 1 || year > 9999) {
    throw invalid(
      path,
      'must be a date-time from 0001-01-01 to 9999-12-31 UTC, its offset written ±hh:mm, without a leap second',
    );
  }
  return at;
}
