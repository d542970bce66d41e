// user.updateOrganizationUserStatus: a disabled member is refused in the organization at once,
// including through the API keys they own; the last owner stays active.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities, MISSING_ID } from '../organization/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const admin = await addMember(srv, org, 'admin');
const other = await newOrganization(srv, 'Other');
const setStatus = (userId: string, status: unknown, client = admin.client) =>
  client.mutateUnchecked('user.updateOrganizationUserStatus', {
    organizationId: org,
    userId,
    status,
  });

t.test('disable: refused at once; enable: back at once', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  // the same person also belongs to another organization, where nothing changes
  await srv.deps.pool.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'member')`,
    [other.organizationId, writer.userId],
  );
  await srv.deps.pool.query(
    'UPDATE api_keys SET organization_ids = organization_ids || $2::uuid WHERE user_id = $1',
    [writer.userId, other.organizationId],
  );

  const disabled = ok(t, await setStatus(writer.userId, 'disabled'));
  t.match(disabled, {
    userId: writer.userId,
    email: writer.email,
    role: 'writer',
    status: 'disabled',
  });
  isError(
    t,
    await writer.client.query('organization.getById', { organizationId: org }),
    'FORBIDDEN',
    'MEMBER_DISABLED',
  );
  isError(
    t,
    await writer.client.mutate('user.setRightsholderSort', {
      organizationId: org,
      sort: 'alphabetical',
    }),
    'FORBIDDEN',
    'MEMBER_DISABLED',
  );
  const elsewhere = writer.client.with({ 'x-organization-id': other.organizationId });
  ok(
    t,
    await elsewhere.query('organization.getById', { organizationId: other.organizationId }),
    'other organizations are unaffected',
  );
  const listed = ok(t, await admin.client.query('organization.listUsers', { organizationId: org }));
  t.equal(
    listed.data.find((m: { userId: string }) => m.userId === writer.userId)!.status,
    'disabled',
  );

  t.equal(ok(t, await setStatus(writer.userId, 'active')).status, 'active');
  ok(t, await writer.client.query('organization.getById', { organizationId: org }));

  const events = await activities(srv, org, 'user.updateOrganizationUserStatus');
  t.same(
    events.map((e) => [e.subjectId, e.changes]),
    [
      [writer.userId, { status: { before: 'active', after: 'disabled' } }],
      [writer.userId, { status: { before: 'disabled', after: 'active' } }],
    ],
  );
  ok(t, await setStatus(writer.userId, 'active'));
  t.equal(
    (await activities(srv, org, 'user.updateOrganizationUserStatus')).length,
    2,
    'no change, no event',
  );
});

t.test('the last active owner cannot be disabled', async (t) => {
  isError(t, await setStatus(owner.userId, 'disabled', owner.client), 'CONFLICT', 'LAST_OWNER');
  const second = await addMember(srv, org, 'owner');
  ok(t, await setStatus(second.userId, 'disabled', owner.client));
  isError(
    t,
    await setStatus(owner.userId, 'disabled', owner.client),
    'CONFLICT',
    'LAST_OWNER',
    'a disabled owner does not count',
  );
  ok(t, await setStatus(second.userId, 'active', owner.client));
  ok(t, await setStatus(owner.userId, 'disabled', second.client));
  ok(t, await setStatus(owner.userId, 'active', second.client));
});

t.test('nobody disables someone above them', async (t) => {
  isError(t, await setStatus(owner.userId, 'disabled'), 'FORBIDDEN', 'MEMBER_OUTRANKS_CALLER');
  const writer = await addMember(srv, org, 'writer');
  isError(
    t,
    await setStatus(admin.userId, 'disabled', writer.client),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );
});

t.test('a user of another organization, or none: NOT_FOUND, untouched', async (t) => {
  isError(t, await setStatus(other.userId, 'disabled'), 'NOT_FOUND', 'USER_NOT_FOUND');
  isError(t, await setStatus(MISSING_ID, 'disabled'), 'NOT_FOUND', 'USER_NOT_FOUND');
  ok(t, await other.client.query('organization.getById', { organizationId: other.organizationId }));
});

t.test('validation', async (t) => {
  for (const status of ['blocked', '', null, true, "active' --"]) {
    isError(
      t,
      await setStatus(admin.userId, status),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      JSON.stringify(status),
    );
  }
});
