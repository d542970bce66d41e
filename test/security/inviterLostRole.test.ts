// An invitation grants its role when it is accepted, so it is checked then against the one who
// issued it: nobody grants a role above their own, and a restricted admin hands out no
// membership (a new member sees every rightsholder). An admin demoted, removed, disabled or
// restricted after inviting (their own second address, say) cannot come back through the
// invitations they left behind. The invitation stays pending: an admin may resend it.
import t from 'tap';
import { addMember, newOrganization, outsider, type Caller } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { acceptInvitation, insertRightsholder, tokenOf } from '../api/organization/helpers.ts';
import { ok } from '../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;

async function invite(
  by: Caller,
  email: string,
  role: string,
): Promise<{ id: string; link: string }> {
  const res = await by.client.mutate('organization.addUser', { organizationId: org, email, role });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data as { id: string; link: string };
}

async function membership(userId: string): Promise<{ role: string }[]> {
  return (
    await srv.deps.pool.query(
      'SELECT role FROM memberships WHERE organization_id = $1 AND user_id = $2',
      [org, userId],
    )
  ).rows;
}

async function statusOf(invitationId: string): Promise<string> {
  const res = ok<any>(
    t,
    await owner.client.query('organization.listInvitations', {
      organizationId: org,
      status: ['pending', 'accepted', 'revoked', 'expired'],
    }),
  );
  return res.data.find((i: { id: string }) => i.id === invitationId).status;
}

const refused = { status: 403, code: 'FORBIDDEN', errorCode: 'ROLE_NOT_GRANTABLE' };

const changes: [string, (admin: Caller) => Promise<unknown>][] = [
  [
    'demoted to member',
    (admin) =>
      owner.client.mutate('organization.updateRole', {
        organizationId: org,
        userId: admin.userId,
        role: 'member',
      }),
  ],
  [
    'removed',
    (admin) =>
      owner.client.mutate('organization.removeUser', { organizationId: org, userId: admin.userId }),
  ],
  [
    'disabled',
    (admin) =>
      owner.client.mutate('user.updateOrganizationUserStatus', {
        organizationId: org,
        userId: admin.userId,
        status: 'disabled',
      }),
  ],
  [
    'restricted to one rightsholder',
    async (admin) =>
      owner.client.mutate('user.setDataAccessRole', {
        organizationId: org,
        userId: admin.userId,
        role: {
          mode: 'restricted',
          rightsholderIds: [await insertRightsholder(srv, org, `Only ${admin.userId}`)],
        },
      }),
  ],
];

for (const [change, apply] of changes) {
  t.test(`an admin ${change} after inviting: the invitation no longer admits`, async (t) => {
    const admin = await addMember(srv, org, 'admin');
    const invitee = await newOrganization(srv, 'Elsewhere');
    const inv = await invite(admin, invitee.email, 'admin');
    const res = ok<any>(t, (await apply(admin)) as never);
    t.ok(res);
    const answer = await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(inv.link) });
    t.same(
      {
        status: answer.status,
        code: answer.body.error?.code,
        errorCode: answer.body.error?.errorCode,
      },
      refused,
    );
    t.same(await membership(invitee.userId), [], 'no membership');
    t.equal(await statusOf(inv.id), 'pending', 'the invitation stays pending');
    // an admin who may grant the role sends it again: then it admits
    const fresh = ok<any>(
      t,
      await owner.client.mutate('organization.resendInvitation', {
        organizationId: org,
        invitationId: inv.id,
      }),
    );
    const accepted = await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(fresh.link) });
    t.equal(accepted.status, 200, JSON.stringify(accepted.body));
    t.same(await membership(invitee.userId), [{ role: 'admin' }]);
  });
}

t.test(
  'a lower role than the inviter still holds is fine; so is an invitation from a platform operator',
  async (t) => {
    const admin = await addMember(srv, org, 'admin');
    const invitee = await newOrganization(srv, 'Elsewhere');
    const inv = await invite(admin, invitee.email, 'writer');
    ok(
      t,
      await owner.client.mutate('organization.updateRole', {
        organizationId: org,
        userId: admin.userId,
        role: 'writer',
      }),
    );
    t.equal(
      (await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(inv.link) })).status,
      200,
      'writer invited by one who is still writer',
    );
    const operator = await outsider(srv, org, 'c2_superadmin');
    const second = await newOrganization(srv, 'Elsewhere');
    const byOperator = await invite(operator, second.email, 'owner');
    t.equal(
      (await acceptInvitation(srv, second.apiKey, { token: tokenOf(byOperator.link) })).status,
      200,
    );
    t.same(await membership(second.userId), [{ role: 'owner' }]);
  },
);

t.test(
  'a new link from an admin who may grant the role (getInvitationLink) makes them its sender: it admits again',
  async (t) => {
    const admin = await addMember(srv, org, 'admin');
    const invitee = await newOrganization(srv, 'Elsewhere');
    const inv = await invite(admin, invitee.email, 'writer');
    ok(
      t,
      await owner.client.mutate('organization.removeUser', {
        organizationId: org,
        userId: admin.userId,
      }),
    );
    const refusedAnswer = await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(inv.link) });
    t.equal(refusedAnswer.body.error?.errorCode, 'ROLE_NOT_GRANTABLE');
    const link = ok<any>(
      t,
      await owner.client.mutate('organization.getInvitationLink', {
        organizationId: org,
        invitationId: inv.id,
      }),
    );
    const listed = ok<any>(
      t,
      await owner.client.query('organization.listInvitations', { organizationId: org }),
    );
    t.equal(
      listed.data.find((i: { id: string }) => i.id === inv.id).invitedByUserId,
      owner.userId,
      'the invitation is now the sender of the link’s',
    );
    const accepted = await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(link.link) });
    t.equal(accepted.status, 200, JSON.stringify(accepted.body));
    t.same(await membership(invitee.userId), [{ role: 'writer' }]);
  },
);
