// The tool server as an assistant meets it: the SDK's own Client over streamable HTTP against the
// running service, with a token from the real OAuth flow or an API key.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'node:http';
import t from 'tap';
import { setPassword } from '../../src/oauth/passwords.ts';
import { addMember, newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import {
  authorizationUrl,
  Browser,
  discover,
  exchange,
  signInAndAllow,
  tokensFor,
} from '../oauth/browser.ts';

const srv = await startTestServer(t, {
  env: { MCP_MAX_ROWS: '3', CORS_ORIGINS: 'http://app.example' },
});
const PASSWORD = 'a long enough password';
const mcpUrl = new URL(`${srv.url}/mcp`);
const owner = await newOrganization(srv, 'Tool Org');
await setPassword(srv.deps.pool, owner.email, PASSWORD);
const other = await newOrganization(srv, 'Other Org');
const reader = await addMember(srv, owner.organizationId, 'reader');

const created = await owner.client.mutate('rightsholder.create', {
  organizationId: owner.organizationId,
  name: 'Tool Artist',
});
const theirs = await other.client.mutate('rightsholder.create', {
  organizationId: other.organizationId,
  name: 'Their Artist',
});
for (let i = 0; i < 4; i++)
  await owner.client.mutate('rightsholder.create', {
    organizationId: owner.organizationId,
    name: `Extra ${i}`,
  });

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } }));
  t.teardown(() => client.close());
  return client;
}
const keyHeaders = (c: { apiKey: string; organizationId: string }) => ({
  'x-api-key': c.apiKey,
  'x-organization-id': c.organizationId,
});

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text: string }[];
}
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ isError: boolean; text: string; json: any }> {
  const r = (await client.callTool({ name, arguments: args })) as ToolAnswer;
  const text = r.content[0]!.text;
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/\n\n\(\d+ rows left out[^)]*\)$/, ''));
  } catch {
    json = undefined;
  }
  return { isError: r.isError === true, text, json };
}

const ALL_TOOLS = [
  'svc_api_call',
  'svc_cube_meta',
  'svc_describe_endpoint',
  'svc_get_permissions',
  'svc_health',
  'svc_list_endpoints',
  'svc_query_analytics',
  'svc_search_endpoints',
  'svc_whoami',
];

t.test('an OAuth token for the tool server: the nine tools, each answering', async (t) => {
  const tokens = await tokensFor(srv, owner.email, PASSWORD, { resource: mcpUrl.href });
  const client = await connect({ authorization: `Bearer ${tokens.access_token}` });
  t.same((await client.listTools()).tools.map((tool) => tool.name).sort(), ALL_TOOLS);

  const health = await call(client, 'svc_health');
  t.equal(health.isError, false, health.text);
  t.equal(health.json.status, 'ok');

  const me = await call(client, 'svc_whoami');
  t.equal(me.json.id, owner.userId);
  t.equal(me.json.email, owner.email);
  t.same(me.json.credential, { kind: 'bearer', clientId: 'royalty-cli' });
  t.same(
    me.json.organizations.map((o: { id: string; role: string }) => [o.id, o.role]),
    [[owner.organizationId, 'owner']],
  );

  const perms = await call(client, 'svc_get_permissions');
  t.equal(perms.json.organizationId, owner.organizationId, 'the only organization is chosen');
  t.equal(perms.json.role, 'owner');
  t.equal(perms.json.toolServerAccess, 'read-only');
  t.ok(perms.json.queries.includes('distributor.list'));
  t.ok(perms.json.mutations.includes('rightsholder.create'));

  const listed = await call(client, 'svc_list_endpoints', { namespace: 'rightsholder' });
  t.ok(listed.json.every((e: { name: string }) => e.name.startsWith('rightsholder.')));
  t.ok(
    listed.json.some(
      (e: { name: string; type: string }) =>
        e.name === 'rightsholder.getById' && e.type === 'query',
    ),
  );

  const found = await call(client, 'svc_search_endpoints', { keyword: 'rightsholder by id' });
  t.ok(
    found.json.some((e: { name: string }) => e.name === 'rightsholder.getById'),
    found.text,
  );

  const schemas = (await (await fetch(`${srv.url}/docs/schemas.json`)).json()) as Record<
    string,
    { input: unknown; summary: string; minRole: string }
  >;
  const described = await call(client, 'svc_describe_endpoint', { name: 'rightsholder.getById' });
  t.same(
    described.json,
    {
      name: 'rightsholder.getById',
      type: 'query',
      minRole: 'member',
      summary: schemas['rightsholder.getById']!.summary,
      method: 'GET',
      scope: 'cli',
      input: schemas['rightsholder.getById']!.input,
    },
    'the same declaration as /docs/schemas.json',
  );

  const got = await call(client, 'svc_api_call', {
    procedure: 'rightsholder.getById',
    input: { id: created.data.id },
  });
  t.equal(got.isError, false, got.text);
  t.equal(got.json.id, created.data.id);
  t.equal(got.json.name, 'Tool Artist');

  const meta = await call(client, 'svc_cube_meta');
  t.equal(meta.isError, false, meta.text);
  t.ok(Array.isArray(meta.json.cubes));

  const rows = await call(client, 'svc_query_analytics', {
    query: {
      measures: ['analytics_full_view.royalty_earnings'],
      filters: [
        {
          member: 'analytics_full_view.rightsholder_id',
          operator: 'equals',
          values: [created.data.id],
        },
      ],
    },
  });
  t.equal(rows.isError, false, rows.text);
  t.ok(Array.isArray(rows.json.data), rows.text);
});

t.test('another organization is out of reach, as the API answers', async (t) => {
  const client = await connect(keyHeaders(owner));
  const foreign = await call(client, 'svc_api_call', {
    procedure: 'rightsholder.getById',
    input: { id: theirs.data.id },
  });
  const api = await owner.client.query('rightsholder.getById', {
    organizationId: owner.organizationId,
    id: theirs.data.id,
  });
  t.equal(foreign.isError, true);
  t.equal(foreign.json.error.code, 'NOT_FOUND');
  t.equal(foreign.json.error.errorCode, !api.ok && api.error.data.errorCode);
  const named = await call(client, 'svc_api_call', {
    procedure: 'rightsholder.list',
    input: { organizationId: other.organizationId },
  });
  const namedApi = await owner.client.query('rightsholder.list', {
    organizationId: other.organizationId,
  });
  t.equal(named.json.error.errorCode, 'ORGANIZATION_MISMATCH');
  t.equal(
    named.json.error.errorCode,
    !namedApi.ok && namedApi.error.data.errorCode,
    'as the API answers',
  );
  const mine = {
    member: 'analytics_full_view.rightsholder_id',
    operator: 'equals',
    values: [created.data.id],
  };
  const smuggled = await call(client, 'svc_query_analytics', {
    query: {
      measures: ['analytics_full_view.statement_row_count'],
      filters: [
        mine,
        {
          member: 'analytics_full_view.organization_id',
          operator: 'equals',
          values: [other.organizationId],
        },
      ],
    },
  });
  t.equal(smuggled.isError, false, smuggled.text);
  t.same(smuggled.json.data, [{ 'analytics_full_view.statement_row_count': '0' }], smuggled.text);
  t.same(
    smuggled.json.query.filters,
    [
      mine,
      {
        member: 'analytics_full_view.organization_id',
        operator: 'equals',
        values: [owner.organizationId],
      },
    ],
    "an organization_id filter is stripped; the caller's organization is the injected one",
  );
});

t.test('role limits apply as over HTTP', async (t) => {
  const client = await connect(keyHeaders(reader));
  const refused = await call(client, 'svc_api_call', { procedure: 'distributor.list', input: {} });
  t.equal(refused.isError, true);
  t.equal(refused.json.error.code, 'FORBIDDEN');
  t.equal(refused.json.error.errorCode, 'INSUFFICIENT_ROLE');
  const perms = await call(client, 'svc_get_permissions');
  t.equal(perms.json.role, 'reader');
  t.notOk(perms.json.queries.includes('distributor.list'));
  const foreign = await call(client, 'svc_get_permissions', {
    organizationId: other.organizationId,
  });
  t.equal(
    foreign.json.error.errorCode,
    'API_KEY_SCOPE_DENIED',
    "no listing for an organization outside the key's scope",
  );
  t.ok(perms.json.queries.includes('rightsholder.getById'));
});

t.test(
  'a mutation is refused: the tool server is read-only, and says how to change data',
  async (t) => {
    const client = await connect(keyHeaders(owner));
    const before = await owner.client.query('rightsholder.list', {
      organizationId: owner.organizationId,
    });
    const refused = await call(client, 'svc_api_call', {
      procedure: 'rightsholder.create',
      input: { name: 'Never' },
    });
    t.equal(refused.isError, true);
    t.equal(refused.json.error.code, 'FORBIDDEN');
    t.equal(refused.json.error.errorCode, 'TOOL_READ_ONLY');
    t.match(
      refused.json.error.message,
      `sign in again asking for the scope "mcp:write" (scope=api mcp:write, resource=${mcpUrl.href})`,
    );
    const after = await owner.client.query('rightsholder.list', {
      organizationId: owner.organizationId,
    });
    t.equal(after.data.pagination.total, before.data.pagination.total, 'nothing was created');
    const cube = await call(client, 'svc_api_call', {
      procedure: 'cube.query',
      input: { query: {} },
    });
    t.equal(
      cube.json.error.errorCode,
      'TOOL_READ_ONLY',
      'declared a mutation: refused, whatever it does',
    );
    t.match(cube.json.error.message, 'use svc_query_analytics');
  },
);

t.test(
  'with the mcp:write scope the person allowed, a mutation runs with their role',
  async (t) => {
    const as = await discover(srv);
    const auth = await authorizationUrl(as, { resource: mcpUrl.href, scope: 'api mcp:write' });
    const callback = await signInAndAllow(new Browser(srv.url), auth.url, owner.email, PASSWORD);
    const tokens = await exchange(as, auth, callback, { resource: mcpUrl.href });
    const client = await connect({ authorization: `Bearer ${tokens.access_token}` });
    t.equal((await call(client, 'svc_get_permissions')).json.toolServerAccess, 'read-write');
    const made = await call(client, 'svc_api_call', {
      procedure: 'rightsholder.create',
      input: { name: 'Written By Assistant' },
    });
    t.equal(made.isError, false, made.text);
    const read = await owner.client.query('rightsholder.getById', {
      organizationId: owner.organizationId,
      id: made.json.id,
    });
    t.equal(read.data.name, 'Written By Assistant');
    const events = await srv.deps.pool.query<{ oauth_client_id: string }>(
      `SELECT oauth_client_id FROM activity_events WHERE subject_id = $1 AND action = 'rightsholder.create'`,
      [made.json.id],
    );
    t.same(events.rows, [{ oauth_client_id: 'royalty-cli' }], 'recorded as the client that acted');

    const readOnly = await tokensFor(srv, owner.email, PASSWORD, { resource: mcpUrl.href });
    const plain = await connect({ authorization: `Bearer ${readOnly.access_token}` });
    t.equal(
      (await call(plain, 'svc_get_permissions')).json.toolServerAccess,
      'read-only',
      'a sign-in without the scope',
    );
    const apiWithScope = await authorizationUrl(as, { scope: 'api mcp:write' });
    const apiCallback = await signInAndAllow(
      new Browser(srv.url),
      apiWithScope.url,
      owner.email,
      PASSWORD,
    );
    const apiTokens = (await exchange(as, apiWithScope, apiCallback)) as { scope?: string };
    t.equal(apiTokens.scope, 'api', "the scope is the tool server's only");
  },
);

t.test('large answers are bounded, with a note of what was left out', async (t) => {
  const client = await connect(keyHeaders(owner));
  const listed = await call(client, 'svc_api_call', {
    procedure: 'rightsholder.list',
    input: { limit: 10 },
  });
  t.equal(listed.isError, false, listed.text);
  t.equal(listed.json.data.length, 3, 'MCP_MAX_ROWS rows');
  t.ok(listed.json.pagination.total > 3);
  t.match(
    listed.text,
    `(${listed.json.pagination.total - 3} rows left out: results keep at most 3 rows per list`,
  );
});

const rpc = (headers: Record<string, string>, method = 'POST') =>
  fetch(mcpUrl, {
    method,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    ...(method === 'POST'
      ? { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) }
      : {}),
  });

t.test(
  'without a valid credential: 401 with the challenge naming the resource metadata',
  async (t) => {
    const none = await rpc({});
    t.equal(none.status, 401);
    t.equal(
      none.headers.get('www-authenticate'),
      `Bearer realm="royalty", resource_metadata="${srv.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    t.equal(
      ((await none.json()) as { error: { data: { errorCode: string } } }).error.data.errorCode,
      'AUTH_REQUIRED',
    );

    const apiToken = await tokensFor(srv, owner.email, PASSWORD);
    const wrong = await rpc({ authorization: `Bearer ${apiToken.access_token}` });
    t.equal(wrong.status, 401, 'a token for the API is not one for the tool server');
    t.match(wrong.headers.get('www-authenticate'), 'error="invalid_token"');
    t.equal(
      ((await wrong.json()) as { error: { data: { errorCode: string } } }).error.data.errorCode,
      'ACCESS_TOKEN_AUDIENCE',
    );

    const badKey = await rpc({
      'x-api-key': 'rk_nothing',
      'x-organization-id': owner.organizationId,
    });
    t.equal(badKey.status, 401);
    t.equal(
      ((await badKey.json()) as { error: { data: { errorCode: string } } }).error.data.errorCode,
      'INVALID_API_KEY',
    );

    const sdk = new Client({ name: 'test', version: '1.0.0' });
    await t.rejects(
      sdk.connect(new StreamableHTTPClientTransport(mcpUrl)),
      { code: 401 },
      'the SDK client sees the 401',
    );
  },
);

t.test('stateless: GET is 405; a foreign Origin or Host is refused (DNS rebinding)', async (t) => {
  const get = await rpc(keyHeaders(owner), 'GET');
  t.equal(get.status, 405);
  t.equal(get.headers.get('allow'), 'POST');
  const ok = await rpc({ ...keyHeaders(owner), 'x-request-id': 'tool-call-1' });
  t.equal(ok.status, 200);
  t.equal(
    ok.headers.get('x-request-id'),
    'tool-call-1',
    'the request id comes back, as on every answer',
  );
  t.equal(ok.headers.get('cache-control'), 'no-store');
  const origin = await rpc({ ...keyHeaders(owner), origin: 'http://evil.example' });
  t.equal(origin.status, 403);
  t.equal(
    ((await origin.json()) as { error: { data: { errorCode: string } } }).error.data.errorCode,
    'TOOL_ORIGIN_REFUSED',
  );
  const same = await rpc({ ...keyHeaders(owner), origin: new URL(srv.url).origin });
  t.equal(same.status, 200);
  const allowed = await rpc({ ...keyHeaders(owner), origin: 'http://app.example' });
  t.equal(allowed.status, 200, 'an origin of CORS_ORIGINS');
  t.equal(
    allowed.headers.get('access-control-allow-origin'),
    'http://app.example',
    'with its CORS headers',
  );
  // fetch sets Host itself: a raw request names another one, as a rebound name would
  const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const req = request(
      mcpUrl,
      {
        method: 'POST',
        headers: {
          ...keyHeaders(owner),
          host: 'attacker.example',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  t.equal(rebound.status, 403);
  t.equal(
    (JSON.parse(rebound.body) as { error: { data: { errorCode: string } } }).error.data.errorCode,
    'TOOL_ORIGIN_REFUSED',
  );
});

t.test('protocol revisions are negotiated at initialize', async (t) => {
  for (const [asked, answered] of [
    ['2025-11-25', '2025-11-25'],
    ['2025-06-18', '2025-06-18'],
    ['2099-01-01', '2025-11-25'],
  ]) {
    const res = await fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...keyHeaders(owner),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: asked,
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
    const body = (await res.json()) as {
      result: { protocolVersion: string; capabilities: Record<string, unknown> };
    };
    t.equal(body.result.protocolVersion, answered, `asked ${asked}`);
    t.ok(body.result.capabilities.tools);
  }
});
