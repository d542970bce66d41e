// An admin an owner restricted to some rightsholders cannot widen their reach through an
// invitation: a new member sees every rightsholder, so a restricted caller hands out no
// invitation link (addUser, resendInvitation, getInvitationLink): ROLE_NOT_GRANTABLE.
import t from 'tap';
import { createApiKey } from '../../src/auth/apiKeys.ts';
import { addMember, newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { acceptInvitation, insertRightsholder, tokenOf } from '../api/organization/helpers.ts';
import { isError, ok } from '../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const visible = await insertRightsholder(srv, org, 'Visible');
const hidden = await insertRightsholder(srv, org, 'Hidden');
const limited = await addMember(srv, org, 'admin');
ok(
  t,
  await owner.client.mutate('user.setDataAccessRole', {
    organizationId: org,
    userId: limited.userId,
    role: { mode: 'restricted', rightsholderIds: [visible] },
  }),
);

t.test('the restricted admin sees only their rightsholder', async (t) => {
  const list = ok(t, await limited.client.query('rightsholder.list', { organizationId: org }));
  t.same(
    list.data.map((r: { id: string }) => r.id),
    [visible],
  );
});

t.test('no invitation from a restricted admin: the new member would see everything', async (t) => {
  const alt = await newOrganization(srv, 'Alt home');
  const res = await limited.client.mutate('organization.addUser', {
    organizationId: org,
    email: alt.email,
    role: 'member',
  });
  isError(t, res, 'FORBIDDEN', 'ROLE_NOT_GRANTABLE');
  if (res.ok) {
    // what the hole gave: the invitee joins and lists the hidden rightsholder
    const joined = await acceptInvitation(srv, alt.apiKey, { token: tokenOf(res.data.link) });
    t.equal(joined.status, 200);
    const { key } = await createApiKey(srv.deps.pool, {
      userId: alt.userId,
      name: 'alt',
      organizationIds: [org],
      patterns: ['*'],
    });
    const altClient = srv.client({ 'x-api-key': key, 'x-organization-id': org });
    const seen = await altClient.query('rightsholder.getById', { organizationId: org, id: hidden });
    t.equal(seen.ok, false, 'the hidden rightsholder reached through the invitation');
  }
  const { rows } = await srv.deps.pool.query(
    'SELECT count(*)::int AS n FROM invitations WHERE organization_id = $1',
    [org],
  );
  t.equal(rows[0].n, 0, 'no invitation stored');
});

t.test("nor a new link for someone else's invitation", async (t) => {
  const inv = ok(
    t,
    await owner.client.mutate('organization.addUser', {
      organizationId: org,
      email: 'friend@example.test',
      role: 'member',
    }),
  );
  isError(
    t,
    await limited.client.mutate('organization.getInvitationLink', {
      organizationId: org,
      invitationId: inv.id,
    }),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
  );
  isError(
    t,
    await limited.client.mutate('organization.resendInvitation', {
      organizationId: org,
      invitationId: inv.id,
    }),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
  );
  const { rows } = await srv.deps.pool.query(
    'SELECT status FROM invitations WHERE organization_id = $1',
    [org],
  );
  t.same(rows, [{ status: 'pending' }], 'the invitation untouched');
  // revoking hands nothing out
  t.match(
    ok(
      t,
      await limited.client.mutate('organization.revokeInvitation', {
        organizationId: org,
        invitationId: inv.id,
      }),
    ),
    { status: 'revoked' },
  );
});

t.test('once unrestricted, the admin invites as before', async (t) => {
  ok(
    t,
    await owner.client.mutate('user.setDataAccessRole', {
      organizationId: org,
      userId: limited.userId,
      role: 'all',
    }),
  );
  t.match(
    ok(
      t,
      await limited.client.mutate('organization.addUser', {
        organizationId: org,
        email: 'later@example.test',
      }),
    ),
    { status: 'pending', role: 'member' },
  );
});
