// svc_api_call with dryRun: true (src/mcp/dryRun.ts): a mutation checked and run in a transaction
// that is rolled back. Its answer is what it would return, the rows it would write and the activity
// it would record; the database afterwards is exactly as before (every table compared); input,
// role and existence are checked as for real; procedures whose effects cannot be rolled back, and
// queries, are refused with DRY_RUN_UNSUPPORTED.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import t from 'tap';
import { appRouter } from '../../src/api/index.ts';
import { describeProcedures } from '../../src/docs/schemas.ts';
import { dryRun, NOT_DRY_RUNNABLE } from '../../src/mcp/dryRun.ts';
import { setPassword } from '../../src/oauth/passwords.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { addMember, newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { authorizationUrl, Browser, discover, exchange, signInAndAllow } from '../oauth/browser.ts';

const srv = await startTestServer(t);
const PASSWORD = 'a long enough password';
const mcpUrl = new URL(`${srv.url}/mcp`);
const owner = await newOrganization(srv, 'Dry Run Org');
await setPassword(srv.deps.pool, owner.email, PASSWORD);
const reader = await addMember(srv, owner.organizationId, 'reader');
await setPassword(srv.deps.pool, reader.email, PASSWORD);
const other = await newOrganization(srv, 'Other Dry Org');
const made = await owner.client.mutate('rightsholder.create', {
  organizationId: owner.organizationId,
  name: 'Before Dry Run',
});
const rightsholderId = made.data.id as string;
const theirs = (
  await other.client.mutate('rightsholder.create', {
    organizationId: other.organizationId,
    name: 'Not Yours',
  })
).data.id as string;

/** A tool-server client of the person, with write access (the mcp:write scope allowed at sign-in) or without. */
async function connect(email: string, write: boolean): Promise<Client> {
  const as = await discover(srv);
  const auth = await authorizationUrl(as, {
    resource: mcpUrl.href,
    scope: write ? 'api mcp:write' : 'api',
  });
  const tokens = await exchange(
    as,
    auth,
    await signInAndAllow(new Browser(srv.url), auth.url, email, PASSWORD),
    { resource: mcpUrl.href },
  );
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(mcpUrl, {
      requestInit: { headers: { authorization: `Bearer ${tokens.access_token}` } },
    }),
  );
  t.teardown(() => client.close());
  return client;
}

async function apiCall(
  client: Client,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; json: any }> {
  const r = (await client.callTool({ name: 'svc_api_call', arguments: args })) as {
    isError?: boolean;
    content: { text: string }[];
  };
  return { isError: r.isError === true, json: JSON.parse(r.content[0]!.text) };
}

/**
 * Every row of every table of the service and of the job queue, as one fingerprint per table;
 * less the record of the tool calls themselves (chats, and their mcp.* events), which every call
 * writes, dry or not (test/mcp/chats.test.ts).
 */
async function everyTable(): Promise<Record<string, string>> {
  const { rows: tables } = await srv.deps.pool.query<{ name: string }>(
    `SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema IN ('public', 'graphile_worker') ORDER BY 1`,
  );
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    if (name === 'public.chats') continue;
    const where = name === 'public.activity_events' ? `WHERE t.action NOT LIKE 'mcp.%'` : '';
    const { rows } = await srv.deps.pool.query<{ n: number; digest: string | null }>(
      `SELECT count(*)::int AS n, md5(string_agg(t::text, '|' ORDER BY t::text)) AS digest FROM ${name} t ${where}`,
    );
    out[name] = `${rows[0]!.n}:${rows[0]!.digest}`;
  }
  return out;
}

const writer = await connect(owner.email, true);

t.test('a dry run describes the change and changes nothing, in any table', async (t) => {
  const before = await everyTable();
  const update = await apiCall(writer, {
    procedure: 'rightsholder.updateById',
    input: { id: rightsholderId, name: 'After Dry Run' },
    dryRun: true,
  });
  t.equal(update.isError, false, JSON.stringify(update.json));
  t.equal(update.json.dryRun, true);
  t.equal(update.json.procedure, 'rightsholder.updateById');
  t.equal(update.json.result.id, rightsholderId);
  t.equal(update.json.result.name, 'After Dry Run', 'what it would return');
  t.same(
    update.json.rows,
    {
      activity_events: { inserted: 1, updated: 0, deleted: 0 },
      rightsholders: { inserted: 0, updated: 1, deleted: 0 },
    },
    'the rows it would write, exactly',
  );
  t.same(update.json.activity, [
    {
      action: 'rightsholder.updateById',
      subjectType: 'rightsholder',
      subjectId: rightsholderId,
      subjectLabel: 'After Dry Run',
      changes: { name: { before: 'Before Dry Run', after: 'After Dry Run' } },
    },
  ]);
  t.match(update.json.note, /^Nothing was changed/);

  const create = await apiCall(writer, {
    procedure: 'rightsholder.create',
    input: { name: 'Never Created' },
    dryRun: true,
  });
  t.equal(create.isError, false, JSON.stringify(create.json));
  t.equal(create.json.result.name, 'Never Created');
  t.equal(create.json.rows.rightsholders.inserted, 1);
  t.same(
    create.json.activity.map((e: { action: string }) => e.action),
    ['rightsholder.create'],
  );
  const renamed = await apiCall(writer, {
    procedure: 'organization.update',
    input: { name: 'Renamed Org' },
    dryRun: true,
  });
  t.equal(renamed.isError, false, JSON.stringify(renamed.json));
  t.same(renamed.json.rows, {
    activity_events: { inserted: 1, updated: 0, deleted: 0 },
    organizations: { inserted: 0, updated: 1, deleted: 0 },
  });

  t.same(await everyTable(), before, 'every table exactly as before');
  const { rows: calls } = await srv.deps.pool.query<{ after: unknown }>(
    `SELECT changes->'call'->'after' AS after FROM activity_events WHERE action = 'mcp.svc_api_call' AND changes->'call'->'after'->>'dryRun' = 'true' ORDER BY created_at`,
  );
  t.same(
    calls.map((c) => c.after),
    ['rightsholder.updateById', 'rightsholder.create', 'organization.update'].map((procedure) => ({
      tool: 'svc_api_call',
      procedure,
      dryRun: true,
      outcome: 'ok',
    })),
    'the dry runs are recorded as calls',
  );
  const read = await owner.client.query('rightsholder.getById', {
    organizationId: owner.organizationId,
    id: rightsholderId,
  });
  t.equal(read.data.name, 'Before Dry Run');
  const list = await owner.client.query('rightsholder.list', {
    organizationId: owner.organizationId,
    search: 'Never Created',
  });
  t.equal(list.data.pagination.total, 0);

  // and the same call without dryRun does it
  const real = await apiCall(writer, {
    procedure: 'rightsholder.updateById',
    input: { id: rightsholderId, name: 'After Dry Run' },
  });
  t.equal(real.isError, false);
  t.equal(
    (
      await owner.client.query('rightsholder.getById', {
        organizationId: owner.organizationId,
        id: rightsholderId,
      })
    ).data.name,
    'After Dry Run',
  );
});

t.test('input, existence, tenancy and role are checked as for real', async (t) => {
  const invalid = await apiCall(writer, {
    procedure: 'rightsholder.updateById',
    input: { id: rightsholderId, name: '' },
    dryRun: true,
  });
  t.same(
    [invalid.isError, invalid.json.error.code, invalid.json.error.errorCode],
    [true, 'BAD_REQUEST', 'VALIDATION_FAILED'],
  );
  const missing = await apiCall(writer, {
    procedure: 'rightsholder.updateById',
    input: { id: '00000000-0000-4000-8000-000000000000', name: 'X' },
    dryRun: true,
  });
  t.same(
    [missing.json.error.code, missing.json.error.errorCode],
    ['NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND'],
  );
  const foreign = await apiCall(writer, {
    procedure: 'rightsholder.updateById',
    input: { id: theirs, name: 'Stolen' },
    dryRun: true,
  });
  t.same(
    [foreign.json.error.code, foreign.json.error.errorCode],
    ['NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND'],
    "another organization's id is not found",
  );
  const asReader = await connect(reader.email, true);
  const role = await apiCall(asReader, {
    procedure: 'rightsholder.updateById',
    input: { id: rightsholderId, name: 'X' },
    dryRun: true,
  });
  t.same([role.json.error.code, role.json.error.errorCode], ['FORBIDDEN', 'INSUFFICIENT_ROLE']);
});

t.test(
  'refused: effects that cannot be rolled back, queries, and read-only connections',
  async (t) => {
    const readOnly = await connect(owner.email, false);
    const before = await everyTable();
    const exportRun = await apiCall(writer, {
      procedure: 'export.trigger',
      input: { type: 'catalog', format: 'csv', rightsholderIds: [rightsholderId] },
      dryRun: true,
    });
    t.same(
      [exportRun.isError, exportRun.json.error.code, exportRun.json.error.errorCode],
      [true, 'BAD_REQUEST', 'DRY_RUN_UNSUPPORTED'],
    );
    t.equal(
      exportRun.json.error.message,
      'export.trigger cannot be dry-run: it queues the export build with the job runner. Call it without dryRun to run it for real.',
    );
    const query = await apiCall(writer, {
      procedure: 'rightsholder.list',
      input: {},
      dryRun: true,
    });
    t.equal(
      query.json.error.message,
      'rightsholder.list cannot be dry-run: it is a query and changes nothing. Call it without dryRun to run it for real.',
    );
    const refused = await apiCall(readOnly, {
      procedure: 'rightsholder.create',
      input: { name: 'X' },
      dryRun: true,
    });
    t.equal(refused.json.error.errorCode, 'TOOL_READ_ONLY');
    t.same(await everyTable(), before);
  },
);

t.test(
  'an undeclared effect is refused as it happens, and what was written before it is rolled back',
  async (t) => {
    const before = await everyTable();
    const attempt = dryRun(srv.deps, 'rightsholder.create', async (deps) => {
      await deps.pool.query(`UPDATE organizations SET name = 'Half Done' WHERE id = $1`, [
        owner.organizationId,
      ]);
      await deps.store.put('dry-run-object', 'x');
    });
    t.equal(
      await attempt.then(
        () => 'ran',
        (e: unknown) => (e as { errorCode?: string }).errorCode,
      ),
      'DRY_RUN_UNSUPPORTED',
    );
    t.same(await everyTable(), before);
    t.equal(await srv.deps.store.head('dry-run-object'), undefined, 'no object written');
  },
);

t.test(
  'a job queued in a dry run is rolled back with the rest: jobs are rows of the transaction',
  async (t) => {
    const jobs = async () =>
      (
        await srv.deps.pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM graphile_worker.jobs',
        )
      ).rows[0]!.n;
    const queued = await jobs();
    await dryRun(srv.deps, 'rightsholder.create', async (deps) => {
      await enqueue(deps.pool, 'export_build', {
        organizationId: owner.organizationId,
        exportId: owner.organizationId,
      });
    });
    t.equal(await jobs(), queued);
  },
);

t.test('every procedure declared not dry-runnable is a mutation of the API', async (t) => {
  const mutations = new Set(
    describeProcedures(appRouter)
      .filter((p) => p.type === 'mutation')
      .map((p) => p.name),
  );
  for (const name of Object.keys(NOT_DRY_RUNNABLE)) t.ok(mutations.has(name), name);
});
