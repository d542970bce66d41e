// A small client that speaks the wire protocol exactly as the specification's transport rules
// say, so tests see what any HTTP client sees. Typed from the app router (test/helpers/
// procedures.ts): `query` and `mutate` take known procedure names and give typed answers; `call`
// and `raw` take anything, for the sweeps and hostile input.
import type { ErrorCode, SpecCode } from '../../src/errors.ts';
import type { InputArg, MutationPath, OutputOf, QueryPath } from './procedures.ts';

export interface WireResponse<T = unknown> {
  status: number;
  body: T;
}

export interface TrpcErrorBody {
  message: string;
  code: number;
  data: {
    code: SpecCode;
    errorCode: ErrorCode;
    httpStatus: number;
    path?: string;
    fields?: { path: string; message: string }[];
    details?: Record<string, unknown>;
  };
}

// data is loosely typed on failure so that tests can read a result they have just asserted
export type Outcome<T> =
  | { ok: true; data: T; error?: undefined; status: number }
  | { ok: false; error: TrpcErrorBody; data?: any; status: number };

/** What a test calls procedures through, over HTTP (TrpcClient) or in process (test/helpers/handler.ts). */
export interface TestClient {
  /** a query, by its known name, with its typed input; the answer typed as the wire carries it */
  query<P extends QueryPath>(path: P, ...input: InputArg<P>): Promise<Outcome<OutputOf<P>>>;
  mutate<P extends MutationPath>(path: P, ...input: InputArg<P>): Promise<Outcome<OutputOf<P>>>;
  /** a known query with input tsc does not check (invalid or hostile input); the answer untyped */
  queryUnchecked<P extends QueryPath>(path: P, input?: unknown): Promise<Outcome<any>>;
  mutateUnchecked<P extends MutationPath>(path: P, input?: unknown): Promise<Outcome<any>>;
  /** any name, any input, either method: unknown procedures, wrong methods, hostile input */
  call(method: 'GET' | 'POST', path: string, input?: unknown): Promise<Outcome<any>>;
  with(headers: Record<string, string>): TestClient;
}

/**
 * The HTTP client's looser typing: procedure names checked, input and answer not (yet) typed.
 * Most HTTP tests predate the typed client; the handler harness is typed throughout.
 */
export interface LooseClient {
  query<P extends QueryPath>(path: P, input?: unknown): Promise<Outcome<any>>;
  mutate<P extends MutationPath>(path: P, input?: unknown): Promise<Outcome<any>>;
  queryUnchecked<P extends QueryPath>(path: P, input?: unknown): Promise<Outcome<any>>;
  mutateUnchecked<P extends MutationPath>(path: P, input?: unknown): Promise<Outcome<any>>;
  call(method: 'GET' | 'POST', path: string, input?: unknown): Promise<Outcome<any>>;
  with(headers: Record<string, string>): LooseClient;
}

export class TrpcClient implements LooseClient {
  constructor(
    readonly baseUrl: string,
    readonly headers: Record<string, string>,
  ) {}

  with(headers: Record<string, string>): TrpcClient {
    return new TrpcClient(this.baseUrl, { ...this.headers, ...headers });
  }

  /** GET in batch mode (the documented default), one procedure. */
  query<P extends QueryPath>(path: P, input?: unknown): Promise<Outcome<any>> {
    return this.get(path, input);
  }

  /** POST in batch mode, one procedure. */
  mutate<P extends MutationPath>(path: P, input?: unknown): Promise<Outcome<any>> {
    return this.post(path, input);
  }

  queryUnchecked<P extends QueryPath>(path: P, input?: unknown): Promise<Outcome<any>> {
    return this.get(path, input);
  }

  mutateUnchecked<P extends MutationPath>(path: P, input?: unknown): Promise<Outcome<any>> {
    return this.post(path, input);
  }

  /** Calls a procedure with the right method, whichever it is. */
  call(method: 'GET' | 'POST', path: string, input?: unknown): Promise<Outcome<any>> {
    return method === 'GET' ? this.get(path, input) : this.post(path, input);
  }

  private async get<T>(path: string, input: unknown): Promise<Outcome<T>> {
    const qs =
      input === undefined
        ? 'batch=1'
        : `batch=1&input=${encodeURIComponent(JSON.stringify({ 0: input }))}`;
    const res = await this.raw('GET', `/trpc/${path}?${qs}`);
    return unwrap<T>(res);
  }

  private async post<T>(path: string, input: unknown): Promise<Outcome<T>> {
    const res = await this.raw(
      'POST',
      `/trpc/${path}?batch=1`,
      input === undefined ? undefined : JSON.stringify({ 0: input }),
    );
    return unwrap<T>(res);
  }

  async raw(
    method: string,
    pathAndQuery: string,
    body?: string,
    headers: Record<string, string> = {},
  ): Promise<WireResponse<any>> {
    const res = await fetch(this.baseUrl + pathAndQuery, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...this.headers,
        ...headers,
      },
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
  if (item && typeof item === 'object' && 'error' in item)
    return { ok: false, error: item.error as TrpcErrorBody, status: res.status };
  if (item && typeof item === 'object' && 'result' in item)
    return { ok: true, data: item.result.data as T, status: res.status };
  throw new Error(`not a tRPC response (${res.status}): ${JSON.stringify(res.body).slice(0, 500)}`);
}
