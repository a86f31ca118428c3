import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../../domain/errors.js';
import { idPattern, type IdPrefix } from '../../domain/ids.js';
import { STATUS } from '../problem.js';

/** A request object: unknown top-level fields are an error, not silently ignored. */
export const Strict = <T extends TProperties>(props: T, opts: { description?: string } = {}): TObject<T> =>
  Type.Object(props, { ...opts, additionalProperties: Type.Never() as unknown as boolean });

/** A settings object: unknown keys are dropped (README, API overview). */
export const Lenient = <T extends TProperties>(props: T, opts: { description?: string } = {}): TObject<T> =>
  Type.Object(props, { ...opts, additionalProperties: false });

/** An object keyed by a pattern; keys that do not match are an error. */
export const Keyed = <T extends TSchema>(pattern: string, value: T, maxProperties: number) =>
  Type.Unsafe<Record<string, T['static']>>({
    type: 'object',
    patternProperties: { [pattern]: value },
    additionalProperties: { not: {} },
    maxProperties,
  });

export const Id = (prefix: IdPrefix) => Type.String({ pattern: idPattern(prefix), description: `a ${prefix}_ id` });
export const AnyId = Type.String({ minLength: 1, maxLength: 100 });

/**
 * A list's paging: its cursor is the id of the row a page ended on, so anything else is refused
 * (a 400 naming startCursor) rather than read as a position and answered with a wrong page.
 */
export const pageQuery = (cursor: IdPrefix) => ({
  startCursor: Type.Optional(
    Type.String({ pattern: idPattern(cursor), description: `the endCursor of the page before (a ${cursor}_ id)` }),
  ),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
});

export const Color = Type.String({ pattern: '^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', description: '#rgb or #rrggbb' });
export const ShortText = (max = 200) => Type.String({ maxLength: max });
export const httpsUrl = (description = 'a public https:// URL') =>
  Type.String({ minLength: 1, maxLength: 2048, description });
export const HttpsUrl = httpsUrl();
export const Email = Type.String({
  format: 'email',
  maxLength: 254,
  description:
    'An email address: internationalised ones (RFC 6531) are taken, and so is a name at a host without dots (`owner@localhost`). Compared without case, a domain in Unicode or in ASCII (punycode) naming one address.',
});
export const DateTime = Type.String({ format: 'date-time' });

export const Literals = <T extends string>(...values: T[]) => Type.Union(values.map((v) => Type.Literal(v)));

// ---- Answers ----------------------------------------------------------------------------------
// Fastify writes an answer with fast-json-stringify when its route declares a schema for the
// status: properties the schema does not declare are dropped, the others are coerced to their
// declared type. Every field an answer carries is declared here, with its type.

/** An instant in an answer: a Date is written as its ISO 8601 text (toISOString). */
export const Instant = Type.Unsafe<Date | string>({ type: 'string', format: 'date-time' });

export const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});

/** An object whose keys are the caller's (metadata, a payload): written as it is, whatever it holds. */
export const FreeForm = (description?: string) =>
  Type.Object({}, { additionalProperties: true, ...(description ? { description } : {}) });

/** A string from a fixed list, written without checking it against the list. */
export const StringEnum = <T extends string>(values: readonly T[], opts: { description?: string } = {}) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts });

/** One page of a list (cursor paging): pass endCursor as startCursor for the next. */
export const Page = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    hasNextPage: Type.Boolean(),
    endCursor: Nullable(Type.String({ description: 'the startCursor of the next page; null on an empty page' })),
  });

export const Data = <T extends TSchema>(data: T) => Type.Object({ data });

/** An answer that may carry the account's signing secret: only the call that created it, once. */
export const DataWithSecret = <T extends TSchema>(data: T) =>
  Type.Object({
    data,
    signingSecret: Type.Optional(
      Type.String({ description: "the account's signing secret, present only on the call that created it" }),
    ),
  });

/** Keywords that only validate: an answer is described by its types, never refused by them. */
const VALIDATION_ONLY = new Set([
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minProperties',
  'maxProperties',
  'uniqueItems',
  'default',
]);

type Node = Record<string | symbol, unknown>;
const isNode = (v: unknown): v is Node => v !== null && typeof v === 'object' && !Array.isArray(v);
const refusesAll = (v: unknown) => isNode(v) && isNode(v.not) && Object.keys(v.not).length === 0;

function outgoing(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(outgoing);
  if (!isNode(node)) return node;
  const out: Node = {};
  // TypeBox's own marks (Kind, Optional) go along: an object built from these properties
  // still knows which are optional.
  for (const sym of Object.getOwnPropertySymbols(node)) out[sym] = node[sym];
  const branches = node.anyOf;
  if (Array.isArray(branches) && branches.every((b) => isNode(b) && typeof b.const === 'string')) {
    // A union of literals: one string enum, written without a branch-by-branch check.
    const { anyOf: _a, ...rest } = node;
    return outgoing({ ...rest, type: 'string', enum: branches.map((b) => (b as Node).const) });
  }
  const pattern = isNode(node.patternProperties) ? Object.values(node.patternProperties) : [];
  for (const [key, value] of Object.entries(node)) {
    if (VALIDATION_ONLY.has(key)) continue;
    if (key === 'format' && value !== 'date-time') continue;
    // Item counts describe a tuple; elsewhere they only validate.
    if ((key === 'minItems' || key === 'maxItems') && !Array.isArray(node.items)) continue;
    if (key === 'properties' && isNode(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, outgoing(v)]));
    } else if (key === 'patternProperties') {
      // A keyed object (Keyed): its keys were checked on the way in; any key goes out.
      if (pattern.length !== 1) out[key] = outgoing(value);
    } else if (key === 'additionalProperties') {
      if (pattern.length === 1 && refusesAll(value)) out[key] = outgoing(pattern[0]);
      // A request object refusing unknown fields (Strict) answers exactly its fields; a settings
      // object dropping them on the way in (Lenient) answers whatever it holds.
      else if (value === false) out[key] = true;
      else if (!refusesAll(value)) out[key] = outgoing(value);
    } else out[key] = outgoing(value);
  }
  return out;
}

/**
 * A request schema as an answer's: the same fields and types, without the checks that only
 * validate (lengths, patterns, ranges, formats other than date-time). fast-json-stringify checks
 * a union's branches against their schema to pick one, and a stored value must never fail that.
 * Settings objects (Lenient) answer every key they hold; Keyed objects any key.
 */
export const Outgoing = <T extends TSchema>(schema: T): T => outgoing(schema) as T;

/** The problem document (RFC 9457) every 4xx and 5xx carries. */
export const ProblemDocument = Type.Object(
  {
    type: Type.String({ description: 'a URI reference naming the problem type: /problems/<code>' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: StringEnum([...(Object.keys(STATUS) as ErrorCode[]), 'internal_error']),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
        description: 'the fields at fault: a JSON pointer into the body, or query:/name, header:name',
      }),
    ),
  },
  { title: 'Problem', description: 'A problem document (RFC 9457)' },
);

const problems = {
  description: 'A problem document (RFC 9457)',
  content: { 'application/problem+json': { schema: ProblemDocument } },
};

/** A route's answers: its success schemas by status, and problem documents for 4xx and 5xx. */
export const Answers = <T extends Record<number, TSchema>>(ok: T) => ({ ...ok, '4xx': problems, '5xx': problems });
