// organization.delete: owner only; a soft delete after which every procedure for the
// organization answers NOT_FOUND, and organization.list hides it unless asked.
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Doomed');
const org = owner.organizationId;
const admin = await addMember(srv, org, 'admin');
const member = await addMember(srv, org, 'member');
const operator = await outsider(srv, org, 'c2_superadmin');

t.test('below owner: FORBIDDEN, nothing deleted', async (t) => {
  isError(
    t,
    await admin.client.mutate('organization.delete', { organizationId: org }),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );
  isError(
    t,
    await member.client.mutate('organization.delete', { organizationId: org }),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );
  const stranger = await outsider(srv, org);
  isError(
    t,
    await stranger.client.mutate('organization.delete', { organizationId: org }),
    'FORBIDDEN',
    'NOT_ORGANIZATION_MEMBER',
  );
  ok(t, await member.client.query('organization.getById', { organizationId: org }));
});

t.test('the owner deletes: a soft delete, recorded', async (t) => {
  const res = ok(t, await owner.client.mutate('organization.delete', { organizationId: org }));
  t.match(res, { id: org, deleted: true });
  t.ok(res.deletedAt);
  const { rows } = await srv.deps.pool.query(
    'SELECT name, deleted_at IS NOT NULL AS deleted FROM organizations WHERE id = $1',
    [org],
  );
  t.same(rows, [{ name: 'Doomed', deleted: true }], 'the row stays');
  const events = await activities(srv, org, 'organization.delete');
  t.equal(events.length, 1);
  t.match(events[0], {
    subjectType: 'organization',
    subjectId: org,
    subjectLabel: 'Doomed',
    actorUserId: owner.userId,
  });
});

t.test('afterwards every procedure for it answers NOT_FOUND, to every caller', async (t) => {
  const calls: [typeof owner.client, 'GET' | 'POST', string, object][] = [
    [owner.client, 'GET', 'organization.getById', {}],
    [owner.client, 'POST', 'organization.delete', {}],
    [owner.client, 'POST', 'organization.update', { name: 'Back' }],
    [admin.client, 'GET', 'organization.listUsers', {}],
    [admin.client, 'POST', 'organization.addUser', { email: 'x@example.test' }],
    [member.client, 'GET', 'organization.listInvitations', {}],
    [member.client, 'GET', 'user.preferences', {}],
    [operator.client, 'GET', 'organization.getById', {}],
  ];
  for (const [client, method, path, input] of calls) {
    isError(
      t,
      await client.call(method, path, { organizationId: org, ...input }),
      'NOT_FOUND',
      'ORGANIZATION_NOT_FOUND',
      path,
    );
  }
  const me = ok(t, await member.client.query('user.currentUser'));
  t.same(me.organizations, [], 'no longer among the caller’s organizations');
});

t.test('organization.list leaves it out unless includeDeleted', async (t) => {
  const live = ok(
    t,
    await operator.client.query('organization.list', { pagination: { limit: 2000 } }),
  );
  t.notOk(live.data.some((o: { id: string }) => o.id === org));
  const all = ok(
    t,
    await operator.client.query('organization.list', {
      includeDeleted: true,
      pagination: { limit: 2000 },
    }),
  );
  const found = all.data.find((o: { id: string }) => o.id === org);
  t.match(found, { id: org, name: 'Doomed' });
  t.ok(found!.deletedAt);
});
