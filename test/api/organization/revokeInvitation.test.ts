// organization.revokeInvitation: pending → revoked; the link stops working.
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import { acceptInvitation, activities, expireInvitation, MISSING_ID, tokenOf } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const admin = await addMember(srv, org, 'admin');
const other = await newOrganization(srv, 'Other');
const invite = async (
  email: string,
  client = admin.client,
  organizationId = org,
  role = 'member',
) =>
  (
    (await client.mutate('organization.addUser', { organizationId, email, role })) as {
      ok: true;
      data: { id: string; link: string };
    }
  ).data;
const revoke = (invitationId: unknown, client = admin.client) =>
  client.mutate('organization.revokeInvitation', { organizationId: org, invitationId });

t.test('a pending invitation is revoked; its link no longer works', async (t) => {
  const invitee = await newOrganization(srv, 'Invitee home');
  const inv = await invite(invitee.email);
  const revoked = ok(t, await revoke(inv.id));
  t.match(revoked, { id: inv.id, status: 'revoked', email: invitee.email, acceptedAt: null });
  t.ok(revoked.revokedAt);
  t.notOk('link' in revoked);
  const res = await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(inv.link) });
  t.equal(res.status, 409);
  t.same(res.body.error.errorCode, 'INVITATION_NOT_PENDING');
  t.same(res.body.error.details, { status: 'revoked' });
  const listed = ok(
    t,
    await owner.client.query('organization.listInvitations', {
      organizationId: org,
      status: ['revoked'],
    }),
  );
  t.same(
    listed.data.map((i: { id: string }) => i.id),
    [inv.id],
  );
  const events = await activities(srv, org, 'organization.revokeInvitation');
  t.equal(events.length, 1);
  t.match(events[0], {
    subjectType: 'organization',
    actorUserId: admin.userId,
    changes: {
      invitation: {
        before: { id: inv.id, status: 'pending' },
        after: { id: inv.id, status: 'revoked' },
      },
    },
  });
});

t.test('only a pending invitation: revoked, expired and accepted ones are CONFLICT', async (t) => {
  const inv = await invite('again@example.test');
  ok(t, await revoke(inv.id));
  isError(t, await revoke(inv.id), 'CONFLICT', 'INVITATION_NOT_PENDING', 'revoked');
  const old = await invite('old@example.test');
  await expireInvitation(srv, old.id);
  const error = isError(t, await revoke(old.id), 'CONFLICT', 'INVITATION_NOT_PENDING', 'expired');
  t.same((error as any).data.details, { status: 'expired' });
  const invitee = await newOrganization(srv, 'Joiner');
  const acc = await invite(invitee.email);
  t.equal((await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(acc.link) })).status, 200);
  isError(t, await revoke(acc.id), 'CONFLICT', 'INVITATION_NOT_PENDING', 'accepted');
});

t.test("another organization's invitation, or none: NOT_FOUND, untouched", async (t) => {
  const theirs = await invite('theirs@example.test', other.client, other.organizationId);
  const error = isError(t, await revoke(theirs.id), 'NOT_FOUND', 'INVITATION_NOT_FOUND');
  t.notMatch(JSON.stringify(error), /theirs@/);
  isError(t, await revoke(MISSING_ID), 'NOT_FOUND', 'INVITATION_NOT_FOUND');
  const listed = ok(
    t,
    await other.client.query('organization.listInvitations', {
      organizationId: other.organizationId,
    }),
  );
  t.same(
    listed.data.map((i: { id: string; status: string }) => [i.id, i.status]),
    [[theirs.id, 'pending']],
  );
});

t.test('below admin: FORBIDDEN; validation', async (t) => {
  const inv = await invite('w@example.test');
  const writer = await addMember(srv, org, 'writer');
  isError(t, await revoke(inv.id, writer.client), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
  isError(t, await revoke("1' OR '1'='1"), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(t, await revoke(undefined), 'BAD_REQUEST', 'VALIDATION_FAILED');
});

t.test(
  'an invitation to a role above the caller’s own (or a c2_* role) is not revoked by them: ROLE_NOT_GRANTABLE, still pending',
  async (t) => {
    const coOwner = await invite('co-owner-revoke@example.test', owner.client, org, 'owner');
    isError(t, await revoke(coOwner.id), 'FORBIDDEN', 'ROLE_NOT_GRANTABLE');
    const operator = await outsider(srv, org, 'c2_superadmin');
    const support = await invite(
      'support-revoke@example.test',
      operator.client,
      org,
      'c2_customer_support',
    );
    isError(t, await revoke(support.id, owner.client), 'FORBIDDEN', 'ROLE_NOT_GRANTABLE');
    const pending = ok(
      t,
      await owner.client.query('organization.listInvitations', {
        organizationId: org,
        status: ['pending'],
      }),
    );
    t.same(
      pending.data
        .filter((i: { id: string }) => [coOwner.id, support.id].includes(i.id))
        .map((i: { id: string; status: string }) => [i.id, i.status]),
      [
        [coOwner.id, 'pending'],
        [support.id, 'pending'],
      ],
    );
    t.equal(
      (await activities(srv, org, 'organization.revokeInvitation')).filter((e) =>
        [coOwner.id, support.id].includes((e.changes as any).invitation.before.id),
      ).length,
      0,
    );
    // those who could have made them revoke them: an admin's equal role, the owner, the operator
    const peer = await invite('peer-admin@example.test', owner.client, org, 'admin');
    t.match(ok(t, await revoke(peer.id)), { id: peer.id, status: 'revoked', role: 'admin' });
    t.match(ok(t, await revoke(coOwner.id, owner.client)), {
      id: coOwner.id,
      status: 'revoked',
      role: 'owner',
    });
    t.match(ok(t, await revoke(support.id, operator.client)), {
      id: support.id,
      status: 'revoked',
      role: 'c2_customer_support',
    });
  },
);
