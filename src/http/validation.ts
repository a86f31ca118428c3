import AjvModule, { type Options } from 'ajv';
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

/**
 * Bodies are JSON and must carry the right types: no coercion, so "true" is not a boolean.
 * Unknown keys in settings objects (additionalProperties: false) are dropped; request objects
 * mark extras as errors with additionalProperties: {not: {}}.
 * Query strings are text by nature and are coerced.
 */
export function validatorCompiler(): FastifySchemaCompiler<object> {
  const body = ajv({ coerceTypes: false, removeAdditional: true });
  const query = ajv({ coerceTypes: 'array', removeAdditional: false });
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : query).compile(schema);
}
