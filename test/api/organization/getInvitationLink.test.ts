// organization.getInvitationLink: a fresh single-use link for a pending invitation (only the
// token's hash is stored, so each call issues a new token and earlier links stop working).
import t from 'tap';
import { invitationLink } from '../../../src/invitations/invitations.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import {
  acceptInvitation,
  activities,
  expireInvitation,
  MISSING_ID,
  startServerWithPublicUrl,
  tokenOf,
} from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startServerWithPublicUrl(t);
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
const getLink = (invitationId: unknown, client = admin.client) =>
  client.mutate('organization.getInvitationLink', { organizationId: org, invitationId });

t.test(
  'each call issues a new link; the earlier ones stop working; the link itself can be POSTed',
  async (t) => {
    const invitee = await newOrganization(srv, 'Invitee home');
    const inv = await invite(invitee.email, 'reader');
    const first = ok(t, await getLink(inv.id));
    t.same(Object.keys(first).sort(), ['email', 'expiresAt', 'invitationId', 'link']);
    t.match(first, { invitationId: inv.id, email: invitee.email, expiresAt: inv.expiresAt });
    t.equal(first.link, `${srv.url}/invitations/accept?token=${tokenOf(first.link)}`);
    const second = ok(t, await getLink(inv.id));
    t.not(tokenOf(second.link), tokenOf(first.link));

    for (const stale of [inv.link, first.link]) {
      const res = await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(stale) });
      t.same([res.status, res.body.error.errorCode], [404, 'INVITATION_NOT_FOUND']);
    }
    const res = await fetch(second.link, {
      method: 'POST',
      headers: { 'x-api-key': invitee.apiKey },
    });
    t.equal(res.status, 200);
    t.match(await res.json(), { invitationId: inv.id, organizationId: org, role: 'reader' });
    t.equal((await activities(srv, org, 'organization.getInvitationLink')).length, 2);
  },
);

t.test('only while pending', async (t) => {
  const revoked = await invite('revoked@example.test');
  await admin.client.mutate('organization.revokeInvitation', {
    organizationId: org,
    invitationId: revoked.id,
  });
  isError(t, await getLink(revoked.id), 'CONFLICT', 'INVITATION_NOT_PENDING', 'revoked');
  const expired = await invite('expired@example.test');
  await expireInvitation(srv, expired.id);
  isError(t, await getLink(expired.id), 'CONFLICT', 'INVITATION_NOT_PENDING', 'expired');
});

t.test('a link for a role above the caller’s own: FORBIDDEN', async (t) => {
  const inv = await invite('co-owner@example.test', 'owner', owner.client);
  isError(t, await getLink(inv.id), 'FORBIDDEN', 'ROLE_NOT_GRANTABLE');
  ok(t, await getLink(inv.id, owner.client));
});

t.test("another organization's invitation, or none: NOT_FOUND, no link", async (t) => {
  const theirs = await invite('theirs@example.test', 'member', other.client, other.organizationId);
  const error = isError(t, await getLink(theirs.id), 'NOT_FOUND', 'INVITATION_NOT_FOUND');
  t.notMatch(JSON.stringify(error), /inv_|theirs@/);
  isError(t, await getLink(MISSING_ID), 'NOT_FOUND', 'INVITATION_NOT_FOUND');
});

t.test('below admin: FORBIDDEN; validation', async (t) => {
  const inv = await invite('w@example.test');
  const writer = await addMember(srv, org, 'writer');
  isError(t, await getLink(inv.id, writer.client), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
  isError(t, await getLink(42), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(
    t,
    await admin.client.call('GET', 'organization.getInvitationLink', {
      organizationId: org,
      invitationId: inv.id,
    }),
    'BAD_REQUEST',
    'METHOD_NOT_SUPPORTED',
  );
});

t.test('the link base: PUBLIC_URL (trailing slash dropped), else HOST:PORT', async (t) => {
  t.equal(
    invitationLink(
      { publicUrl: 'https://app.example.test/', host: '127.0.0.1', port: 3000 },
      'inv_a',
    ),
    'https://app.example.test/invitations/accept?token=inv_a',
  );
  t.equal(
    invitationLink({ publicUrl: undefined, host: '127.0.0.1', port: 3000 }, 'inv_a'),
    'http://127.0.0.1:3000/invitations/accept?token=inv_a',
  );
  t.equal(
    invitationLink({ publicUrl: undefined, host: '0.0.0.0', port: 8080 }, 'inv_a'),
    'http://localhost:8080/invitations/accept?token=inv_a',
  );
  t.equal(
    invitationLink({ publicUrl: undefined, host: '::1', port: 8080 }, 'inv_a'),
    'http://[::1]:8080/invitations/accept?token=inv_a',
  );
});
