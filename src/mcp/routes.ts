// POST /mcp: the tool server over streamable HTTP, stateless (a new McpServer and transport for
// each request, so any process answers any call and nothing leaks between callers). The caller is
// authenticated here, before the SDK sees the request: a bearer token issued for the tool server's
// resource (RFC 8707: the API's tokens are refused) or an API key with x-organization-id.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { appRouter } from '../api/index.ts';
import { credentialsFromHeaders, type Credentials, type Principal } from '../auth/principal.ts';
import { AppError, wireCode } from '../errors.ts';
import type { RateLimits } from '../net/rateLimit.ts';
import type { OAuthServer } from '../oauth/routes.ts';
import { principalForToken } from '../oauth/tokens.ts';
import { MCP_WRITE_SCOPE } from '../oauth/urls.ts';
import { createContextInner } from '../trpc/context.ts';
import type { Deps } from '../deps.ts';
import { createCallerFactory } from '../trpc/init.ts';
import { endpointCatalog } from './catalog.ts';
import { registerTools, type ToolContext } from './tools.ts';
import { originProblem } from './origin.ts';
import { dryRun } from './dryRun.ts';
import { recordToolCall } from './conversation.ts';

export const MCP_PATH = '/mcp';
const createCaller = createCallerFactory(appRouter);

/** A JSON-RPC error answered before the SDK sees the request (no request id is known yet). */
function refuse(reply: FastifyReply, error: AppError, challenge?: string): FastifyReply {
  const wire = wireCode(error.code);
  if (challenge) void reply.header('www-authenticate', challenge);
  return reply
    .status(wire.httpStatus)
    .header('cache-control', 'no-store')
    .send({
      jsonrpc: '2.0',
      error: {
        code: -32001,
        message: error.message,
        data: { code: wire.code, errorCode: error.errorCode },
      },
      id: null,
    });
}

type Caller = Record<string, unknown>;

/** Calls a procedure by its dotted name on a tRPC caller. */
function callByName(caller: Caller, name: string, input: unknown): Promise<unknown> {
  const fn = name.split('.').reduce<unknown>((node, part) => (node as Caller)[part], caller) as (
    input: unknown,
  ) => Promise<unknown>;
  return fn(input);
}

// (longer than a function should be, by its reason: it registers the MCP routes, a container of
// their handlers)
export async function mcpRoutes(
  app: FastifyInstance,
  deps: Deps,
  opts: { oauth: OAuthServer; limits: RateLimits },
): Promise<void> {
  const { oauth, limits } = opts;
  const catalog = endpointCatalog(appRouter);

  /** The caller, or a 401 already sent (with the challenge that points at the resource metadata). */
  const authenticate = async (
    req: FastifyRequest,
    reply: FastifyReply,
  ): Promise<
    { principal: Principal; credentials: Credentials; writeAccess: boolean } | undefined
  > => {
    let credentials: Credentials;
    try {
      credentials = credentialsFromHeaders(req.headers, req.raw.rawHeaders);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      refuse(reply, error, oauth.challenge('mcp', 'invalid_token'));
      return undefined;
    }
    if (credentials.organizationId !== undefined)
      credentials.organizationId = credentials.organizationId.toLowerCase();
    if (credentials.apiKey === undefined && credentials.bearerToken === undefined) {
      refuse(
        reply,
        new AppError(
          'AUTH_REQUIRED',
          'Missing or invalid Authorization header: sign in (OAuth) or send x-api-key with x-organization-id',
        ),
        oauth.challenge('mcp'),
      );
      return undefined;
    }
    try {
      if (credentials.bearerToken !== undefined) {
        const info = await oauth.verify(credentials.bearerToken, oauth.urls().mcpResource);
        return {
          principal: principalForToken(info),
          credentials,
          writeAccess: info.scopes.includes(MCP_WRITE_SCOPE),
        };
      }
      const ctx = createContextInner(deps, credentials, undefined, { address: req.ip });
      // API keys are read-only here: write access is granted by a person, at sign-in
      return { principal: await ctx.authenticate(), credentials, writeAccess: false };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      refuse(
        reply,
        error,
        oauth.challenge('mcp', credentials.bearerToken !== undefined ? 'invalid_token' : undefined),
      );
      return undefined;
    }
  };

  app.post(MCP_PATH, async (req, reply) => {
    const problem = originProblem(req, oauth.urls().issuer, deps.config.corsOrigins);
    if (problem) return refuse(reply, problem);
    const who = await authenticate(req, reply);
    if (!who) return reply;
    const { principal, credentials, writeAccess } = who;
    // the procedures run as over HTTP: the same context, with the principal already verified
    const callerOf = (callDeps: Deps) =>
      createCaller(
        createContextInner(callDeps, credentials, undefined, {
          address: req.ip,
          limits,
          bearer: async () => principal,
        }),
      ) as unknown as Caller;
    const caller = callerOf(deps);
    const toolContext: ToolContext = {
      db: deps.pool,
      catalog,
      principal,
      organizationId: credentials.organizationId,
      writeAccess,
      mcpResource: oauth.urls().mcpResource,
      call: (name, input) => callByName(caller, name, input),
      dryRun: (name, input) =>
        dryRun(deps, name, (dryDeps) => callByName(callerOf(dryDeps), name, input)),
      timeoutMs: deps.config.mcp.timeoutMs,
      maxRows: deps.config.mcp.maxRows,
      // cube.queryPoll itself waits CUBE_ASYNC_WAIT_MS for the answer; this is only a breather
      pollIntervalMs: 100,
      // a call whose record fails is still answered: the failure is logged
      record: (call, organizationId) =>
        recordToolCall(deps.pool, principal, organizationId, call).catch((error: unknown) =>
          req.log.error({ err: error, tool: call.tool }, 'recording a tool call failed'),
        ),
    };
    const server = new McpServer({ name: 'royalty-engine', version: '1.0.0' });
    registerTools(server, toolContext);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    // the SDK writes the answer itself: the headers hooks gave the reply (x-request-id, CORS) go along
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value as string | string[]);
    reply.raw.setHeader('cache-control', 'no-store');
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req.raw, reply.raw, req.body);
  });

  // no server-sent streams and no sessions (stateless): GET and DELETE are not offered
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: MCP_PATH,
      handler: async (_req, reply) =>
        reply
          .status(405)
          .header('allow', 'POST')
          .send({
            jsonrpc: '2.0',
            error: {
              code: -32000,
              message: `${method} is not supported: the tool server answers POST only (stateless)`,
            },
            id: null,
          }),
    });
  }
}
