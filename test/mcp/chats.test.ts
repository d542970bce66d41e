// Every tool call is recorded in the activity log as an event of a chat (src/mcp/conversation.ts),
// and the chats feed chat.list: one chat per credential (an assistant's OAuth client, an API key)
// and person in an organization, continued while calls keep coming, visible to that person only;
// nothing is written into an organization the caller does not belong to.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { CHAT_IDLE_MINUTES } from '../../src/mcp/conversation.ts';
import { setPassword } from '../../src/oauth/passwords.ts';
import { addMember, newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { tokensFor } from '../oauth/browser.ts';

const srv = await startTestServer(t);
const PASSWORD = 'a long enough password';
const mcpUrl = new URL(`${srv.url}/mcp`);
const owner = await newOrganization(srv, 'Chat Org');
await setPassword(srv.deps.pool, owner.email, PASSWORD);
const colleague = await addMember(srv, owner.organizationId, 'admin');
const other = await newOrganization(srv, 'Chat Other Org');
const org = owner.organizationId;

async function connect(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } }));
  t.teardown(() => client.close());
  return client;
}
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { text: string }[];
  };

interface ChatRow {
  id: string;
  title: string;
}
const chats = async (caller = owner): Promise<ChatRow[]> => {
  const r = await caller.client.query('chat.list', { organizationId: org });
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return r.data.data as ChatRow[];
};
const eventsOf = async (chatId: string) => {
  const r = await owner.client.query('activity.byEntity', {
    organizationId: org,
    subjectType: 'chat',
    subjectId: chatId,
    cursor: null,
    limit: 50,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.error));
  return (
    r.data.data as { action: string; changes: unknown; actor: { userId: string } | null }[]
  ).reverse();
};
const TITLE_TIME = /, \d{4}-\d\d-\d\d \d\d:\d\d UTC$/;

t.test(
  "an assistant's calls, whatever their outcome, are one chat of chat.list with an event each",
  async (t) => {
    const tokens = await tokensFor(srv, owner.email, PASSWORD, { resource: mcpUrl.href });
    const assistant = await connect({ authorization: `Bearer ${tokens.access_token}` });
    t.equal((await call(assistant, 'svc_health')).isError, undefined);
    t.equal(
      (await call(assistant, 'svc_api_call', { procedure: 'rightsholder.list', input: {} }))
        .isError,
      undefined,
    );
    t.equal(
      (
        await call(assistant, 'svc_api_call', {
          procedure: 'rightsholder.create',
          input: { name: 'No' },
        })
      ).isError,
      true,
    );
    t.equal(
      (
        await call(assistant, 'svc_api_call', {
          procedure: 'rightsholder.create',
          input: { name: 'No' },
          dryRun: true,
        })
      ).isError,
      true,
    );

    const listed = await chats();
    t.equal(listed.length, 1, 'one conversation');
    t.match(listed[0]!.title, /^Royalty command-line client, /);
    t.match(listed[0]!.title, TITLE_TIME);
    const events = await eventsOf(listed[0]!.id);
    t.same(
      events.map((e) => [e.action, e.changes, e.actor?.userId]),
      [
        [
          'mcp.svc_health',
          { call: { before: null, after: { tool: 'svc_health', outcome: 'ok' } } },
          owner.userId,
        ],
        [
          'mcp.svc_api_call',
          {
            call: {
              before: null,
              after: { tool: 'svc_api_call', procedure: 'rightsholder.list', outcome: 'ok' },
            },
          },
          owner.userId,
        ],
        [
          'mcp.svc_api_call',
          {
            call: {
              before: null,
              after: {
                tool: 'svc_api_call',
                procedure: 'rightsholder.create',
                outcome: 'TOOL_READ_ONLY',
              },
            },
          },
          owner.userId,
        ],
        [
          'mcp.svc_api_call',
          {
            call: {
              before: null,
              after: {
                tool: 'svc_api_call',
                procedure: 'rightsholder.create',
                dryRun: true,
                outcome: 'TOOL_READ_ONLY',
              },
            },
          },
          owner.userId,
        ],
      ],
    );
    const { rows } = await srv.deps.pool.query(
      'SELECT oauth_client_id, api_key_id FROM activity_events WHERE subject_id = $1 GROUP BY 1, 2',
      [listed[0]!.id],
    );
    t.same(
      rows,
      [{ oauth_client_id: 'royalty-cli', api_key_id: null }],
      'recorded as the client that acted',
    );
  },
);

t.test('an API key is a conversation of its own; a quiet spell ends a conversation', async (t) => {
  const agent = await connect({ 'x-api-key': owner.apiKey, 'x-organization-id': org });
  await call(agent, 'svc_whoami');
  await call(agent, 'svc_list_endpoints', { namespace: 'chat' });
  const listed = await chats();
  t.equal(listed.length, 2);
  t.match(listed[0]!.title, /^API key bootstrap, /, "the newest first: the key's");
  t.same(
    (await eventsOf(listed[0]!.id)).map((e) => e.action),
    ['mcp.svc_whoami', 'mcp.svc_list_endpoints'],
  );

  // CHAT_IDLE_MINUTES without a call: the next one starts a new chat
  await srv.deps.pool.query(
    `UPDATE chats SET updated_at = updated_at - make_interval(mins => $2) WHERE id = $1`,
    [listed[0]!.id, CHAT_IDLE_MINUTES],
  );
  await call(agent, 'svc_health');
  const after = await chats();
  t.equal(after.length, 3);
  t.same(
    (await eventsOf(after[0]!.id)).map((e) => e.action),
    ['mcp.svc_health'],
  );
  t.same(
    (await eventsOf(listed[0]!.id)).map((e) => e.action),
    ['mcp.svc_whoami', 'mcp.svc_list_endpoints'],
    'the old one is left as it was',
  );
});

t.test(
  "another member sees neither the chats nor their events; an outsider's organization gets nothing",
  async (t) => {
    t.same(await chats(colleague), []);
    const feed = await colleague.client.query('activity.feed', {
      organizationId: org,
      cursor: null,
      limit: 100,
    });
    t.equal(feed.ok, true, JSON.stringify(feed.error));
    t.same(
      (feed.data.data as { action: string }[]).filter((e) => e.action.startsWith('mcp.')),
      [],
    );

    const agent = await connect({ 'x-api-key': owner.apiKey, 'x-organization-id': org });
    const foreign = await call(agent, 'svc_cube_meta', { organizationId: other.organizationId });
    t.equal(foreign.isError, true);
    const { rows } = await srv.deps.pool.query(
      'SELECT (SELECT count(*)::int FROM chats WHERE organization_id = $1) AS chats, (SELECT count(*)::int FROM activity_events WHERE organization_id = $1 AND action LIKE $2) AS events',
      [other.organizationId, 'mcp.%'],
    );
    t.same(rows, [{ chats: 0, events: 0 }]);
  },
);
