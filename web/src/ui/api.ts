// The one client of the Canvass API: sends the bearer key and turns problem documents
// (RFC 9457, application/problem+json) into ApiError messages a person can read.

import type { AnswerOf, BodyOf, FieldError, JsonPathOf, Method, PathOf, Problem, QueryOf } from '../api/types';
import { deadline, readChunks } from './deadline';

export type { FieldError };

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type Query = Record<string, string | number | boolean | null | undefined>;

/** A route the dashboard calls with `M`: one the API serves, whose answer is JSON. */
export type Route<M extends Method> = JsonPathOf<M>;

/** Query values as forms hold them: an optional parameter may also be null or '', both left out of the URL. */
export type QueryArgs<Q> = { [K in keyof Q]: Q[K] | (undefined extends Q[K] ? null | '' : never) };

/** Paths, query parameters and bodies are checked against the API's OpenAPI document. */
export type Api = {
  get<P extends Route<'get'>>(path: P, query?: QueryArgs<QueryOf<'get', P>>): Promise<AnswerOf<'get', P>>;
  post<P extends Route<'post'>>(path: P, body: BodyOf<'post', P>): Promise<AnswerOf<'post', P>>;
  del<P extends Route<'delete'>>(path: P, query: QueryArgs<QueryOf<'delete', P>>): Promise<AnswerOf<'delete', P>>;
  /**
   * A non-JSON answer (the CSV export) as a blob, with the file name the server suggests;
   * `onBytes` hears how many bytes have arrived so far.
   */
  download<P extends PathOf<'get'>>(
    path: P,
    query: QueryArgs<QueryOf<'get', P>>,
    onBytes?: (received: number) => void,
  ): Promise<{ blob: Blob; filename: string }>;
};

/** A problem document as read: any field may be missing from an answer that is not one (a proxy's error page). */
type ProblemRead = Partial<Problem>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The message of a problem document: its detail (or title), plus the fields it names when the detail does not. */
export function problemMessage(p: ProblemRead, status: number): string {
  const main = p.detail || p.title || `The server answered ${status}`;
  const fields = (p.errors ?? []).filter((e) => !main.includes(e.path)).map((e) => `${e.path} ${e.message}`);
  return fields.length ? `${main} (${fields.join('; ')})` : main;
}

async function toError(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let p: ProblemRead = {};
  try {
    p = JSON.parse(text) as ProblemRead;
  } catch {
    // Not Canvass's own answer (a proxy's error page, say): its status, not its markup.
    const again = res.status >= 500 ? '; try again in a moment' : '';
    p = { detail: `The server answered ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${again}` };
  }
  return new ApiError(problemMessage(p, res.status), res.status, p.code, p.errors ?? []);
}

export type ApiOptions = {
  base?: string;
  /**
   * Called when an answer carries the account's signing secret: the call that created it
   * (a first webhook, or a first trigger-webhook logic rule on a poll or slide) returns it once.
   */
  onSigningSecret?: (secret: string, accountId: string | null) => void;
  /** Called when the API no longer accepts the key (a 401): revoked or withdrawn meanwhile. */
  onUnauthorized?: () => void;
  /**
   * Called on a 404: the key's member may have left the account (removed, or the key withdrawn
   * from it), which the API answers as a missing account or resource.
   */
  onNotFound?: () => void;
};

/**
 * How long a call waits for the server to start answering, and then for each further part of
 * the answer, before it fails: a request that hangs (a stalled proxy, a server under a long
 * pause) ends in an error a person can act on rather than a page left on "Loading…". Far longer
 * than a working server takes (its pages are bounded); an export that keeps arriving may take
 * as long as it takes.
 */
const API_TIMEOUT_S = 30;

/**
 * What the person can do after a call that ended without a readable answer. A change sent may
 * still have been made: say so rather than invite a blind retry.
 */
function nextStep(method: string, answered: Response | undefined): string {
  if (method === 'GET') return 'try again';
  return answered?.ok
    ? 'the change was made, so reload to see it'
    : 'the change may still have been made, so reload before trying again';
}

/** A call that its deadline ended. */
function timedOut(method: string, answered: Response | undefined): ApiError {
  const wait = answered ? `stopped answering for ${API_TIMEOUT_S} s` : `did not answer within ${API_TIMEOUT_S} s`;
  return new ApiError(`Canvass ${wait}; ${nextStep(method, answered)}.`, 0, 'timeout');
}

/** An answer that broke off, or was not the JSON the API sends (a proxy's error page). */
function unreadable(method: string, answered: Response, err: unknown): ApiError {
  const why = err instanceof Error ? err.message : String(err);
  return new ApiError(
    `Canvass's answer (${answered.status}) could not be read: ${why}; ${nextStep(method, answered)}.`,
    answered.status,
    'unreadable',
  );
}

export function createApi(
  key: string,
  { base = '', onSigningSecret, onUnauthorized, onNotFound }: ApiOptions = {},
): Api {
  /** Sends a request and reads its answer with `read`, both under one deadline (API_TIMEOUT_S). */
  async function call<T>(
    method: string,
    path: string,
    body: unknown,
    read: (res: Response, progress: () => void) => Promise<T>,
  ): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const limit = deadline(API_TIMEOUT_S);
    let res: Response | undefined;
    try {
      res = await fetch(base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: limit.signal,
      });
      limit.progress();
      if (res.status === 401) onUnauthorized?.();
      if (res.status === 404) onNotFound?.();
      if (!res.ok) throw await toError(res);
      return await read(res, limit.progress);
    } catch (err) {
      // The deadline first: an error answer whose body stalled comes back as its status alone.
      if (limit.signal.aborted) throw timedOut(method, res);
      if (err instanceof ApiError) throw err;
      if (res) throw unreadable(method, res, err);
      throw new ApiError(`Could not reach Canvass: ${err instanceof Error ? err.message : String(err)}`, 0, 'network');
    } finally {
      limit.clear();
    }
  }
  // A JSON answer is one bounded page: read whole within API_TIMEOUT_S of its headers.
  const json = async <T>(res: Response) => {
    const body = (await res.json()) as T & { signingSecret?: unknown; data?: { accountId?: unknown } };
    // The account it signs for is the one the answer's resource (a webhook, a poll) belongs to.
    const accountId = typeof body.data?.accountId === 'string' ? body.data.accountId : null;
    if (typeof body.signingSecret === 'string' && onSigningSecret) onSigningSecret(body.signingSecret, accountId);
    return body as T;
  };
  return {
    get: async <P extends Route<'get'>>(path: P, query?: QueryArgs<QueryOf<'get', P>>) =>
      call('GET', withQuery(path, query as Query), undefined, json<AnswerOf<'get', P>>),
    post: async <P extends Route<'post'>>(path: P, body: BodyOf<'post', P>) =>
      call('POST', path, body, json<AnswerOf<'post', P>>),
    del: async <P extends Route<'delete'>>(path: P, query: QueryArgs<QueryOf<'delete', P>>) =>
      call('DELETE', withQuery(path, query as Query), undefined, json<AnswerOf<'delete', P>>),
    download: (path, query, onBytes) =>
      call('GET', withQuery(path, query as Query), undefined, async (res, progress) => {
        const disposition = res.headers.get('content-disposition') ?? '';
        const filename = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'export.csv';
        let received = 0;
        const chunks = await readChunks(res.body, (chunk) => {
          progress();
          received += chunk.byteLength;
          onBytes?.(received);
        });
        return { blob: new Blob(chunks, { type: res.headers.get('content-type') ?? '' }), filename };
      }),
  };
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
