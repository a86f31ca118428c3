import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/http/app.js';

/**
 * The API's routes as its own OpenAPI document lists them, so that tests built on this list
 * cover a route added later without being told about it. Also: the problem-document contract
 * every 4xx keeps, and minimal schema-valid samples for building base requests.
 */

export type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: unknown;
  required?: string[];
  items?: Schema | Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  const?: unknown;
  enum?: unknown[];
  not?: Schema;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  nullable?: boolean;
};

export type Parameter = { in: string; name: string; required?: boolean; schema: Schema };

/** A method `app.inject` takes. */
export type InjectMethod = NonNullable<InjectOptions['method']>;

export type ApiRoute = {
  method: InjectMethod;
  path: string;
  tags: string[];
  /** Answers without a key (`security: []`, or a key optional: an empty requirement `{}` among them). */
  isPublic: boolean;
  query: Parameter[];
  body?: Schema;
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of GET /openapi.json. */
export async function apiRoutes(app: App): Promise<ApiRoute[]> {
  type Operation = {
    parameters?: Parameter[];
    requestBody?: { content?: Record<string, { schema: Schema }> };
    security?: unknown[];
    tags?: string[];
  };
  const doc = (await app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, Operation>>;
  };
  const out: ApiRoute[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!METHODS.includes(method)) continue;
      out.push({
        method: method.toUpperCase() as InjectMethod, // one of METHODS
        path,
        tags: op.tags ?? [],
        isPublic:
          Array.isArray(op.security) &&
          (op.security.length === 0 || op.security.some((r) => Object.keys(r as object).length === 0)),
        query: (op.parameters ?? []).filter((p) => p.in === 'query'),
        body: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return out;
}

export const routeName = (r: Pick<ApiRoute, 'method' | 'path'>) => `${r.method} ${r.path}`;

/** A parameter the caller must send (a required one with a default is optional in practice). */
export const mustSend = (p: Parameter) => !!p.required && p.schema.default === undefined;

export function branches(s: Schema): Schema[] | undefined {
  return s.anyOf ?? s.oneOf;
}

/** The schema's type, ignoring a null branch. */
export function typeOf(s: Schema): string | undefined {
  const alts = branches(s)?.filter((b) => b.type !== 'null');
  if (alts?.length === 1) return typeOf(alts[0]!);
  return Array.isArray(s.type) ? s.type[0] : s.type;
}

/**
 * The smallest value a schema accepts: required properties only, first enum/branch (or a
 * preferred literal), `fill(name, schema)` for strings it knows (ids, URLs…).
 */
export function sample(
  s: Schema,
  fill: (name: string, s: Schema) => unknown,
  name = '',
  prefer: readonly string[] = [],
): unknown {
  const alts = branches(s);
  if (alts) {
    const preferred = alts.find((b) => prefer.includes(b.const as string) || prefer.includes(b.enum?.[0] as string));
    return sample(preferred ?? alts.find((b) => b.type !== 'null') ?? alts[0]!, fill, name, prefer);
  }
  const given = fill(name, s);
  if (given !== undefined) return given;
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum[0];
  if (s.default !== undefined) return s.default;
  switch (Array.isArray(s.type) ? s.type[0] : s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of s.required ?? []) out[key] = sample(s.properties?.[key] ?? {}, fill, key, prefer);
      return out;
    }
    case 'array': {
      const item = Array.isArray(s.items) ? s.items[0] : s.items;
      return item ? Array.from({ length: s.minItems ?? 0 }, () => sample(item, fill, name, prefer)) : [];
    }
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'string':
      return 'x'.repeat(Math.max(s.minLength ?? 1, 1));
    default:
      return 'x';
  }
}

/** What is wrong with an answer: any 5xx, and every 4xx a problem document. */
export function contractIssues(res: LightMyRequestResponse): string[] {
  const issues: string[] = [];
  const status = res.statusCode;
  if (status >= 500) issues.push(`answered ${status}: ${res.body.slice(0, 300)}`);
  const type = String(res.headers['content-type'] ?? '');
  if (status < 400) {
    if (type.startsWith('application/json')) {
      try {
        JSON.parse(res.body);
      } catch {
        issues.push(`a ${status} whose JSON body does not parse: ${res.body.slice(0, 100)}`);
      }
    }
    return issues;
  }
  if (!type.startsWith('application/problem+json')) issues.push(`content-type ${type}`);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    return [...issues, `body is not JSON: ${res.body.slice(0, 100)}`];
  }
  for (const f of ['type', 'title', 'detail', 'code'])
    if (typeof body[f] !== 'string' || !body[f]) issues.push(`problem field ${f} missing`);
  if (body.status !== status) issues.push(`problem status ${String(body.status)} ≠ ${status}`);
  if (status === 400) {
    const errors = body.errors as { path?: unknown; message?: unknown }[] | undefined;
    if (!Array.isArray(errors) || errors.length === 0) issues.push('400 without errors[]');
    else if (errors.some((e) => typeof e.path !== 'string' || typeof e.message !== 'string'))
      issues.push(`errors[] entry without path/message: ${JSON.stringify(errors).slice(0, 200)}`);
  }
  return issues;
}
