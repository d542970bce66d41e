// The transport rules a /trpc request is checked against before tRPC reads it (src/app.ts's
// onRequest hook): each check answers the AppError of the first rule the request breaks, or
// undefined. tRPC itself would run such requests with another input than the caller meant, or
// answer them outside the envelope.
import type { FastifyRequest } from 'fastify';
import { AMBIGUOUS_REQUEST } from '../auth/principal.ts';
import { AppError } from '../errors.ts';
import { checkJsonText } from './json.ts';

/** The procedure path(s) of a /trpc request and whether it is a batch. */
export interface RequestTarget {
  path: string;
  batch: boolean;
}

const UTF8_CHARSETS = new Set(['utf-8', 'utf8', 'us-ascii']);
// fatal: a malformed byte sequence throws instead of becoming U+FFFD
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A mutation's body: JSON (RFC 8259: UTF-8), not compressed. A body declared in another charset
 * would be read as UTF-8 and its accented letters stored as U+FFFD; a compressed one would be read
 * as its compressed bytes.
 */
export function bodyProblem(req: FastifyRequest): AppError | undefined {
  if (req.method !== 'POST') return undefined;
  const [mediaType, ...parameters] = (req.headers['content-type'] ?? '')
    .split(';')
    .map((p) => p.trim().toLowerCase());
  if (mediaType !== 'application/json')
    return new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Mutations take a JSON body (Content-Type: application/json)',
    );
  const charset = parameters
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/^"(.*)"$/, '$1');
  if (charset !== undefined && !UTF8_CHARSETS.has(charset))
    return new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Mutations take a JSON body in UTF-8, not ${charset}`,
    );
  const encoding = String(req.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    return new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Mutation bodies are not read compressed (Content-Encoding: ${encoding.slice(0, 40)}): send the JSON as is`,
    );
  }
  return undefined;
}

/**
 * Whether the `input` query parameter percent-decodes to UTF-8. URLSearchParams (tRPC's reader)
 * turns bytes that are not (`%E9`, a Latin-1 'é') into U+FFFD, and the query would run with them.
 */
function inputIsUtf8(url: string): boolean {
  const query = url.slice(url.indexOf('?') + 1);
  if (query === url) return true;
  const raw = query.split('&').find((p) => p.startsWith('input='));
  if (raw === undefined || !raw.includes('%')) return true;
  const bytes = Buffer.from(
    raw.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The query parameters as tRPC reads them (URLSearchParams). */
function searchParams(url: string): URLSearchParams {
  const at = url.indexOf('?');
  return new URLSearchParams(at === -1 ? '' : url.slice(at + 1));
}

/**
 * The query string: a query's `input` is UTF-8 JSON passing the same check as a mutation's body
 * (tRPC reads it the same way; an empty input is none); `input` and `batch` are given once (tRPC
 * reads the first of a repeated parameter, anything on the way may read another); a mutation
 * takes no `input` parameter (tRPC ignores it on a POST, which would run without the input its
 * caller meant).
 */
export function queryParameterProblem(
  req: FastifyRequest,
  target: RequestTarget,
): AppError | undefined {
  if (req.method !== 'POST' && !inputIsUtf8(req.url))
    return new AppError(
      'INVALID_JSON',
      'The input is not valid UTF-8 once percent-decoded (JSON is UTF-8)',
    );
  const params = searchParams(req.url);
  for (const name of ['input', 'batch']) {
    if (params.getAll(name).length > 1)
      return new AppError(
        AMBIGUOUS_REQUEST,
        `The query parameter ${name} was given more than once: give it once`,
      );
  }
  if (req.method === 'POST' && params.has('input')) {
    return new AppError(
      AMBIGUOUS_REQUEST,
      "A mutation's input is its JSON body (POST): the input query parameter is for queries (GET)",
    );
  }
  const input = req.method === 'POST' ? null : params.get('input');
  if (!input) return undefined;
  try {
    checkJsonText(input, 'input', target.batch ? target.path.split(',').length : undefined);
  } catch (error) {
    return error as AppError;
  }
  return undefined;
}

/**
 * A batch names at most `maxBatchSize` procedures, all queries or all mutations: tRPC refuses a
 * mix as a whole with a bare BAD_REQUEST; it is a query sent with POST or a mutation with GET, so
 * METHOD_NOT_SUPPORTED, naming them.
 */
export function batchProblem(
  target: RequestTarget,
  maxBatchSize: number,
  procedureTypes: ReadonlyMap<string, string>,
): AppError | undefined {
  if (!target.batch) return undefined;
  const paths = target.path.split(',');
  if (paths.length > maxBatchSize)
    return new AppError('BATCH_TOO_LARGE', `A batch may name at most ${maxBatchSize} procedures`);
  const kinds = new Map(
    paths.flatMap((p) => (procedureTypes.has(p) ? [[procedureTypes.get(p)!, p] as const] : [])),
  );
  if (kinds.size > 1) {
    return new AppError(
      'METHOD_NOT_SUPPORTED',
      `A batch cannot mix queries and mutations (queries take GET, mutations POST): ${kinds.get('query')} is a query, ${kinds.get('mutation')} a mutation`,
    );
  }
  return undefined;
}
