// organization.resendInvitation: the old invitation is revoked and a new one created, with a new
// link and a fresh expiry.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
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
  role = 'member',
  client = admin.client,
  organizationId = org,
) =>
  (
    (await client.mutate('organization.addUser', { organizationId, email, role })) as {
      ok: true;
      data: { id: string; link: string; expiresAt: string };
    }
  ).data;
const resend = (invitationId: unknown, client = admin.client) =>
  client.mutate('organization.resendInvitation', { organizationId: org, invitationId });

t.test('pending: the old one is revoked, a new one created; only the new link works', async (t) => {
  const invitee = await newOrganization(srv, 'Invitee home');
  const old = await invite(invitee.email, 'writer');
  const fresh = ok(t, await resend(old.id));
  t.not(fresh.id, old.id);
  t.match(fresh, {
    email: invitee.email,
    role: 'writer',
    status: 'pending',
    replacesInvitationId: old.id,
    revokedInvitationId: old.id,
    invitedByUserId: admin.userId,
  });
  t.not(tokenOf(fresh.link), tokenOf(old.link));
  t.ok(Date.parse(fresh.expiresAt) >= Date.parse(old.expiresAt));

  const list = (status: string[]) =>
    owner.client.query('organization.listInvitations', { organizationId: org, status });
  t.same(
    ok(t, await list(['pending'])).data.map((i: { id: string }) => i.id),
    [fresh.id],
  );
  t.same(
    ok(t, await list(['revoked'])).data.map((i: { id: string }) => i.id),
    [old.id],
  );

  const stale = await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(old.link) });
  t.same([stale.status, stale.body.error.errorCode], [409, 'INVITATION_NOT_PENDING']);
  const accepted = await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(fresh.link) });
  t.same([accepted.status, accepted.body.role], [200, 'writer']);

  const events = await activities(srv, org, 'organization.resendInvitation');
  t.equal(events.length, 1);
  t.match(events[0], {
    subjectType: 'organization',
    actorUserId: admin.userId,
    changes: {
      invitation: {
        before: { id: old.id, status: 'pending' },
        after: { id: fresh.id, status: 'pending', replaced: old.id },
      },
    },
  });
});

t.test('an expired invitation may be resent: that is what resending is for', async (t) => {
  const old = await invite('late@example.test');
  await expireInvitation(srv, old.id);
  const fresh = ok(t, await resend(old.id));
  t.equal(fresh.status, 'pending');
  const revoked = ok(
    t,
    await owner.client.query('organization.listInvitations', {
      organizationId: org,
      status: ['revoked'],
    }),
  );
  t.ok(
    revoked.data.some((i: { id: string }) => i.id === old.id),
    'the old one is now reported revoked',
  );
});

t.test(
  'an expired invitation is not resent while a newer one for the address is pending: one live invitation per address',
  async (t) => {
    const old = await invite('twice@example.test', 'admin');
    await expireInvitation(srv, old.id);
    const newer = await invite('TWICE@example.test', 'member');
    const err = isError(t, await resend(old.id), 'CONFLICT', 'INVITATION_ALREADY_PENDING');
    t.same(
      (err?.data as { details?: unknown } | undefined)?.details,
      { invitationId: newer.id },
      'names the pending one',
    );
    const pending = ok(
      t,
      await owner.client.query('organization.listInvitations', { organizationId: org }),
    );
    t.same(
      pending.data
        .filter((i: { email: string }) => i.email.toLowerCase() === 'twice@example.test')
        .map((i: { id: string; role: string }) => [i.id, i.role]),
      [[newer.id, 'member']],
      'only the newer one is live; the expired one stays expired',
    );
    const expired = ok(
      t,
      await owner.client.query('organization.listInvitations', {
        organizationId: org,
        status: ['expired'],
      }),
    );
    t.ok(expired.data.some((i: { id: string }) => i.id === old.id));
  },
);

t.test('revoked or accepted: CONFLICT', async (t) => {
  const inv = await invite('gone@example.test');
  ok(
    t,
    await admin.client.mutate('organization.revokeInvitation', {
      organizationId: org,
      invitationId: inv.id,
    }),
  );
  const error = isError(t, await resend(inv.id), 'CONFLICT', 'INVITATION_NOT_PENDING');
  t.same((error as any).data.details, { status: 'revoked' });
  const invitee = await newOrganization(srv, 'Joiner');
  const acc = await invite(invitee.email);
  await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(acc.link) });
  isError(t, await resend(acc.id), 'CONFLICT', 'INVITATION_NOT_PENDING');
});

t.test('the invitee became a member meanwhile: CONFLICT', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  await srv.deps.pool.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [
    org,
    writer.userId,
  ]);
  const inv = await invite(writer.email);
  await srv.deps.pool.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'member')`,
    [org, writer.userId],
  );
  isError(t, await resend(inv.id), 'CONFLICT', 'USER_ALREADY_MEMBER');
});

t.test('a link for a role above the caller’s own is not handed out again', async (t) => {
  const inv = await invite('co-owner@example.test', 'owner', owner.client);
  isError(t, await resend(inv.id), 'FORBIDDEN', 'ROLE_NOT_GRANTABLE');
  ok(t, await resend(inv.id, owner.client));
});

t.test("another organization's invitation, or none: NOT_FOUND, untouched", async (t) => {
  const theirs = await invite('theirs@example.test', 'member', other.client, other.organizationId);
  isError(t, await resend(theirs.id), 'NOT_FOUND', 'INVITATION_NOT_FOUND');
  isError(t, await resend(MISSING_ID), 'NOT_FOUND', 'INVITATION_NOT_FOUND');
  const listed = ok(
    t,
    await other.client.query('organization.listInvitations', {
      organizationId: other.organizationId,
    }),
  );
  t.same(
    listed.data.map((i: { id: string }) => i.id),
    [theirs.id],
  );
});

t.test('below admin: FORBIDDEN; validation', async (t) => {
  const inv = await invite('w@example.test');
  const writer = await addMember(srv, org, 'writer');
  isError(t, await resend(inv.id, writer.client), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
  isError(t, await resend('x'.repeat(10_000)), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
