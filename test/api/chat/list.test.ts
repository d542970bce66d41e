// chat.list: the caller's own chats in the organization, in the shared pagination envelope.
import t from 'tap';
import { createApiKey } from '../../../src/auth/apiKeys.ts';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const db = srv.deps.pool;

async function chat(
  organizationId: string,
  userId: string,
  title: string | null,
  createdDaysAgo: number,
  updatedDaysAgo: number,
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO chats (organization_id, user_id, title, created_at, updated_at)
     VALUES ($1, $2, $3, now() - make_interval(days => $4), now() - make_interval(days => $5)) RETURNING id`,
    [organizationId, userId, title, createdDaysAgo, updatedDaysAgo],
  );
  return rows[0]!.id;
}

const member = await addMember(srv, org, 'member');
const first = await chat(org, member.userId, 'Royalties in March', 10, 1);
const second = await chat(org, member.userId, 'Top territories', 5, 3);
const third = await chat(org, member.userId, null, 1, 2);
await chat(org, owner.userId, "The owner's chat", 1, 1);
const other = await newOrganization(srv, 'Other');
await db.query('INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, $3)', [
  other.organizationId,
  member.userId,
  'member',
]);
await chat(other.organizationId, member.userId, 'In the other organization', 1, 0);

const list = (caller: typeof owner, input: Record<string, unknown> = {}) =>
  caller.client.query('chat.list', { organizationId: org, ...input });

t.test("the caller's chats of this organization, most recently updated first", async (t) => {
  const res = ok(t, await list(member));
  t.same(
    res.data.map((c: any) => c.id),
    [first, third, second],
  );
  t.same(Object.keys(res.data[0]!).sort(), [
    'createdAt',
    'id',
    'organizationId',
    'title',
    'updatedAt',
  ]);
  t.match(res.data[0], { organizationId: org, title: 'Royalties in March' });
  t.equal(res.data[1]!.title, null);
  t.same(res.pagination, {
    page: 1,
    limit: 300,
    total: 3,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  t.same(
    ok(t, await list(owner)).data.map((c: any) => c.title),
    ["The owner's chat"],
  );
  const nobody = await addMember(srv, org, 'reader');
  t.same(ok(t, await list(nobody)), {
    data: [],
    pagination: { page: 1, limit: 300, total: 0, totalPages: 0, hasNext: false, hasPrev: false },
  });
});

t.test('sortBy, pages, search', async (t) => {
  t.same(
    ok(t, await list(member, { pagination: { sortBy: 'createdAt', sortOrder: 'desc' } })).data.map(
      (c: any) => c.id,
    ),
    [third, second, first],
  );
  t.same(
    ok(t, await list(member, { pagination: { sortBy: 'title' } })).data.map((c: any) => c.id),
    [first, second, third],
    'untitled last',
  );
  const p2 = ok(t, await list(member, { pagination: { page: 2, limit: 2 } }));
  t.same(
    p2.data.map((c: any) => c.id),
    [second],
  );
  t.same(p2.pagination, {
    page: 2,
    limit: 2,
    total: 3,
    totalPages: 2,
    hasNext: false,
    hasPrev: true,
  });
  t.same(ok(t, await list(member, { pagination: { page: 3, limit: 2 } })).data, []);
  t.equal(ok(t, await list(member, { pagination: { limit: 2000 } })).data.length, 3);
  isError(
    t,
    await list(member, { pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(
    t,
    await list(member, { pagination: { sortBy: 'user_id' } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  t.same(
    ok(t, await list(member, { search: 'MARCH' })).data.map((c: any) => c.id),
    [first],
  );
  t.same(ok(t, await list(member, { search: "' OR 1=1 --" })).data, []);
  t.same(ok(t, await list(member, { search: '%' })).data, []);
});

t.test('outsiders are refused; the organization is the one asked for', async (t) => {
  const stranger = await outsider(srv, org);
  isError(
    t,
    await stranger.client.query('chat.list', { organizationId: org }),
    'FORBIDDEN',
    'NOT_ORGANIZATION_MEMBER',
  );
  // the same member reads only the other organization's chats there
  const { key } = await createApiKey(db, {
    userId: member.userId,
    name: 'other',
    organizationIds: [other.organizationId],
    patterns: ['*'],
  });
  const there = ok(
    t,
    await srv
      .client({ 'x-api-key': key, 'x-organization-id': other.organizationId })
      .query('chat.list', { organizationId: other.organizationId }),
  );
  t.same(
    there.data.map((c: any) => c.title),
    ['In the other organization'],
  );
  isError(t, await list(member, { organizationId: 'nope' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
