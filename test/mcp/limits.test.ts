// The tool server's time limit and the analytics fallback past cube.query's synchronous window,
// on a service with short windows: MCP_TIMEOUT_MS 3 s, CUBE_SYNC_TIMEOUT_MS 1 ms.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t, {
  env: { MCP_TIMEOUT_MS: '3000', CUBE_SYNC_TIMEOUT_MS: '1' },
});
const owner = await newOrganization(srv, 'Limits Org');
const artist = await owner.client.mutate('rightsholder.create', {
  organizationId: owner.organizationId,
  name: 'Slow Artist',
});

const client = new Client({ name: 'test', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), {
    requestInit: {
      headers: { 'x-api-key': owner.apiKey, 'x-organization-id': owner.organizationId },
    },
  }),
);
t.teardown(() => client.close());

async function call(
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; json: any; text: string }> {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { text: string }[];
  };
  return {
    isError: r.isError === true,
    json: JSON.parse(r.content[0]!.text),
    text: r.content[0]!.text,
  };
}

t.test('svc_query_analytics polls past the synchronous window and returns the rows', async (t) => {
  const direct = await owner.client.mutate('cube.query', {
    organizationId: owner.organizationId,
    query: {
      measures: ['analytics_full_view.statement_row_count'],
      filters: [
        {
          member: 'analytics_full_view.rightsholder_id',
          operator: 'equals',
          values: [artist.data.id],
        },
      ],
    },
  });
  t.equal(
    !direct.ok && direct.error.data.errorCode,
    'ANALYTICS_QUERY_TIMEOUT',
    'cube.query alone gives up after 1 ms',
  );
  const rows = await call('svc_query_analytics', {
    query: {
      measures: ['analytics_full_view.statement_row_count'],
      filters: [
        {
          member: 'analytics_full_view.rightsholder_id',
          operator: 'equals',
          values: [artist.data.id],
        },
      ],
    },
  });
  t.equal(rows.isError, false, rows.text);
  t.same(rows.json.data, [{ 'analytics_full_view.statement_row_count': '0' }], rows.text);
});

t.test('a call past MCP_TIMEOUT_MS is a TOOL_TIMEOUT tool error, not a hung request', async (t) => {
  // the rightsholders table held by another session: the lookup waits for it
  const holder = await srv.deps.pool.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE rightsholders IN ACCESS EXCLUSIVE MODE');
  t.teardown(async () => {
    await holder.query('ROLLBACK');
    holder.release();
  });
  const started = Date.now();
  const slow = await call('svc_api_call', {
    procedure: 'rightsholder.getById',
    input: { id: artist.data.id },
  });
  const took = Date.now() - started;
  t.equal(slow.isError, true);
  t.same(slow.json.error.code, 'TIMEOUT');
  t.equal(slow.json.error.errorCode, 'TOOL_TIMEOUT');
  t.match(slow.json.error.message, 'within 3 s (MCP_TIMEOUT_MS)');
  t.ok(took >= 3000 && took < 6000, `answered after ${took} ms`);
});
