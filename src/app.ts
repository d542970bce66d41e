// buildApp returns the fastify instance without listening: main.ts listens, tests too.
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { fastifyRequestHandler } from '@trpc/server/adapters/fastify';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { appRouter } from './api/index.ts';
import { schemasJson } from './docs/schemas.ts';
import { closeAnalytics } from './analytics/engine.ts';
import { cubeMeta } from './analytics/meta.ts';
import { AppError, type ErrorCode } from './errors.ts';
import { invitationRoutes } from './invitations/routes.ts';
import { contextFactory, type Deps } from './trpc/context.ts';

const TRPC_PREFIX = '/trpc';

interface RequestTarget {
  path: string;
  batch: boolean;
}

function trpcTarget(url: string): RequestTarget | undefined {
  const parsed = new URL(url, 'http://localhost');
  if (!parsed.pathname.startsWith(`${TRPC_PREFIX}/`)) return undefined;
  return {
    path: decodeURIComponent(parsed.pathname.slice(TRPC_PREFIX.length + 1)),
    batch: parsed.searchParams.get('batch') === '1',
  };
}

/** The tRPC error envelope for errors raised before tRPC sees the request (body limit, JSON). */
function sendTrpcError(reply: FastifyReply, target: RequestTarget, error: AppError): FastifyReply {
  const httpStatus = getHTTPStatusCodeFromError(error);
  const paths = target.batch ? target.path.split(',') : [target.path];
  const envelopes = paths.map((path) => ({
    error: {
      message: error.message,
      code: TRPC_ERROR_CODES_BY_KEY[error.code],
      data: { code: error.code, errorCode: error.errorCode, httpStatus, path },
    },
  }));
  return reply
    .status(httpStatus)
    .header('content-type', 'application/json')
    .send(JSON.stringify(target.batch ? envelopes : envelopes[0]));
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
      return error.statusCode !== undefined && error.statusCode < 500 ? 'BAD_REQUEST' : 'INTERNAL_ERROR';
  }
}

export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log,
    bodyLimit: deps.config.bodyLimitBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // tRPC batch paths are comma-separated procedure names; allow a long path but not an endless one
    routerOptions: { maxParamLength: 10_000 },
    logController: new LogController({
      disableRequestLogging: deps.config.logLevel !== 'debug' && deps.config.logLevel !== 'trace',
    }),
  });

  app.addHook('onRequest', async (req, reply) => {
    const target = trpcTarget(req.url);
    if (!target) return;
    // A POST without a content type (curl -X POST) is JSON: the method check then answers properly.
    if (req.method === 'POST' && req.headers['content-type'] === undefined) req.headers['content-type'] = 'application/json';
    const mediaType = req.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
    if (req.method === 'POST' && mediaType !== 'application/json') {
      return sendTrpcError(reply, target, new AppError('UNSUPPORTED_MEDIA_TYPE', 'Mutations take a JSON body (Content-Type: application/json)'));
    }
    if (!target.batch) return;
    if (target.path.split(',').length > deps.config.maxBatchSize) {
      return sendTrpcError(reply, target, new AppError('BATCH_TOO_LARGE', `A batch may name at most ${deps.config.maxBatchSize} procedures`));
    }
  });

  app.setErrorHandler((error: FastifyError, req, reply) => {
    const target = trpcTarget(req.url);
    const errorCode = fastifyErrorCode(error);
    if (errorCode === 'INTERNAL_ERROR') req.log.error({ err: error }, 'request failed');
    const appError = new AppError(errorCode, errorCode === 'INTERNAL_ERROR' ? 'Internal server error' : error.message);
    if (target) return sendTrpcError(reply, target, appError);
    return reply.status(getHTTPStatusCodeFromError(appError)).send({ error: { message: appError.message, errorCode } });
  });

  const createContext = contextFactory(deps);
  await app.register(
    async (scope) => {
      // Our own JSON parser: secure-json-parse rejects __proto__ and constructor.prototype keys
      // (prototype poisoning); tRPC then parses the checked text itself. An empty body means
      // "no input" (tRPC clients send none for input-less mutations).
      const checkJson = scope.getDefaultJsonParser('error', 'error');
      scope.removeContentTypeParser('application/json');
      scope.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
        const text = typeof body === 'string' ? body : body.toString('utf8');
        if (text.length === 0) return done(null, undefined);
        checkJson(req, text, (error) => (error ? done(error as FastifyError, undefined) : done(null, text)));
      });
      scope.all('/:path', async (req, reply) => {
        await fastifyRequestHandler({
          router: appRouter,
          createContext,
          maxBatchSize: deps.config.maxBatchSize,
          req,
          res: reply,
          path: (req.params as { path: string }).path,
          onError({ error, path }) {
            if (error.code === 'INTERNAL_SERVER_ERROR') deps.log.error({ err: error.cause ?? error, path }, 'procedure failed');
          },
        });
      });
    },
    { prefix: TRPC_PREFIX },
  );

  await invitationRoutes(app, deps);

  const schemas = schemasJson(appRouter, TRPC_PREFIX);
  app.get('/docs/schemas.json', async (_req, reply) => reply.header('cache-control', 'public, max-age=60').send(schemas));
  // the analytics view, the same object cube.meta answers
  app.get('/docs/cube-schema.json', async (_req, reply) => reply.header('cache-control', 'public, max-age=60').send(cubeMeta));
  // the analytics databases and sandbox processes of this app end with it
  app.addHook('onClose', async () => closeAnalytics(deps));

  return app;
}
