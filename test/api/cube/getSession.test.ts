// cube.getSession: an embed token that reads this organization's analytics and nothing else, with
// the data access of the member who made it, for a limited time. At the handler: the harness
// resolves the `cs_…` bearer token with the rules the app uses.
import t from 'tap';
import { seedDataset } from '../../analytics/dataset.ts';
import { m } from '../../analytics/helpers.ts';
import { createApiKey } from '../../../src/auth/apiKeys.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t, { env: { CUBE_SESSION_TTL_SECONDS: '600' } });
const owner = await newOrganization(srv, 'Embed Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const query = {
  measures: [m('units')],
  dimensions: [m('rightsholder_id')],
  filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] }],
};

const session = async (client = owner.client) => {
  const res = await client.query('cube.getSession', { organizationId: org });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
};
const embed = (token: string) => srv.client({ authorization: `Bearer ${token}` });

t.test('gets or creates a short-lived session of the organization', async (t) => {
  const s = await session();
  t.match(s, {
    sessionId: /^[0-9a-f-]{36}$/,
    token: /^cs_[A-Za-z0-9_-]{43}$/,
    organizationId: org,
  });
  const ttl = Date.parse(s.expiresAt) - Date.now();
  t.ok(ttl > 590_000 && ttl <= 600_000, 'CUBE_SESSION_TTL_SECONDS');
  t.same(await session(), s, 'the live session is handed out again');
  const member = await addMember(srv, org, 'member');
  t.not((await session(member.client)).token, s.token, 'each member has their own');
});

t.test(
  'the token reads cube procedures of its organization, without x-organization-id',
  async (t) => {
    const { token } = await session();
    const client = embed(token);
    const res = await client.mutate('cube.query', { organizationId: org, query });
    t.equal(res.ok, true);
    t.equal(res.data.data.length, 2);
    t.equal((await client.query('cube.meta', { organizationId: org })).ok, true);
    t.equal((await client.mutate('cube.queryAsync', { organizationId: org, query })).ok, true);
    const sql = await client.mutate('cube.sqlQuery', {
      organizationId: org,
      sql: 'SELECT count(*) FROM analytics_full_view',
    });
    t.same(sql.data?.rows, [['7']]);
  },
);

t.test('and nothing else', async (t) => {
  const { token } = await session();
  const client = embed(token);
  const denied = {
    ok: false,
    error: { data: { code: 'FORBIDDEN', errorCode: 'CUBE_SESSION_SCOPE_DENIED' } },
  };
  t.match(await client.query('rightsholder.list', { organizationId: org }), denied);
  t.match(
    await client.query('dataFreshness.isReady', { organizationId: org, rightsholderIds: [ds.rh1] }),
    denied,
  );
  t.match(
    await client.query('cube.getSession', { organizationId: org }),
    denied,
    'no session from a session',
  );
  t.match(await client.query('user.currentUser'), denied);
  const other = await newOrganization(srv, 'Not Embedded');
  t.match(
    await client.mutate('cube.query', { organizationId: other.organizationId, query }),
    denied,
    'another organization',
  );
});

t.test("the creator's data access and membership apply on every call", async (t) => {
  const member = await addMember(srv, org, 'member');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
    [org, member.userId, [ds.rh2]],
  );
  const { token } = await session(member.client);
  const res = await embed(token).mutate('cube.query', { organizationId: org, query });
  t.same(
    res.data.data.map((r: Record<string, string>) => r[m('rightsholder_id')]),
    [ds.rh2],
  );
  await srv.deps.pool.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [
    org,
    member.userId,
  ]);
  t.match(await embed(token).mutate('cube.query', { organizationId: org, query }), {
    ok: false,
    error: { data: { code: 'FORBIDDEN', errorCode: 'NOT_ORGANIZATION_MEMBER' } },
  });
});

t.test('a session made with a narrow API key is as narrow', async (t) => {
  const { key } = await createApiKey(srv.deps.pool, {
    userId: owner.userId,
    name: 'embed only',
    organizationIds: [org],
    patterns: ['cube.getSession', 'cube.meta'],
  });
  const narrow = srv.client({ 'x-api-key': key, 'x-organization-id': org });
  const { token } = await session(narrow);
  t.equal((await embed(token).query('cube.meta', { organizationId: org })).ok, true);
  t.match(await embed(token).mutate('cube.query', { organizationId: org, query }), {
    ok: false,
    error: { data: { errorCode: 'CUBE_SESSION_SCOPE_DENIED' } },
  });
});

t.test('expired and unknown tokens are refused', async (t) => {
  const { token, sessionId } = await session();
  await srv.deps.pool.query(
    `UPDATE cube_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`,
    [sessionId],
  );
  const invalid = {
    ok: false,
    status: 401,
    error: { data: { code: 'UNAUTHORIZED', errorCode: 'INVALID_CUBE_SESSION' } },
  };
  t.match(await embed(token).query('cube.meta', { organizationId: org }), invalid);
  t.match(await embed('cs_not-a-session').query('cube.meta', { organizationId: org }), invalid);
  t.not((await session()).token, token, 'a new session replaces the expired one');
});
