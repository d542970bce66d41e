// organization.listUsers: admins; members with role and status in the shared envelope.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
// e-mail addresses start with the role, so the e-mail order is known: admin, member, owner, reader, writer
const admin = await addMember(srv, org, 'admin');
const member = await addMember(srv, org, 'member');
const reader = await addMember(srv, org, 'reader', { status: 'disabled' });
const writer = await addMember(srv, org, 'writer');
const other = await newOrganization(srv, 'Other');
await addMember(srv, other.organizationId, 'admin');
const list = (input: object = {}, client = admin.client) =>
  client.query('organization.listUsers', { organizationId: org, ...input });

t.test('every member, by name (no display names: by e-mail), with exact fields', async (t) => {
  const res = ok(t, await list());
  t.same(
    res.data.map(
      (m: {
        userId: string;
        email: string;
        role: string;
        status: string;
        displayName: string | null;
      }) => ({
        userId: m.userId,
        email: m.email,
        role: m.role,
        status: m.status,
        displayName: m.displayName,
      }),
    ),
    [
      {
        userId: admin.userId,
        email: admin.email,
        role: 'admin',
        status: 'active',
        displayName: null,
      },
      {
        userId: member.userId,
        email: member.email,
        role: 'member',
        status: 'active',
        displayName: null,
      },
      {
        userId: owner.userId,
        email: owner.email,
        role: 'owner',
        status: 'active',
        displayName: null,
      },
      {
        userId: reader.userId,
        email: reader.email,
        role: 'reader',
        status: 'disabled',
        displayName: null,
      },
      {
        userId: writer.userId,
        email: writer.email,
        role: 'writer',
        status: 'active',
        displayName: null,
      },
    ],
  );
  t.same(Object.keys(res.data[0] ?? {}).sort(), [
    'displayName',
    'email',
    'joinedAt',
    'role',
    'status',
    'updatedAt',
    'userId',
  ]);
  t.same(res.pagination, {
    page: 1,
    limit: 300,
    total: 5,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
});

t.test('pagination edges', async (t) => {
  const p1 = ok(t, await list({ pagination: { page: 1, limit: 2 } }));
  t.same(
    p1.data.map((m: { userId: string }) => m.userId),
    [admin.userId, member.userId],
  );
  t.same(p1.pagination, {
    page: 1,
    limit: 2,
    total: 5,
    totalPages: 3,
    hasNext: true,
    hasPrev: false,
  });
  const last = ok(t, await list({ pagination: { page: 3, limit: 2 } }));
  t.same(
    last.data.map((m: { userId: string }) => m.userId),
    [writer.userId],
  );
  t.same(last.pagination, {
    page: 3,
    limit: 2,
    total: 5,
    totalPages: 3,
    hasNext: false,
    hasPrev: true,
  });
  const empty = ok(t, await list({ pagination: { page: 9, limit: 2 } }));
  t.same(empty.data, []);
  t.same(empty.pagination, {
    page: 9,
    limit: 2,
    total: 5,
    totalPages: 3,
    hasNext: false,
    hasPrev: true,
  });
  t.equal(ok(t, await list({ pagination: { limit: 2000 } })).data.length, 5);
  t.equal(ok(t, await list({ pagination: { page: 1 } })).pagination.limit, 200);
  isError(
    t,
    await list({ pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
});

t.test('sorting', async (t) => {
  const byRole = ok(t, await list({ pagination: { sortBy: 'role', sortOrder: 'desc' } }));
  t.same(byRole.data[0]?.role, 'owner');
  t.same(byRole.data[1]?.role, 'admin');
  t.same(byRole.data[2]?.role, 'writer');
  const byStatus = ok(t, await list({ pagination: { sortBy: 'status', sortOrder: 'desc' } }));
  t.equal(byStatus.data[0]?.userId, reader.userId);
  const byJoined = ok(t, await list({ pagination: { sortBy: 'joinedAt' } }));
  t.same(
    byJoined.data.map((m: { userId: string }) => m.userId),
    [owner.userId, admin.userId, member.userId, reader.userId, writer.userId],
  );
  isError(
    t,
    await list({ pagination: { sortBy: 'password' } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('below admin: FORBIDDEN; other organizations: FORBIDDEN', async (t) => {
  isError(t, await list({}, writer.client), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
  isError(t, await list({}, member.client), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
  isError(
    t,
    await admin.client.query('organization.listUsers', { organizationId: other.organizationId }),
    'BAD_REQUEST',
    'ORGANIZATION_MISMATCH',
  );
  const viaHeader = admin.client.with({ 'x-organization-id': other.organizationId });
  isError(
    t,
    await viaHeader.query('organization.listUsers', { organizationId: other.organizationId }),
    'FORBIDDEN',
    'API_KEY_SCOPE_DENIED',
  );
});

t.test(
  "by default by name (the specification's default sortBy), the display name where there is one, else the e-mail address",
  async (t) => {
    await srv.deps.pool.query('UPDATE users SET display_name = $2 WHERE id = $1', [
      admin.userId,
      'Zoë Admin',
    ]);
    t.teardown(() =>
      srv.deps.pool.query('UPDATE users SET display_name = NULL WHERE id = $1', [admin.userId]),
    );
    const ids = (res: { data: { userId: string }[] }) => res.data.map((m) => m.userId);
    const byName = [member.userId, owner.userId, reader.userId, writer.userId, admin.userId];
    t.same(ids(ok(t, await list())), byName, 'no pagination');
    t.same(
      ids(ok(t, await list({ pagination: { page: 1 } }))),
      byName,
      'pagination without sortBy',
    );
    t.same(
      ids(ok(t, await list({ pagination: { sortOrder: 'desc' } }))),
      [...byName].reverse(),
      'sortOrder alone',
    );
    t.same(ids(ok(t, await list({ pagination: { sortBy: 'email' } }))), [
      admin.userId,
      member.userId,
      owner.userId,
      reader.userId,
      writer.userId,
    ]);
  },
);
