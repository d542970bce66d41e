// buildApp returns the fastify instance without listening: main.ts listens, tests too.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { fastifyRequestHandler } from '@trpc/server/adapters/fastify';
import { appRouter } from './api/index.ts';
import { describeProcedures, schemasJson } from './docs/schemas.ts';
import { llmsTxtRoute } from './docs/llms.ts';
import { docsSiteRoutes } from './docs/site.ts';
import { closeAnalytics } from './analytics/engine.ts';
import { cubeMeta } from './analytics/meta.ts';
import { cubeSessionTokens } from './analytics/sessions.ts';
import type { HttpTimeouts } from './config.ts';
import { AppError, wireCode, type ErrorCode } from './errors.ts';
import { invitationRoutes } from './invitations/routes.ts';
import { createRateLimits, retryAfterSeconds } from './net/rateLimit.ts';
import { mcpRoutes } from './mcp/routes.ts';
import { oauthRoutes } from './oauth/routes.ts';
import { objectProxy } from './storage/proxy.ts';
import { OBJECTS_PREFIX } from './storage/signature.ts';
import { contextFactory } from './trpc/context.ts';
import type { Deps } from './deps.ts';
import { corsPolicy } from './trpc/cors.ts';
import { checkJsonText } from './trpc/json.ts';
import {
  batchProblem,
  bodyProblem,
  queryParameterProblem,
  type RequestTarget,
} from './trpc/requestChecks.ts';

const TRPC_PREFIX = '/trpc';
/** an x-request-id taken as the request's id: a plain token, nothing a log line could be forged with */
const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
// fatal: a malformed byte sequence throws instead of becoming U+FFFD; a leading BOM is dropped
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A body's bytes as text: bytes that are not UTF-8 (a Latin-1 'é') are refused, not read as U+FFFD. */
function utf8Text(body: Buffer | string): string {
  try {
    return utf8.decode(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
  } catch {
    throw new AppError('INVALID_JSON', 'The body is not valid UTF-8 (JSON is UTF-8)');
  }
}

/** The procedure path(s) and mode of a /trpc/* URL; never throws (malformed escapes stay as sent). */
function trpcTarget(url: string): RequestTarget | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url, 'http://localhost');
  } catch {
    return undefined;
  }
  if (!parsed.pathname.startsWith(`${TRPC_PREFIX}/`)) return undefined;
  const rawPath = parsed.pathname.slice(TRPC_PREFIX.length + 1);
  let path = rawPath;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    // a malformed percent escape: the path as sent
  }
  return { path, batch: parsed.searchParams.get('batch') === '1' };
}

/**
 * The tRPC error envelope for errors raised outside tRPC (hooks, body parser, router, HTTP
 * parser): an array, as the specification has every error, with one error per procedure in batch
 * mode and the one error otherwise.
 */
function errorEnvelope(
  target: RequestTarget,
  error: AppError,
): { httpStatus: number; body: string } {
  const wire = wireCode(error.code);
  const paths = target.batch ? target.path.split(',') : [target.path];
  const envelopes = paths.map((path) => ({
    error: {
      message: error.message,
      code: wire.jsonRpcCode,
      data: { code: wire.code, errorCode: error.errorCode, httpStatus: wire.httpStatus, path },
    },
  }));
  return { httpStatus: wire.httpStatus, body: JSON.stringify(envelopes) };
}

function sendTrpcError(reply: FastifyReply, target: RequestTarget, error: AppError): FastifyReply {
  const { httpStatus, body } = errorEnvelope(target, error);
  return reply.status(httpStatus).header('content-type', 'application/json').send(body);
}

function fastifyErrorCode(error: FastifyError): ErrorCode {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'PAYLOAD_TOO_LARGE';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'UNSUPPORTED_MEDIA_TYPE';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'INVALID_JSON';
    default:
      if (error instanceof SyntaxError) return 'INVALID_JSON';
      return error.statusCode !== undefined && error.statusCode < 500
        ? 'BAD_REQUEST'
        : 'INTERNAL_ERROR';
  }
}

/** Errors of fastify itself (body parser, router: a malformed URL escape, an endless path) in the envelope. */
function sendFastifyError(
  error: FastifyError | AppError,
  req: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const target = trpcTarget(req.url);
  const errorCode = error instanceof AppError ? error.errorCode : fastifyErrorCode(error);
  if (errorCode === 'INTERNAL_ERROR') req.log.error({ err: error }, 'request failed');
  const appError =
    error instanceof AppError
      ? error
      : new AppError(
          errorCode,
          errorCode === 'INTERNAL_ERROR' ? 'Internal server error' : error.message,
        );
  if (target) return sendTrpcError(reply, target, appError);
  return reply
    .status(wireCode(appError.code).httpStatus)
    .send({ error: { message: appError.message, errorCode } });
}

/** Why the HTTP server gave up on a request it had not finished reading. */
function clientError(
  error: Error & { code?: string },
  maxHeaderBytes: number,
  timeouts: HttpTimeouts,
): AppError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        'REQUEST_TOO_LARGE',
        `The request line and headers are larger than ${maxHeaderBytes} bytes (HTTP_MAX_HEADER_BYTES)`,
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(
        'REQUEST_TIMEOUT',
        `The request did not arrive in time: its headers within ${timeouts.headersTimeoutMs} ms (HTTP_HEADERS_TIMEOUT_MS), all of it within ${timeouts.requestTimeoutMs} ms (HTTP_REQUEST_TIMEOUT_MS)`,
      );
    default:
      return new AppError('BAD_REQUEST', 'The HTTP request is malformed');
  }
}

/**
 * An HTTP request the server cannot parse (above all request line and headers beyond
 * HTTP_MAX_HEADER_BYTES: a query's input travels in its URL) or that did not arrive in time (a
 * slow client). Nothing of the request is known, so the answer is the batch envelope with an
 * empty path, and the connection is closed.
 */
function clientErrorHandler(maxHeaderBytes: number, timeouts: HttpTimeouts) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    answerAndClose(socket, clientError(error, maxHeaderBytes, timeouts), error);
  };
}

/** The batch error envelope written straight to the socket, which is then closed. */
function answerAndClose(socket: Socket, error: AppError, cause?: Error): void {
  const { httpStatus, body } = errorEnvelope({ path: '', batch: true }, error);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${httpStatus} ${STATUS_CODES[httpStatus]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(cause);
}

/**
 * Node bounds every request by the longest any may take, an upload through /objects
 * (HTTP_UPLOAD_TIMEOUT_MS); every other request has HTTP_REQUEST_TIMEOUT_MS from its headers
 * to arrive whole, or is answered 408 REQUEST_TIMEOUT as Node would and closed.
 */
function requestDeadline(timeouts: HttpTimeouts, maxHeaderBytes: number) {
  const timeout = Object.assign(new Error('request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
  return async (req: FastifyRequest): Promise<void> => {
    if (req.raw.complete || req.url.startsWith(`${OBJECTS_PREFIX}/`)) return;
    const timer = setTimeout(() => {
      if (!req.raw.complete && !req.raw.socket.destroyed)
        answerAndClose(req.raw.socket, clientError(timeout, maxHeaderBytes, timeouts));
    }, timeouts.requestTimeoutMs);
    timer.unref();
    req.raw.once('end', () => clearTimeout(timer));
    req.raw.once('close', () => clearTimeout(timer));
  };
}

interface ErrorBody {
  error: { data?: { path?: unknown } };
}

function isErrorBody(value: unknown): value is ErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { error?: unknown }).error === 'object'
  );
}

/**
 * tRPC answers a request it cannot split into calls (procedure types mixed in one batch, a content
 * type it does not read) with one error object without data.path, and an error in single mode with
 * one error object. The envelope is the specification's array for every error: with the path, and
 * in batch mode that error for each procedure.
 */
async function withPaths(target: RequestTarget, payload: unknown): Promise<unknown> {
  if (!(payload instanceof Response) || payload.status < 400) return payload;
  let body: unknown;
  try {
    body = JSON.parse(await payload.clone().text());
  } catch {
    return payload;
  }
  if (!isErrorBody(body)) return payload;
  const { error } = body;
  const paths = target.batch ? target.path.split(',') : [target.path];
  const envelopes = paths.map((path) => ({ error: { ...error, data: { ...error.data, path } } }));
  const headers = new Headers(payload.headers);
  headers.delete('content-length');
  // tRPC sends its unsplit-batch error as text/plain; the envelope is JSON
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify(envelopes), { status: payload.status, headers });
}

/**
 * How often Node looks for requests past HTTP_HEADERS_TIMEOUT_MS or HTTP_REQUEST_TIMEOUT_MS (its
 * default, 30 s, would let a request run that much over): a quarter of the shorter, 1 s at most.
 */
function timeoutCheckInterval(timeouts: HttpTimeouts): number {
  return Math.max(100, Math.min(1000, Math.floor(timeouts.headersTimeoutMs / 4)));
}

// (longer than a function should be, by its reason: it wires the server's hooks, error handlers and
// routes in the order they apply, a container of short handlers)
export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const timeouts = deps.config.http;
  const app = Fastify({
    loggerInstance: deps.log,
    bodyLimit: deps.config.bodyLimitBytes,
    http: {
      // a query's input is in its URL: Node's default of 16 KB is too small for what schemas allow
      maxHeaderSize: deps.config.httpMaxHeaderBytes,
      // slow clients (docs/decisions/slow-clients.md): a request's headers, and all of it, arrive
      // in time or it is answered 408 REQUEST_TIMEOUT and its connection closed
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: Math.max(timeouts.requestTimeoutMs, timeouts.uploadTimeoutMs),
      connectionsCheckingInterval: timeoutCheckInterval(timeouts),
    },
    // fastify sets these on the server after creating it (its default requestTimeout, 0, is none)
    requestTimeout: Math.max(timeouts.requestTimeoutMs, timeouts.uploadTimeoutMs),
    // a connection quiet either way this long (a client that stopped reading its answer) is closed
    connectionTimeout: timeouts.idleTimeoutMs,
    keepAliveTimeout: timeouts.keepAliveTimeoutMs,
    // the client address rate limits count: the peer, or what TRUST_PROXY's proxies forward
    ...(deps.config.trustProxy !== undefined ? { trustProxy: deps.config.trustProxy } : {}),
    clientErrorHandler: clientErrorHandler(deps.config.httpMaxHeaderBytes, timeouts),
    // a malformed percent escape or an endless path: the error envelope, not fastify's own body
    frameworkErrors: sendFastifyError,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // a request's id: the caller's x-request-id when it is a plain token (a proxy's, to follow one
    // call through both logs), else a fresh uuid; sent back as x-request-id on every answer
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_RE.test(given) ? given : randomUUID();
    },
    // tRPC batch paths are comma-separated procedure names; allow a long path but not an endless one
    routerOptions: { maxParamLength: 10_000 },
    logController: new LogController({
      disableRequestLogging: deps.config.logLevel !== 'debug' && deps.config.logLevel !== 'trace',
    }),
  });

  // CORS (src/trpc/cors.ts): off unless CORS_ORIGINS names origins; an allowed preflight is
  // answered here, for every route
  const cors = corsPolicy(deps.config.corsOrigins);
  const procedureTypes = new Map(describeProcedures(appRouter).map((p) => [p.name, p.type]));
  app.addHook('onRequest', requestDeadline(timeouts, deps.config.httpMaxHeaderBytes));
  app.addHook('onRequest', async (req, reply) => {
    // the request's id (its log lines carry it as reqId) goes back to the caller
    void reply.header('x-request-id', req.id);
    cors.decorate(req, reply);
    if (cors.isPreflight(req) && cors.allows(req)) return cors.answerPreflight(reply);
  });
  app.addHook('onSend', async (_req, reply, payload) => {
    cors.keepVary(reply, payload);
    return payload;
  });

  app.addHook('onRequest', async (req, reply) => {
    const target = trpcTarget(req.url);
    if (!target) return;
    // answers are one tenant's data, authorized by x-api-key (a header caches do not know as a
    // credential, unlike Authorization): no cache may keep them, results nor errors
    void reply.header('cache-control', 'no-store');
    // tRPC reads GET (queries) and POST (mutations); HEAD is answered like GET without a body
    // (tRPC itself answers any HEAD 204, even for an unknown procedure or a failing health check;
    // Node already knows the response to a HEAD has no body)
    if (req.method === 'HEAD') req.raw.method = 'GET';
    if (cors.isPreflight(req)) {
      return sendTrpcError(
        reply,
        target,
        new AppError(
          'METHOD_NOT_SUPPORTED',
          `Cross-origin calls from ${String(req.headers.origin).slice(0, 200)} are not allowed (CORS_ORIGINS)`,
        ),
      );
    }
    if (req.method !== 'GET' && req.method !== 'POST') {
      void reply.header('allow', 'GET, POST');
      return sendTrpcError(
        reply,
        target,
        new AppError(
          'METHOD_NOT_SUPPORTED',
          `Unsupported ${req.method}-request: queries take GET, mutations POST`,
        ),
      );
    }
    // The answer is the JSON of the transport rules, always: tRPC would stream a batch as JSONL
    // when asked (trpc-accept or Accept: application/jsonl), sent 200 whatever its errors, with
    // Content-Type application/json for what is not JSON
    delete req.headers['trpc-accept'];
    if (/application\/jsonl/i.test(String(req.headers.accept ?? '')))
      req.headers.accept = 'application/json';
    // A POST without a content type (curl -X POST) is JSON: the method check then answers properly.
    if (req.method === 'POST' && req.headers['content-type'] === undefined)
      req.headers['content-type'] = 'application/json';
    const problem =
      bodyProblem(req) ??
      queryParameterProblem(req, target) ??
      batchProblem(target, deps.config.maxBatchSize, procedureTypes);
    if (problem) return sendTrpcError(reply, target, problem);
  });

  // JSON bodies outside /trpc (POST /invitations/accept) pass the same check as a mutation's:
  // the same messages for malformed JSON and prototype-poisoning keys, bytes that are UTF-8
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      const text = utf8Text(body);
      done(null, text.length === 0 ? undefined : checkJsonText(text, 'body'));
    } catch (error) {
      done(error as AppError, undefined);
    }
  });

  app.setErrorHandler(sendFastifyError);
  // a /trpc URL no route matches (`/trpc/user/currentUser`): the envelope's PROCEDURE_NOT_FOUND
  app.setNotFoundHandler(async (req, reply) => {
    const target = trpcTarget(req.url);
    if (!target)
      return reply.status(404).send({
        message: `Route ${req.method}:${req.url} not found`,
        error: 'Not Found',
        statusCode: 404,
      });
    return sendTrpcError(
      reply,
      target,
      new AppError('PROCEDURE_NOT_FOUND', `No procedure found on path "${target.path}"`),
    );
  });

  // rate limits (src/net/rateLimit.ts): counted per procedure call by the procedure chain
  const limits = createRateLimits(deps.config.rateLimits, deps.pool, deps.config.oauth);
  // OAuth 2.0 sign-in (src/oauth): the authorization server and its pages; the API takes its bearer tokens
  const oauth = await oauthRoutes(app, deps, limits);
  // embed sessions (src/analytics/sessions.ts): their rules, applied by the procedure chain
  const createContext = contextFactory(deps, {
    limits,
    bearer: oauth.apiPrincipal,
    sessions: cubeSessionTokens,
  });
  // the tool server for AI assistants (src/mcp): POST /mcp, its own token audience
  await mcpRoutes(app, deps, { oauth, limits });
  await app.register(
    async (scope) => {
      // Our own JSON parser: keys that could poison prototypes (__proto__, constructor.prototype)
      // are refused, as in a query's input (checkJsonText); tRPC then parses the checked text
      // itself. An empty body means "no input" (tRPC clients send none for input-less mutations).
      scope.removeContentTypeParser('application/json');
      scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
        const target = trpcTarget(req.url);
        try {
          const text = utf8Text(body);
          if (text.length === 0) return done(null, undefined);
          checkJsonText(text, 'body', target?.batch ? target.path.split(',').length : undefined);
          done(null, text);
        } catch (error) {
          done(error as AppError, undefined);
        }
      });
      scope.addHook('onSend', async (req, _reply, payload) => {
        const target = trpcTarget(req.url);
        return target ? withPaths(target, payload) : payload;
      });
      scope.all('/:path', async (req, reply) => {
        await fastifyRequestHandler({
          router: appRouter,
          createContext,
          maxBatchSize: deps.config.maxBatchSize,
          req,
          res: reply,
          path: (req.params as { path: string }).path,
          // the status follows data.httpStatus (the specification's, src/errors.ts): that of the
          // errors when all calls agree, 207 when a batch mixes results of different statuses; a
          // call refused by a rate limit adds Retry-After, the longest wait of the batch's refusals
          responseMeta({ data, errors, eagerGeneration }) {
            if (eagerGeneration || errors.length === 0) return {};
            const statuses = new Set(
              data.map((r) => ('error' in r ? r.error.data.httpStatus : 200)),
            );
            const status = statuses.size === 1 ? [...statuses][0]! : 207;
            const waits = errors.map(retryAfterSeconds).filter((s) => s !== undefined);
            return waits.length === 0
              ? { status }
              : { status, headers: new Headers({ 'retry-after': String(Math.max(...waits)) }) };
          },
          onError({ error, path }) {
            // req.log: the line carries the request's id, the x-request-id the caller was sent
            if (error.code === 'INTERNAL_SERVER_ERROR')
              req.log.error({ err: error.cause ?? error, path }, 'procedure failed');
          },
        });
      });
    },
    { prefix: TRPC_PREFIX },
  );

  await invitationRoutes(app, deps, limits);
  // {PUBLIC_URL}/objects/*: the default install's object store, behind a signature check
  await objectProxy(app, deps);

  const schemas = schemasJson(appRouter, TRPC_PREFIX);
  app.get('/docs/schemas.json', async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=60').send(schemas),
  );
  // the analytics view, the same object cube.meta answers
  app.get('/docs/cube-schema.json', async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=60').send(cubeMeta),
  );
  app.get(
    '/docs/llms.txt',
    llmsTxtRoute(appRouter, () => oauth.urls()),
  );
  // GET / (where the printed base URL leads), /docs and its pages
  docsSiteRoutes(app, () => oauth.urls().issuer);
  // the analytics databases and sandbox processes of this app end with it
  app.addHook('onClose', async () => closeAnalytics(deps));

  return app;
}
