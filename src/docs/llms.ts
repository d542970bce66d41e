// GET /docs/llms.txt: the single-file text reference in the llmstxt.org shape (an H1 title, a
// blockquote summary, short paragraphs, then H2 sections of links and facts), generated from the
// procedure declarations, the analytics model and the error registry, so it is complete for
// whatever the service has. No authentication; text/plain.
import type { AnyTRPCRouter } from '@trpc/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { model } from '../analytics/model.ts';
import { errorRegistry, specCodes, type SpecCode } from '../errors.ts';
import { describeProcedures, inputJsonSchema, type ProcedureDescription } from './schemas.ts';

export interface LlmsUrls {
  /** the service's public base URL (the API, the docs and the authorization server) */
  issuer: string;
  /** the tool server's URL */
  mcpResource: string;
}

/** The specification's recovery table ("Errors"), per data.code. */
const RECOVERY: Record<SpecCode, string> = {
  UNAUTHORIZED:
    'missing or invalid token or API key: refresh or re-issue the credential, retry once',
  FORBIDDEN: 'authenticated but lacks the role or scope: do not retry',
  NOT_FOUND:
    'the resource does not exist or is not visible to the organization: re-resolve the id from the list procedure',
  BAD_REQUEST:
    'the input failed validation (data.fields names each field): fix the field, retry once',
  CONFLICT: 'a unique constraint (a duplicate name): surface to the user, no automatic rename',
  TIMEOUT:
    'the synchronous analytics window passed: use cube.queryAsync and poll cube.queryPoll; narrow the range or add filters',
  INTERNAL_SERVER_ERROR:
    'unexpected (or a rate limit, HTTP 429 with Retry-After): safe to retry once with backoff',
};

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function procedureLine(p: ProcedureDescription): string {
  const role = p.meta?.minRole ?? 'none';
  const scope = p.meta?.scope || 'web';
  const deprecated = p.meta?.deprecated ? ` Deprecated: ${oneLine(p.meta.deprecated)}.` : '';
  const schema = inputJsonSchema(p.input) as { properties?: Record<string, unknown> };
  const org = schema.properties?.organizationId !== undefined ? ', organizationId' : '';
  return `- \`${p.name}\` (${p.method}, scope ${scope}, role ${role}${org}): ${oneLine(p.meta?.summary ?? '')}${deprecated}`;
}

function procedureSections(procedures: ProcedureDescription[]): string[] {
  const namespaces = new Map<string, ProcedureDescription[]>();
  for (const p of procedures) {
    const namespace = p.name.split('.')[0]!;
    namespaces.set(namespace, [...(namespaces.get(namespace) ?? []), p]);
  }
  return [...namespaces].flatMap(([namespace, list]) => [
    '',
    `## Procedures: ${namespace}`,
    '',
    ...list.map(procedureLine),
  ]);
}

function analyticsSection(base: string): string[] {
  const view = model.view.name;
  return [
    '',
    `## Analytics view \`${view}\``,
    '',
    `- [cube-schema.json](${base}/docs/cube-schema.json): ${oneLine(model.view.description)} The same object as cube.meta.`,
    `- Queries (cube.query, cube.queryAsync + cube.queryPoll) name members as \`${view}.<name>\` and need a filter on \`${view}.rightsholder_id\`.`,
    ...model.measures.map(
      (m) => `- measure \`${m.name}\` (${m.type}): ${oneLine(m.title)}. ${oneLine(m.description)}`,
    ),
    ...model.dimensions.map(
      (d) =>
        `- dimension \`${d.name}\` (${d.type}): ${oneLine(d.title)}. ${oneLine(d.description)}`,
    ),
  ];
}

function errorSection(): string[] {
  const codes = Object.keys(specCodes) as SpecCode[];
  return [
    '',
    '## Errors',
    '',
    '- Every error is `[{ "error": { "message", "code", "data": { "code", "errorCode", "httpStatus", "path" } } }]`; branch on `data.code` and `data.errorCode`, never on the message.',
    ...codes.map((code) => `- \`${code}\` (HTTP ${specCodes[code]}): ${RECOVERY[code]}`),
    ...Object.entries(errorRegistry).map(
      ([errorCode, spec]) =>
        `- errorCode \`${errorCode}\` (${spec.code}): ${oneLine(spec.description)}`,
    ),
  ];
}

export function llmsTxt(router: AnyTRPCRouter, urls: LlmsUrls): string {
  const base = urls.issuer.replace(/\/+$/, '');
  const procedures = describeProcedures(router);
  const queries = procedures.filter((p) => p.type === 'query').length;
  const namespaces = new Set(procedures.map((p) => p.name.split('.')[0])).size;
  const lines = [
    '# Royalty API',
    '',
    `> A royalty data engine: organizations upload royalty statement files, the service maps them to one layout, groups tracks into products, enriches them with musical details and answers earnings analytics, exports and lenses. An RPC-over-HTTP API (tRPC) of ${procedures.length} procedures (${queries} queries, ${procedures.length - queries} mutations) in ${namespaces} namespaces; every piece of data belongs to one organization.`,
    '',
    `Base URL: ${base}. Procedures live at ${base}/trpc/<namespace>.<procedure>. A command-line client (\`royalty\`) and a typed client library (\`royalty-engine/client\`) wrap the same procedures.`,
    '',
    'Agent TL;DR: always send batch=1; put organizationId in the input body; analytics queries that may run long go through cube.queryAsync then cube.queryPoll every 2-3 seconds; branch on data.code and data.errorCode.',
    '',
    '## Authentication',
    '',
    `- [OAuth authorization server metadata](${base}/.well-known/oauth-authorization-server): OAuth 2.0 with PKCE (S256 only) for people; authorize ${base}/api/oauth/authorize, token ${base}/api/oauth/token; the device flow (${base}/api/oauth/device/auth) for command lines; the first-party public client is \`royalty-cli\`.`,
    `- [Protected resource metadata of the API](${base}/.well-known/oauth-protected-resource/trpc): the API's token audience is ${base}/trpc.`,
    '- Access tokens last 1 hour, sent as `Authorization: Bearer <token>`; refresh tokens last 30 days, are single use and rotate on every refresh (grant_type=refresh_token, form-encoded).',
    '- API keys (service to service): send `x-api-key: <key>` with `x-organization-id: <organization id>`, and repeat organizationId in the input.',
    '',
    '## Transport',
    '',
    '- Queries: `GET /trpc/<procedure>?batch=1&input=<URL-encoded {"0": input}>`.',
    '- Mutations: `POST /trpc/<procedure>?batch=1` with the JSON body `{"0": input}` and `Content-Type: application/json`.',
    '- The answer is an array, one element per batch index: `[{"result":{"data": output}}]`, or `[{"error": ...}]`.',
    '- Organization scoping: a procedure marked `organizationId` below takes the organization (uuid) in its input; the caller must belong to it.',
    '- Lists take `pagination: { page, limit (1..2000), sortBy, sortOrder }` and answer `{ data, pagination: { page, limit, total, totalPages, hasNext, hasPrev } }` (upload.statements: `{ items, totalFiles, pagination }`).',
    ...procedureSections(procedures),
    ...analyticsSection(base),
    ...errorSection(),
    '',
    '## Tool server',
    '',
    `- The tool server for AI assistants is at ${urls.mcpResource} (MCP, streamable HTTP, POST) with OAuth 2.0 + PKCE; a request times out after 55 seconds; multi-organization users pick one with the header x-organization-id.`,
    `- [Protected resource metadata of the tool server](${base}/.well-known/oauth-protected-resource/mcp): its token audience is ${urls.mcpResource}.`,
    '',
    '## Optional',
    '',
    `- [schemas.json](${base}/docs/schemas.json): every procedure's input as JSON Schema, with method, path, summary, scope and minimum role.`,
    `- [llms.txt](${base}/docs/llms.txt): this file.`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The route's handler: the text for the service's public URLs (known once it listens), made once. */
export function llmsTxtRoute(router: AnyTRPCRouter, urls: () => LlmsUrls) {
  let text: string | undefined;
  return async (_req: FastifyRequest, reply: FastifyReply) => {
    text ??= llmsTxt(router, urls());
    return reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('cache-control', 'public, max-age=60')
      .send(text);
  };
}
