// A small client that speaks the wire protocol exactly as the specification's transport rules
// say, so tests see what any HTTP client sees.
export interface WireResponse<T = unknown> {
  status: number;
  body: T;
}

export interface TrpcErrorBody {
  message: string;
  code: number;
  data: { code: string; errorCode: string; httpStatus: number; path?: string; fields?: { path: string; message: string }[] };
}

// data is loosely typed on failure so that tests can read a result they have just asserted
export type Outcome<T> = { ok: true; data: T; error?: undefined; status: number } | { ok: false; error: TrpcErrorBody; data?: any; status: number };

export class TrpcClient {
  constructor(
    readonly baseUrl: string,
    readonly headers: Record<string, string>,
  ) {}

  with(headers: Record<string, string>): TrpcClient {
    return new TrpcClient(this.baseUrl, { ...this.headers, ...headers });
  }

  /** GET in batch mode (the documented default), one procedure. */
  async query<T = any>(path: string, input?: unknown): Promise<Outcome<T>> {
    const qs = input === undefined ? 'batch=1' : `batch=1&input=${encodeURIComponent(JSON.stringify({ 0: input }))}`;
    const res = await this.raw('GET', `/trpc/${path}?${qs}`);
    return unwrap<T>(res);
  }

  /** POST in batch mode, one procedure. */
  async mutate<T = any>(path: string, input?: unknown): Promise<Outcome<T>> {
    const res = await this.raw('POST', `/trpc/${path}?batch=1`, input === undefined ? undefined : JSON.stringify({ 0: input }));
    return unwrap<T>(res);
  }

  /** Calls a procedure with the right method, whichever it is. */
  async call<T = any>(method: 'GET' | 'POST', path: string, input?: unknown): Promise<Outcome<T>> {
    return method === 'GET' ? this.query<T>(path, input) : this.mutate<T>(path, input);
  }

  async raw(method: string, pathAndQuery: string, body?: string, headers: Record<string, string> = {}): Promise<WireResponse<any>> {
    const res = await fetch(this.baseUrl + pathAndQuery, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...this.headers, ...headers },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed };
  }
}

function unwrap<T>(res: WireResponse<any>): Outcome<T> {
  const item = Array.isArray(res.body) ? res.body[0] : res.body;
  if (item && typeof item === 'object' && 'error' in item) return { ok: false, error: item.error as TrpcErrorBody, status: res.status };
  if (item && typeof item === 'object' && 'result' in item) return { ok: true, data: item.result.data as T, status: res.status };
  throw new Error(`not a tRPC response (${res.status}): ${JSON.stringify(res.body).slice(0, 500)}`);
}
