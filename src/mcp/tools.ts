// The nine tools. Every call of a procedure goes through the tRPC router's createCaller with the
// caller's own context (src/mcp/routes.ts), so roles, API-key scope and tenant rules apply exactly
// as over HTTP. The tool server is read-only unless the person granted write access at sign-in
// (the mcp:write scope): without it svc_api_call runs queries only.
import { TRPCError } from '@trpc/server';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Principal } from '../auth/principal.ts';
import { AppError, wireCode } from '../errors.ts';
import { API_SCOPE, MCP_WRITE_SCOPE } from '../oauth/urls.ts';
import { describeError } from '../trpc/init.ts';
import { scopeAllows } from '../auth/apiKeys.ts';
import type { Queryable } from '../db/pool.ts';
import { organizationAccess } from '../access/organization.ts';
import { roleSatisfies, type OrgRole } from '../access/roles.ts';
import { endpointDetail, endpointLine, searchEndpoints, type Endpoint } from './catalog.ts';
import { bounded } from './bound.ts';
import { refuseDryRun } from './dryRun.ts';
import type { ToolCallRecord } from './conversation.ts';

export interface ToolContext {
  db: Queryable;
  catalog: Map<string, Endpoint>;
  principal: Principal;
  /** x-organization-id, when sent */
  organizationId: string | undefined;
  /** a token with the mcp:write scope: mutations may run */
  writeAccess: boolean;
  /** the tool server's resource, named in the refusal of a mutation */
  mcpResource: string;
  /** runs one procedure in-process with the caller's credentials */
  call(procedure: string, input: unknown): Promise<unknown>;
  /** runs one mutation so, in a transaction rolled back (src/mcp/dryRun.ts): what it would change */
  dryRun(procedure: string, input: unknown): Promise<unknown>;
  timeoutMs: number;
  maxRows: number;
  /** how long svc_query_analytics waits between polls once cube.query's window has passed */
  pollIntervalMs: number;
  /** records the call in the activity log, in its chat of the organization (src/mcp/conversation.ts) */
  record(call: ToolCallRecord, organizationId: string): Promise<void>;
}

interface Membership {
  id: string;
  name: string;
  role: OrgRole;
}
interface CurrentUser {
  id: string;
  email: string;
  organizations: Membership[];
}

const organizationField = z
  .uuid()
  .optional()
  .describe(
    'The organization; default: x-organization-id, else the only one the caller belongs to',
  );

/** The tool's answer as text: JSON, arrays capped at maxRows with a note of what was left out. */
function answer(value: unknown, maxRows: number): CallToolResult {
  const { value: kept, omitted } = bounded(value, maxRows);
  const note =
    omitted > 0
      ? `\n\n(${omitted} rows left out: results keep at most ${maxRows} rows per list; narrow the query or page with limit/offset)`
      : '';
  return { content: [{ type: 'text', text: JSON.stringify(kept, null, 1) + note }] };
}

/** An error as the API would report it: data.code, data.errorCode and the message. */
function failure(error: unknown): { result: CallToolResult; errorCode: string } {
  const trpc =
    error instanceof TRPCError
      ? error
      : new AppError('INTERNAL_ERROR', 'Internal server error', { cause: error });
  const { errorCode, message, fields } = describeError(trpc);
  const body = {
    error: { code: wireCode(trpc.code).code, errorCode, message, ...(fields ? { fields } : {}) },
  };
  return {
    result: { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] },
    errorCode,
  };
}

type ToolArgs = {
  organizationId?: unknown;
  input?: Record<string, unknown>;
  procedure?: unknown;
  dryRun?: unknown;
};

/**
 * Runs a tool body within the request's time limit; any error becomes a tool error. Data answers
 * (`rows`) are bounded; the service's own descriptions (procedures, permissions, the view) are not.
 * The call is then recorded in the activity log, whatever its outcome.
 */
async function run(
  ctx: ToolContext,
  tool: string,
  args: ToolArgs,
  body: () => Promise<unknown>,
  rows: boolean,
): Promise<CallToolResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new AppError(
            'TOOL_TIMEOUT',
            `The tool call did not finish within ${ctx.timeoutMs / 1000} s (MCP_TIMEOUT_MS); for a long analytics query use cube.queryAsync and cube.queryPoll`,
          ),
        ),
      ctx.timeoutMs,
    );
  });
  let result: CallToolResult;
  let outcome = 'ok';
  try {
    result = answer(await Promise.race([body(), timeout]), rows ? ctx.maxRows : Infinity);
  } catch (error) {
    ({ result, errorCode: outcome } = failure(error));
  } finally {
    clearTimeout(timer);
  }
  const organizationId = await recordedOrganization(ctx, args);
  if (organizationId !== undefined) {
    const procedure = typeof args.procedure === 'string' ? args.procedure : undefined;
    await ctx.record(
      {
        tool,
        ...(procedure ? { procedure } : {}),
        ...(args.dryRun === true ? { dryRun: true } : {}),
        outcome,
      },
      organizationId,
    );
  }
  return result;
}

/**
 * The organization a call is recorded in: the one it named (or its procedure's input named), the
 * header's, else the caller's only one; undefined when that is none the caller may act in (an
 * outsider's id, a disabled membership, several organizations and none chosen): nothing is
 * written into an organization the caller does not belong to.
 */
async function recordedOrganization(ctx: ToolContext, args: ToolArgs): Promise<string | undefined> {
  const named = [args.organizationId, args.input?.organizationId].find(
    (v): v is string => typeof v === 'string',
  );
  try {
    const chosen = await chooseOrganization(ctx, named);
    const p = ctx.principal;
    if (p.apiKey && !p.apiKey.organizationIds.includes(chosen.toLowerCase())) return undefined;
    return (await organizationAccess(ctx.db, p, chosen)).id;
  } catch {
    return undefined;
  }
}

async function currentUser(ctx: ToolContext): Promise<CurrentUser> {
  return (await ctx.call('user.currentUser', undefined)) as CurrentUser;
}

/** The organization a call is about: named, the header's, else the caller's only one. */
async function chooseOrganization(ctx: ToolContext, given: string | undefined): Promise<string> {
  const named = given ?? ctx.organizationId;
  if (named !== undefined) return named;
  const { organizations } = await currentUser(ctx);
  if (organizations.length === 1) return organizations[0]!.id;
  if (organizations.length === 0)
    throw new AppError('ORGANIZATION_REQUIRED', 'No organization was found for the user');
  throw new AppError(
    'ORGANIZATION_REQUIRED',
    `Multiple organizations were found for the user (${organizations.map((o) => `${o.name}: ${o.id}`).join(', ')}): select one with the x-organization-id header or organizationId`,
  );
}

/** Whether the caller's role in the organization (organizationAccess's, platform roles included) reaches a declared minimum. */
function roleReaches(minRole: string | null, role: OrgRole, principal: Principal): boolean {
  if (minRole === 'none' || minRole === 'any') return true;
  if (minRole === 'c2_superadmin') return principal.platformRole === 'c2_superadmin';
  return minRole !== null && roleSatisfies(role, minRole as OrgRole);
}

function refuseMutation(ctx: ToolContext, e: Endpoint): never {
  // the analytics queries are declared as mutations (POST, as Cube's): they have their own tool
  const instead = e.name.startsWith('cube.query')
    ? ' For analytics queries use svc_query_analytics.'
    : '';
  throw new AppError(
    'TOOL_READ_ONLY',
    `${e.name} is a mutation and this connection is read-only. To grant write access, sign in again asking for the scope "${MCP_WRITE_SCOPE}" (scope=${API_SCOPE} ${MCP_WRITE_SCOPE}, resource=${ctx.mcpResource}) and allow it; API keys are read-only here. Or call it through the API (POST /trpc/${e.name}).${instead}`,
  );
}

async function apiCall(
  ctx: ToolContext,
  procedure: string,
  input: Record<string, unknown> | undefined,
  dryRun: boolean,
): Promise<unknown> {
  const e = ctx.catalog.get(procedure);
  if (!e)
    throw new AppError(
      'PROCEDURE_NOT_FOUND',
      `No procedure named ${procedure}: svc_search_endpoints finds one`,
    );
  if (e.type === 'mutation' && !ctx.writeAccess) refuseMutation(ctx, e);
  if (dryRun && e.type === 'query') throw refuseDryRun(procedure, 'is a query and changes nothing');
  let body: unknown = input;
  if (e.takesOrganization) {
    const given = typeof input?.organizationId === 'string' ? input.organizationId : undefined;
    body = { ...input, organizationId: await chooseOrganization(ctx, given) };
  }
  return dryRun ? ctx.dryRun(procedure, body) : ctx.call(procedure, body);
}

const completed = (r: unknown): r is { status: 'completed'; data: unknown } =>
  (r as { status?: unknown } | null)?.status === 'completed';

/** cube.query in its synchronous window; past it, cube.queryPoll with the same body until it is done. */
async function analytics(ctx: ToolContext, body: Record<string, unknown>): Promise<unknown> {
  try {
    return await ctx.call('cube.query', body);
  } catch (error) {
    if (!(error instanceof AppError) || error.errorCode !== 'ANALYTICS_QUERY_TIMEOUT') throw error;
  }
  for (;;) {
    const polled = await ctx.call('cube.queryPoll', body);
    if (completed(polled)) return polled.data;
    await new Promise((resolve) => setTimeout(resolve, ctx.pollIntervalMs));
  }
}

// (longer than a function should be, by its reason: it registers the MCP tools, a container of one
// short declaration per tool)
export function registerTools(server: McpServer, ctx: ToolContext): void {
  const procedureNames = [...ctx.catalog.keys()] as [string, ...string[]];
  const tool = <S extends z.ZodRawShape>(
    name: string,
    description: string,
    shape: S,
    body: (args: z.infer<z.ZodObject<S>>) => Promise<unknown>,
    rows = false,
  ) =>
    server.registerTool(name, { description, inputSchema: shape }, ((
      args: z.infer<z.ZodObject<S>>,
    ) => run(ctx, name, args as ToolArgs, () => body(args), rows)) as never);

  tool(
    'svc_health',
    'Whether the service and its dependencies (database, object store, job runner) are up.',
    {},
    () => ctx.call('health', undefined),
  );

  tool(
    'svc_whoami',
    'The caller: user id, email, the organizations they belong to with their role, and the credential in use.',
    {},
    async () => {
      const user = await currentUser(ctx);
      const p = ctx.principal;
      return {
        ...user,
        platformRole: p.platformRole,
        credential:
          p.kind === 'api_key'
            ? { kind: 'api_key', patterns: p.apiKey?.patterns }
            : { kind: 'bearer', clientId: p.oauth?.clientId },
        selectedOrganizationId: ctx.organizationId ?? null,
      };
    },
  );

  tool(
    'svc_get_permissions',
    "The caller's role in an organization, whether this connection may change data (write access), and the procedures the role lets them call.",
    { organizationId: organizationField },
    async ({ organizationId }) => {
      const p = ctx.principal;
      const chosen = await chooseOrganization(ctx, organizationId);
      // as every procedure does: an API key answers for the organizations of its scope only
      if (p.apiKey && !p.apiKey.organizationIds.includes(chosen.toLowerCase()))
        throw new AppError(
          'API_KEY_SCOPE_DENIED',
          "The organization is outside the API key's scope",
        );
      const access = await organizationAccess(ctx.db, p, chosen);
      const allowed = [...ctx.catalog.values()].filter(
        (e) =>
          roleReaches(e.minRole, access.role, p) &&
          (!p.apiKey || scopeAllows(p.apiKey.patterns, e.name)),
      );
      return {
        organizationId: access.id,
        role: access.role,
        platformRole: p.platformRole,
        toolServerAccess: ctx.writeAccess ? 'read-write' : 'read-only',
        queries: allowed.filter((e) => e.type === 'query').map((e) => e.name),
        mutations: allowed.filter((e) => e.type === 'mutation').map((e) => e.name),
      };
    },
  );

  tool(
    'svc_list_endpoints',
    'Lists the API procedures (name, query or mutation, minimum role, summary), optionally those of one namespace (e.g. "rightsholder" or "cube").',
    {
      namespace: z
        .string()
        .max(100)
        .optional()
        .describe('A namespace: the part of a procedure name before its last dot'),
    },
    async ({ namespace }) =>
      [...ctx.catalog.values()]
        .filter(
          (e) =>
            namespace === undefined ||
            e.namespace === namespace ||
            e.namespace.startsWith(`${namespace}.`),
        )
        .map(endpointLine),
  );

  tool(
    'svc_search_endpoints',
    'Finds API procedures whose name or summary contains every word of the keyword text.',
    { keyword: z.string().min(1).max(200) },
    async ({ keyword }) => searchEndpoints(ctx.catalog, keyword).map(endpointLine),
  );

  tool(
    'svc_describe_endpoint',
    'One procedure: the JSON Schema of its input, its method (GET query, POST mutation), scope, minimum role and summary.',
    { name: z.enum(procedureNames).describe('The procedure, e.g. rightsholder.list') },
    async ({ name }) => endpointDetail(ctx.catalog.get(name)!),
  );

  tool(
    'svc_api_call',
    'Calls one API procedure with your own credentials and role (svc_describe_endpoint gives its input). Mutations run only with write access (svc_get_permissions tells); by default the tool server is read-only. organizationId is filled in from x-organization-id or your only organization when the input needs one. With dryRun: true a mutation is checked and run without changing anything: the answer is what it would return, the rows it would write per table and the activity it would record.',
    {
      procedure: z.enum(procedureNames),
      input: z.record(z.string(), z.unknown()).optional().describe("The procedure's input object"),
      dryRun: z
        .boolean()
        .optional()
        .describe(
          'Mutations only: validate input, role and existence and describe what would change, changing nothing',
        ),
    },
    async ({ procedure, input, dryRun }) => apiCall(ctx, procedure, input, dryRun === true),
    true,
  );

  tool(
    'svc_query_analytics',
    'Runs an analytics query (Cube query format, see svc_cube_meta) and returns its rows: cube.query within its synchronous window, then cube.queryPoll until the answer is ready. The filters must name rightsholders (rightsholder_id equals their ids).',
    {
      organizationId: organizationField,
      query: z
        .record(z.string(), z.unknown())
        .describe('measures, dimensions, timeDimensions, filters, order, limit, offset'),
      usePreagg: z.boolean().optional(),
    },
    async ({ organizationId, query, usePreagg }) =>
      analytics(ctx, {
        organizationId: await chooseOrganization(ctx, organizationId),
        query,
        ...(usePreagg !== undefined ? { usePreagg } : {}),
      }),
    true,
  );

  tool(
    'svc_cube_meta',
    'The analytics view: its measures, dimensions and time dimensions with types, titles and definitions.',
    { organizationId: organizationField },
    async ({ organizationId }) =>
      ctx.call('cube.meta', { organizationId: await chooseOrganization(ctx, organizationId) }),
  );
}
