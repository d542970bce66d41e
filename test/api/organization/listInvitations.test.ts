// organization.listInvitations: members see the invitations by status (default [pending]);
// expired is computed from expires_at when read.
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import { acceptInvitation, expireInvitation, tokenOf } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const member = await addMember(srv, org, 'member');
const other = await newOrganization(srv, 'Other');
const invite = async (email: string) =>
  (await owner.client.mutate('organization.addUser', { organizationId: org, email })) as {
    ok: true;
    data: { id: string; link: string };
  };

const pending1 = (await invite('p1@example.test')).data;
const pending2 = (await invite('p2@example.test')).data;
const revoked = (await invite('revoked@example.test')).data;
await owner.client.mutate('organization.revokeInvitation', {
  organizationId: org,
  invitationId: revoked.id,
});
const expired = (await invite('expired@example.test')).data;
await expireInvitation(srv, expired.id);
const invitee = await newOrganization(srv, 'Invitee home');
const accepted = (await invite(invitee.email)).data;
await acceptInvitation(srv, invitee.apiKey, { token: tokenOf(accepted.link) });
await other.client.mutate('organization.addUser', {
  organizationId: other.organizationId,
  email: 'elsewhere@example.test',
});

const list = (input: object = {}, client = member.client) =>
  client.query('organization.listInvitations', { organizationId: org, ...input });
const ids = (res: { data: { id: string }[] }) => res.data.map((i) => i.id);

t.test('default: the pending ones, oldest first, no link or token in the list', async (t) => {
  const res = ok(t, await list());
  t.same(ids(res), [pending1.id, pending2.id]);
  t.same(res.pagination, {
    page: 1,
    limit: 300,
    total: 2,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  t.match(res.data[0], {
    email: 'p1@example.test',
    role: 'member',
    status: 'pending',
    organizationId: org,
    invitedByUserId: owner.userId,
  });
  t.notOk('link' in res.data[0]);
  t.notMatch(JSON.stringify(res), /inv_/);
});

t.test('each status, computed at read time', async (t) => {
  t.same(ids(ok(t, await list({ status: ['revoked'] }))), [revoked.id]);
  const exp = ok(t, await list({ status: ['expired'] }));
  t.same(ids(exp), [expired.id]);
  t.equal(exp.data[0].status, 'expired');
  const acc = ok(t, await list({ status: ['accepted'] }));
  t.same(ids(acc), [accepted.id]);
  t.match(acc.data[0], { status: 'accepted', acceptedByUserId: invitee.userId });
  t.ok(acc.data[0].acceptedAt);
  const all = ok(t, await list({ status: ['pending', 'accepted', 'revoked', 'expired'] }));
  t.same(
    ids(all),
    [pending1.id, pending2.id, revoked.id, expired.id, accepted.id],
    'never another organization’s',
  );
  t.same(
    ids(ok(t, await list({ status: ['pending', 'pending'] }))),
    [pending1.id, pending2.id],
    'repeats are harmless',
  );
});

t.test('pagination edges and order', async (t) => {
  const all = ['pending', 'accepted', 'revoked', 'expired'];
  const p1 = ok(t, await list({ status: all, pagination: { page: 1, limit: 2 } }));
  t.same(ids(p1), [pending1.id, pending2.id]);
  t.same(p1.pagination, {
    page: 1,
    limit: 2,
    total: 5,
    totalPages: 3,
    hasNext: true,
    hasPrev: false,
  });
  const last = ok(t, await list({ status: all, pagination: { page: 3, limit: 2 } }));
  t.same(ids(last), [accepted.id]);
  t.same(last.pagination, {
    page: 3,
    limit: 2,
    total: 5,
    totalPages: 3,
    hasNext: false,
    hasPrev: true,
  });
  const empty = ok(t, await list({ status: all, pagination: { page: 4, limit: 2 } }));
  t.same(empty.data, []);
  t.equal(empty.pagination.hasPrev, true);
  t.same(ids(ok(t, await list({ status: all, pagination: { sortOrder: 'desc', limit: 2000 } }))), [
    accepted.id,
    expired.id,
    revoked.id,
    pending2.id,
    pending1.id,
  ]);
  isError(
    t,
    await list({ pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
});

t.test('validation', async (t) => {
  for (const status of [
    [],
    ['bogus'],
    'pending',
    ["pending' OR 1=1 --"],
    Array(5).fill('pending'),
    Array(500).fill('pending'),
  ]) {
    isError(
      t,
      await list({ status }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      `status ${JSON.stringify(status).slice(0, 30)}`,
    );
  }
});

t.test('outsiders: FORBIDDEN', async (t) => {
  const stranger = await outsider(srv, org);
  isError(
    t,
    await stranger.client.query('organization.listInvitations', { organizationId: org }),
    'FORBIDDEN',
    'NOT_ORGANIZATION_MEMBER',
  );
  isError(
    t,
    await srv.anonymous.query('organization.listInvitations', { organizationId: org }),
    'UNAUTHORIZED',
    'AUTH_REQUIRED',
  );
});
