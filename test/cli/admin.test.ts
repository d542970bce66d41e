// `npm run admin -- …` against a configured DATABASE_URL: the operator's scripted commands.
import t from 'tap';
import { adminCli } from '../helpers/cli.ts';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t);

const admin = adminCli(srv.config.databaseUrl);

t.test('bootstrap, then keys created, listed and deleted from the command line', async (t) => {
  const boot = await admin('bootstrap', '--email', 'Label.Owner@Example.com', '--org-name', 'Label One', '--json');
  t.equal(boot.code, 0);
  const first = JSON.parse(boot.stdout);
  t.same(Object.keys(first).sort(), ['apiKey', 'organizationId', 'userId']);

  // the same email again: the user is reused, the organization is new
  const again = JSON.parse((await admin('bootstrap', '--email', 'label.owner@example.com', '--org-name', 'Label Two', '--json')).stdout);
  t.equal(again.userId, first.userId);
  t.not(again.organizationId, first.organizationId);
  const me = await srv.client({ 'x-api-key': again.apiKey, 'x-organization-id': again.organizationId }).query('user.currentUser');
  t.same(me.ok && me.data.organizations, [{ id: again.organizationId, name: 'Label Two', role: 'owner' }], 'a key sees its scope only');

  const created = await admin('api-key', 'create', '--email', 'label.owner@example.com', '--org', first.organizationId, '--patterns', 'user.*,health', '--name', 'reporting', '--json');
  t.equal(created.code, 0);
  const key = JSON.parse(created.stdout);
  t.match(key, { name: 'reporting', patterns: ['user.*', 'health'], organizationIds: [first.organizationId], userId: first.userId });
  const caller = srv.client({ 'x-api-key': key.apiKey, 'x-organization-id': first.organizationId });
  t.equal((await caller.query('user.currentUser')).ok, true);

  const listed = JSON.parse((await admin('api-key', 'list', '--org', first.organizationId, '--json')).stdout);
  t.same(listed.map((k: any) => k.name), ['bootstrap', 'reporting']);
  t.notMatch(JSON.stringify(listed), /rk_[A-Za-z0-9_-]{43}/, 'no secret is listed');

  const deleted = await admin('api-key', 'delete', '--id', key.id, '--json');
  t.same(JSON.parse(deleted.stdout), { id: key.id, deleted: true });
  const after = await caller.query('user.currentUser');
  t.equal(!after.ok && after.error.data.errorCode, 'INVALID_API_KEY');
});

t.test('platform operators and bad arguments', async (t) => {
  const op = JSON.parse((await admin('bootstrap', '--email', 'ops@example.com', '--org-name', 'Ops', '--platform-role', 'c2_superadmin', '--json')).stdout);
  const { rows } = await srv.deps.pool.query('SELECT platform_role FROM users WHERE id = $1', [op.userId]);
  t.equal(rows[0].platform_role, 'c2_superadmin');

  const badRole = await admin('bootstrap', '--email', 'x@example.com', '--org-name', 'X', '--platform-role', 'god');
  t.equal(badRole.code, 2);
  t.match(badRole.stderr, /--platform-role/);
  const badEmail = await admin('bootstrap', '--email', 'not-an-email', '--org-name', 'X');
  t.equal(badEmail.code, 2);
  const missing = await admin('bootstrap', '--email', 'x@example.com');
  t.match(missing.stderr, /--org-name is required/);
  const notMember = await admin('api-key', 'create', '--email', 'stranger@example.com', '--org', op.organizationId);
  t.equal(notMember.code, 2);
  t.match(notMember.stderr, /not a member/);
  const badPattern = await admin('api-key', 'create', '--email', 'ops@example.com', '--org', op.organizationId, '--patterns', "x'; DROP TABLE users; --");
  t.equal(badPattern.code, 2);
  const unknown = await admin('frobnicate');
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown command/);
});
