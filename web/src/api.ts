// The one client of the Canvass API: sends the bearer key and turns problem documents
// (RFC 9457, application/problem+json) into ApiError messages a person can read.

export type FieldError = { path: string; message: string };

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

export type Api = {
  get<T>(path: string, query?: Query): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
  del<T>(path: string, query: Query): Promise<T>;
  /** A non-JSON answer (the CSV export) as a blob, with the file name the server suggests. */
  download(path: string, query: Query): Promise<{ blob: Blob; filename: string }>;
};

type Problem = { title?: string; detail?: string; code?: string; status?: number; errors?: FieldError[] };

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** The message of a problem document: its detail (or title), plus the fields it names when the detail does not. */
export function problemMessage(p: Problem, status: number): string {
  const main = p.detail || p.title || `The server answered ${status}`;
  const fields = (p.errors ?? []).filter((e) => !main.includes(e.path)).map((e) => `${e.path} ${e.message}`);
  return fields.length ? `${main} (${fields.join('; ')})` : main;
}

async function toError(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  let p: Problem = {};
  try {
    p = JSON.parse(text) as Problem;
  } catch {
    p = { detail: text.slice(0, 200) || res.statusText };
  }
  return new ApiError(problemMessage(p, res.status), res.status, p.code, p.errors ?? []);
}

export type ApiOptions = {
  base?: string;
  /**
   * Called when an answer carries the account's signing secret: the call that created it
   * (a first webhook, or a first trigger-webhook logic rule on a poll or slide) returns it once.
   */
  onSigningSecret?: (secret: string) => void;
};

export function createApi(key: string, { base = '', onSigningSecret }: ApiOptions = {}): Api {
  async function send(method: string, path: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (err) {
      throw new ApiError(`Could not reach Canvass: ${err instanceof Error ? err.message : String(err)}`, 0, 'network');
    }
    if (!res.ok) throw await toError(res);
    return res;
  }
  const json = async <T>(res: Response) => {
    const body = (await res.json()) as T & { signingSecret?: unknown };
    if (typeof body.signingSecret === 'string' && onSigningSecret) onSigningSecret(body.signingSecret);
    return body as T;
  };
  return {
    get: async (path, query) => json(await send('GET', withQuery(path, query))),
    post: async (path, body) => json(await send('POST', path, body)),
    del: async (path, query) => json(await send('DELETE', withQuery(path, query))),
    async download(path, query) {
      const res = await send('GET', withQuery(path, query));
      const disposition = res.headers.get('content-disposition') ?? '';
      const filename = /filename="([^"]+)"/.exec(disposition)?.[1] ?? 'export.csv';
      return { blob: await res.blob(), filename };
    },
  };
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
