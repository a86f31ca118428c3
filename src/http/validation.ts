import AjvModule, { type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';

// Both packages are CommonJS with a default export under .default when loaded from ESM.
const Ajv = AjvModule.default;
const addFormats = formatsModule.default;
import type { FastifySchemaCompiler } from 'fastify';

function ajv(opts: Options) {
  const instance = new Ajv({ allErrors: true, strict: false, useDefaults: true, ...opts });
  addFormats(instance);
  return instance;
}

/** NUL, or half of a surrogate pair: PostgreSQL stores neither in text or jsonb. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const pointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** JSON pointer of the first string (value or key) that storage cannot hold, if any. */
function unstorable(data: unknown): string | undefined {
  const stack: [unknown, string][] = [[data, '']];
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (UNSTORABLE.test(value)) return path || '/';
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, `${path}/${i}`]));
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const p = `${path}/${pointer(k.slice(0, 200))}`;
        if (UNSTORABLE.test(k)) return p;
        stack.push([v, p]);
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
    const at = unstorable(data);
    if (at === undefined) return true;
    check.errors = [{ instancePath: at, schemaPath: '#', keyword: 'unstorable', params: {}, message: 'must not contain NUL characters or unpaired surrogates' }];
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
 * Strings with NUL or unpaired surrogates are a 400, not a storage error.
 */
export function validatorCompiler(): FastifySchemaCompiler<object> {
  const body = ajv({ coerceTypes: false, removeAdditional: true });
  const query = ajv({ coerceTypes: 'array', removeAdditional: false });
  return ({ schema, httpPart }) => guarded((httpPart === 'body' ? body : query).compile(schema));
}
