// organization.addUser: an admin invites a person by e-mail address; the invitation carries a
// single-use link whose token is stored only as its SHA-256.
import { createHash } from 'node:crypto';
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import {
  activities,
  expireInvitation,
  SQL_INJECTION,
  startServerWithPublicUrl,
  tokenOf,
} from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startServerWithPublicUrl(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const admin = await addMember(srv, org, 'admin');
const invite = (input: object, client = admin.client) =>
  client.mutate('organization.addUser', { organizationId: org, ...input });

t.test('creates a pending invitation with a link, valid for 7 days', async (t) => {
  const inv = ok(t, await invite({ email: 'New.Person@Example.test', role: 'writer' }));
  t.same(Object.keys(inv).sort(), [
    'acceptedAt',
    'acceptedByUserId',
    'createdAt',
    'email',
    'expiresAt',
    'id',
    'invitedByUserId',
    'link',
    'organizationId',
    'replacesInvitationId',
    'revokedAt',
    'role',
    'status',
  ]);
  t.match(inv, {
    organizationId: org,
    email: 'New.Person@Example.test',
    role: 'writer',
    status: 'pending',
    invitedByUserId: admin.userId,
    replacesInvitationId: null,
    acceptedAt: null,
    revokedAt: null,
  });
  t.equal(
    Date.parse(inv.expiresAt) - Date.parse(inv.createdAt),
    7 * 24 * 3600 * 1000,
    'INVITATION_TTL_HOURS defaults to 168',
  );
  t.equal(
    inv.link,
    `${srv.url}/invitations/accept?token=${tokenOf(inv.link)}`,
    'PUBLIC_URL + the accept path',
  );
  t.match(tokenOf(inv.link), /^inv_[A-Za-z0-9_-]{43}$/);

  const token = tokenOf(inv.link);
  const { rows } = await srv.deps.pool.query('SELECT token_hash FROM invitations WHERE id = $1', [
    inv.id,
  ]);
  t.same(
    rows[0].token_hash,
    createHash('sha256').update(token).digest(),
    'only the SHA-256 of the token is stored',
  );
  const leaked = await srv.deps.pool.query(
    `SELECT count(*)::int AS n FROM invitations i WHERE row_to_json(i)::text LIKE '%' || $1 || '%'`,
    [token],
  );
  t.equal(leaked.rows[0].n, 0, 'the token itself is nowhere in the table');

  const events = await activities(srv, org, 'organization.addUser');
  t.equal(events.length, 1);
  t.match(events[0], {
    subjectType: 'organization',
    subjectId: org,
    actorUserId: admin.userId,
    changes: {
      invitation: {
        before: null,
        after: { id: inv.id, email: 'New.Person@Example.test', role: 'writer' },
      },
    },
  });
});

t.test('the role defaults to member', async (t) => {
  t.equal(ok(t, await invite({ email: 'plain@example.test' })).role, 'member');
});

t.test(
  'one pending invitation per address (case-insensitive); after expiry a new one is fine',
  async (t) => {
    const first = ok(t, await invite({ email: 'twice@example.test' }));
    const error = isError(
      t,
      await invite({ email: 'TWICE@example.test' }),
      'CONFLICT',
      'INVITATION_ALREADY_PENDING',
    );
    t.same((error as any).data.details, { invitationId: first.id });
    await expireInvitation(srv, first.id);
    const second = ok(t, await invite({ email: 'TWICE@example.test' }));
    t.not(second.id, first.id);
  },
);

t.test('members are not invited again', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  isError(
    t,
    await invite({ email: writer.email.toUpperCase() }),
    'CONFLICT',
    'USER_ALREADY_MEMBER',
  );
});

t.test('nobody invites to a role above their own; c2_* only by platform operators', async (t) => {
  isError(
    t,
    await invite({ email: 'boss@example.test', role: 'owner' }),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
  );
  isError(
    t,
    await invite({ email: 'cs@example.test', role: 'c2_customer_support' }),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
  );
  isError(
    t,
    await invite({ email: 'cs@example.test', role: 'c2_superadmin' }, owner.client),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
  );
  t.equal(
    ok(t, await invite({ email: 'boss@example.test', role: 'owner' }, owner.client)).role,
    'owner',
  );
  const operator = await outsider(srv, org, 'c2_superadmin');
  t.equal(
    ok(t, await invite({ email: 'cs@example.test', role: 'c2_customer_support' }, operator.client))
      .role,
    'c2_customer_support',
  );
});

t.test('below admin: FORBIDDEN', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  isError(
    t,
    await invite({ email: 'w@example.test' }, writer.client),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );
});

t.test('validation and hostile input', async (t) => {
  for (const email of [
    'not-an-email',
    '',
    SQL_INJECTION,
    `${'a'.repeat(320)}@example.test`,
    ['a@example.test'],
    null,
  ]) {
    isError(
      t,
      await invite({ email }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      JSON.stringify(email).slice(0, 40),
    );
  }
  isError(
    t,
    await invite({ email: 'ok@example.test', role: 'root' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(t, await invite({}), 'BAD_REQUEST', 'VALIDATION_FAILED');
});

t.test('INVITATION_TTL_HOURS sets the expiry', async (t) => {
  const short = await startTestServer(t, { env: { INVITATION_TTL_HOURS: '2' } });
  const o = await newOrganization(short, 'Short');
  const inv = ok(
    t,
    await o.client.mutate('organization.addUser', {
      organizationId: o.organizationId,
      email: 'soon@example.test',
    }),
  );
  t.equal(Date.parse(inv.expiresAt) - Date.parse(inv.createdAt), 2 * 3600 * 1000);
  t.match(
    inv.link,
    /^http:\/\/127\.0\.0\.1:0\/invitations\/accept\?token=inv_/,
    'without PUBLIC_URL: the configured HOST:PORT',
  );
});
