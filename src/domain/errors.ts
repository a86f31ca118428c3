/** Error codes of the public API (README.md, "API overview"). Only http/ maps them to status codes. */
export type ErrorCode =
  | 'validation_failed'
  | 'invalid_url'
  | 'pos_file_upload'
  | 'unauthenticated'
  | 'plan_required'
  | 'role_forbidden'
  | 'not_found'
  | 'limit_reached'
  | 'not_synthetic'
  | 'immutable_field'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'unavailable';

export type FieldError = { path: string; message: string };

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (what: string) => new DomainError('not_found', `${what} not found`);

/** An object key as one step of a FieldError path (RFC 6901: `~` and `/` escaped). */
export const pointerStep = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

export function invalid(path: string, message: string): DomainError {
  return new DomainError('validation_failed', `${path}: ${message}`, [{ path, message }]);
}

/**
 * What went wrong, in words. Some errors carry no message of their own: a connection refused on
 * every address of a name (an AggregateError) says it through the errors it holds.
 */
export function describeError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  if (e.message) return e.message;
  if (e instanceof AggregateError && e.errors.length) return [...new Set(e.errors.map(describeError))].join('; ');
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : e.name;
}
