import type { ErrorCode, FieldError } from '../domain/errors.js';

/** The one place that knows which status code each error code carries. */
export const STATUS: Record<ErrorCode, number> = {
  validation_failed: 400,
  invalid_url: 400,
  pos_file_upload: 400,
  unauthenticated: 401,
  plan_required: 403,
  role_forbidden: 403,
  not_found: 404,
  limit_reached: 409,
  not_synthetic: 409,
  immutable_field: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
};

const TITLES: Record<ErrorCode, string> = {
  validation_failed: 'The request is not valid',
  invalid_url: 'The URL is not a public https:// URL',
  pos_file_upload: 'Point-of-sale polls cannot hold file-upload slides',
  unauthenticated: 'Authentication required',
  plan_required: 'Plan does not include API access',
  role_forbidden: 'Your role may not do this',
  not_found: 'Not found',
  limit_reached: 'Limit reached',
  not_synthetic: 'The poll is not synthetic',
  immutable_field: 'The field cannot change',
  conflict: 'Conflict',
  payload_too_large: 'Request body too large',
  unsupported_media_type: 'Unsupported content type',
  rate_limited: 'Too many requests',
  unavailable: 'Temporarily unavailable',
};

export type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode | 'internal_error';
  errors?: FieldError[];
};

export function problem(code: ErrorCode, detail: string, errors?: FieldError[]): Problem {
  return {
    type: `/problems/${code}`,
    title: TITLES[code],
    status: STATUS[code],
    detail,
    code,
    ...(errors?.length ? { errors } : {}),
  };
}

export const internalProblem = (): Problem => ({
  type: '/problems/internal_error',
  title: 'Internal error',
  status: 500,
  detail: 'something went wrong on our side; it has been logged',
  code: 'internal_error',
});
