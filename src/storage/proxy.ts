// {PUBLIC_URL}/objects/...: the default install's object store as clients reach it. Every request
// is checked first (src/storage/signature.ts): only a valid SigV4 signature made with the
// install's secret gets through, and then only with what was signed (its path, query and signed
// headers, plus the body's length) to the embedded s3rver on its unix socket. Downloads come back
// as attachments the browser does not sniff. With a configured S3 there is no proxy: clients talk
// to that S3 directly.
import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { AppError, type ErrorCode } from '../errors.ts';
import type { Deps } from '../deps.ts';
import type { EmbeddedAccess, ObjectStore } from './objectStore.ts';
import { OBJECTS_PREFIX, verifySignature } from './signature.ts';

/** What the store's answer may carry back to the client; anything else of s3rver's stays behind. */
const ANSWER_HEADERS = [
  'content-type',
  'content-length',
  'content-range',
  'accept-ranges',
  'etag',
  'last-modified',
  'content-disposition',
];
/**
 * The signed response-* overrides of a presigned GET the proxy applies itself: s3rver takes them
 * from signed requests only, and gets none (its own signature code cannot check SigV4).
 */
const OVERRIDES = new Map([
  ['response-content-disposition', 'content-disposition'],
  ['response-content-type', 'content-type'],
]);
/** Read-only conditions a download may add unsigned (as S3 allows): they change nothing. */
const READ_HEADERS = [
  'range',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
];

function refuse(reply: FastifyReply, errorCode: ErrorCode, message: string): FastifyReply {
  const error = new AppError(errorCode, message);
  return reply
    .status(getHTTPStatusCodeFromError(error))
    .send({ error: { message, code: error.code, errorCode } });
}

function pick(headers: IncomingHttpHeaders, names: string[]): OutgoingHttpHeaders {
  return Object.fromEntries(
    names.filter((n) => headers[n] !== undefined).map((n) => [n, headers[n]]),
  );
}

/** One request to s3rver over its socket, with a body (a PUT's) streamed from its spooled file. */
function forward(
  access: EmbeddedAccess,
  method: string,
  target: string,
  headers: OutgoingHttpHeaders,
  body?: Readable,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const upstream = httpRequest(
      {
        socketPath: access.socketPath,
        method,
        path: target,
        headers: { ...headers, host: 'localhost' },
      },
      resolve,
    );
    upstream.on('error', reject);
    if (body) body.on('error', (error) => upstream.destroy(error)).pipe(upstream);
    else upstream.end();
  });
}

/**
 * The upload's bytes in a file of the spool, once all `length` of them arrived; undefined when
 * the client went away before. s3rver writes straight into the object's file and never closes it
 * when its request ends early: an interrupted PUT would leave a truncated object and an open file
 * for good, so it only ever gets whole bodies.
 */
async function spool(
  access: EmbeddedAccess,
  body: IncomingMessage,
  length: number,
): Promise<string | undefined> {
  const file = path.join(access.spoolDir, randomUUID());
  try {
    await pipeline(body, createWriteStream(file, { flags: 'wx', mode: 0o600 }));
    if ((await stat(file)).size === length) return file;
  } catch {
    // the client closed the connection mid-upload (a premature close)
  }
  await rm(file, { force: true });
  return undefined;
}

/** The headers of a PUT's upload: its length is required (S3's rule), a chunked body is not taken. */
function uploadLength(req: FastifyRequest): string | undefined {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] === undefined &&
    typeof length === 'string' &&
    /^\d{1,15}$/.test(length)
    ? length
    : undefined;
}

/**
 * The store's answer as the client gets it. A file served from the service's own origin is never
 * rendered by a browser: a download (whatever content type it was uploaded with), not sniffed,
 * and sandboxed if opened anyway.
 */
function answerHeaders(
  method: string,
  answer: IncomingMessage,
  overrides: [string, string][],
): OutgoingHttpHeaders {
  const out = pick(answer.headers, ANSWER_HEADERS);
  if ((answer.statusCode ?? 500) < 300)
    for (const [name, value] of overrides)
      if (OVERRIDES.has(name)) out[OVERRIDES.get(name)!] = value;
  out['x-content-type-options'] = 'nosniff';
  out['content-security-policy'] = "default-src 'none'; sandbox";
  out['cache-control'] = 'private, no-store';
  if (
    (method === 'GET' || method === 'HEAD') &&
    !/^attachment\b/i.test(String(out['content-disposition'] ?? ''))
  )
    out['content-disposition'] = 'attachment';
  return out;
}

async function handle(
  store: ObjectStore,
  access: EmbeddedAccess,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (!store.publicUrl)
    return refuse(reply, 'OBJECT_SIGNATURE_INVALID', 'the object store has no public address yet');
  const verdict = await verifySignature(
    { method: req.method, url: req.raw.url ?? '', headers: req.headers },
    access.signing,
    store.publicUrl,
  );
  if (!verdict.ok) return refuse(reply, verdict.errorCode, verdict.message);
  const upload = req.method === 'PUT' || req.method === 'POST';
  // a header-signed request's payload hash would have to be checked against the body: uploads take presigned URLs
  if (upload && !verdict.presigned)
    return refuse(
      reply,
      'OBJECT_REQUEST_UNSUPPORTED',
      'uploads take a presigned URL, not an Authorization header',
    );
  const headers: OutgoingHttpHeaders = { ...verdict.headers };
  let spooled: string | undefined;
  if (upload) {
    const length = uploadLength(req);
    if (length === undefined)
      return refuse(
        reply,
        'OBJECT_REQUEST_UNSUPPORTED',
        'an upload needs a Content-Length header (a chunked body is not taken)',
      );
    headers['content-length'] = length;
    spooled = await spool(access, req.raw, Number(length));
    if (!spooled) return refuse(reply, 'BAD_REQUEST', 'the upload ended before its Content-Length');
  } else {
    Object.assign(headers, pick(req.headers, READ_HEADERS));
  }
  const overrides = verdict.query.filter(([name]) => name.startsWith('response-'));
  const query = new URLSearchParams(
    verdict.query.filter(([name]) => !name.startsWith('response-')),
  ).toString();
  let answer: IncomingMessage;
  try {
    answer = await forward(
      access,
      req.method,
      query ? `${verdict.path}?${query}` : verdict.path,
      headers,
      spooled ? createReadStream(spooled) : undefined,
    );
  } finally {
    if (spooled) await rm(spooled, { force: true });
  }
  const out = answerHeaders(req.method, answer, overrides);
  void reply.status(answer.statusCode ?? 502).headers(out);
  if (req.method === 'HEAD') {
    answer.resume();
    return reply.send();
  }
  return reply.send(answer);
}

/**
 * Registers {PUBLIC_URL}/objects/* for the default install's store (nothing for a configured S3),
 * and, once the API listens, tells the store the address its presigned URLs are for: PUBLIC_URL,
 * else the address listened on.
 */
export async function objectProxy(
  app: FastifyInstance,
  deps: Pick<Deps, 'config' | 'store'>,
): Promise<void> {
  const { store } = deps;
  const access = store.embedded;
  if (!access) return;
  app.addHook('onListen', async () =>
    store.publishAt(deps.config.publicUrl ?? app.listeningOrigin),
  );
  await app.register(
    async (scope) => {
      // the body is the object's bytes, streamed to the store as they come: no parser reads it
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
      scope.route({
        method: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'],
        url: '/*',
        exposeHeadRoute: false,
        handler: (req, reply) => handle(store, access, req, reply),
      });
    },
    { prefix: OBJECTS_PREFIX },
  );
}
