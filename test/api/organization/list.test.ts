// organization.list: platform operators (c2_superadmin) only; the shared pagination envelope.
import t from 'tap';
import { addMember, newOrganization, outsider, type Caller } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { SQL_INJECTION } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const names = ['Echo', 'alpha', 'Charlie', 'Delta', 'bravo'];
const orgs: Caller[] = [];
for (const name of names) orgs.push(await newOrganization(srv, name));
await addMember(srv, orgs[0]!.organizationId, 'writer');
const operator = await outsider(srv, orgs[0]!.organizationId, 'c2_superadmin');
const list = (input?: unknown) => operator.client.queryUnchecked('organization.list', input);

t.test('only platform superadmins', async (t) => {
  isError(
    t,
    await orgs[0]!.client.query('organization.list'),
    'FORBIDDEN',
    'PLATFORM_ROLE_REQUIRED',
  );
  const support = await outsider(srv, orgs[0]!.organizationId, 'c2_customer_support');
  isError(
    t,
    await support.client.query('organization.list'),
    'FORBIDDEN',
    'PLATFORM_ROLE_REQUIRED',
  );
  isError(t, await srv.anonymous.query('organization.list'), 'UNAUTHORIZED', 'AUTH_REQUIRED');
});

t.test('default: all organizations by name, the envelope with limit 300', async (t) => {
  const res = ok(t, await list());
  t.same(
    res.data.map((o: { name: string }) => o.name),
    ['alpha', 'bravo', 'Charlie', 'Delta', 'Echo'],
    'case-insensitive name order',
  );
  t.same(res.pagination, {
    page: 1,
    limit: 300,
    total: 5,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  t.match(res.data[4], {
    id: orgs[0]!.organizationId,
    name: 'Echo',
    memberCount: 2,
    mdFetchMultiplier: 1,
    mdFetchFocus: false,
    deletedAt: null,
  });
  t.same(ok(t, await list(null)).pagination.total, 5, 'null input is no input');
});

t.test('pagination edges', async (t) => {
  const page1 = ok(t, await list({ pagination: { page: 1, limit: 2 } }));
  t.same(
    page1.data.map((o: { name: string }) => o.name),
    ['alpha', 'bravo'],
  );
  t.same(page1.pagination, {
    page: 1,
    limit: 2,
    total: 5,
    totalPages: 3,
    hasNext: true,
    hasPrev: false,
  });
  const last = ok(t, await list({ pagination: { page: 3, limit: 2 } }));
  t.same(
    last.data.map((o: { name: string }) => o.name),
    ['Echo'],
  );
  t.same(last.pagination, {
    page: 3,
    limit: 2,
    total: 5,
    totalPages: 3,
    hasNext: false,
    hasPrev: true,
  });
  const empty = ok(t, await list({ pagination: { page: 4, limit: 2 } }));
  t.same(empty.data, []);
  t.same(empty.pagination, {
    page: 4,
    limit: 2,
    total: 5,
    totalPages: 3,
    hasNext: false,
    hasPrev: true,
  });
  t.equal(
    ok(t, await list({ pagination: { page: 1 } })).pagination.limit,
    200,
    'only page: limit 200',
  );
  t.equal(ok(t, await list({ pagination: { limit: 2000 } })).data.length, 5, 'limit 2000 is fine');
  isError(
    t,
    await list({ pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(t, await list({ pagination: { limit: 0 } }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(t, await list({ pagination: { page: 0 } }), 'BAD_REQUEST', 'VALIDATION_FAILED');
});

t.test('sorting and search', async (t) => {
  const desc = ok(t, await list({ pagination: { sortBy: 'createdAt', sortOrder: 'desc' } }));
  t.same(
    desc.data.map((o: { name: string }) => o.name),
    [...names].reverse(),
  );
  isError(
    t,
    await list({ pagination: { sortBy: 'id; DROP TABLE organizations' } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  t.same(
    ok(t, await list({ search: 'ELT' })).data.map((o: { name: string }) => o.name),
    ['Delta'],
  );
  t.same(ok(t, await list({ search: SQL_INJECTION })).data, []);
  t.same(ok(t, await list({ search: '%' })).data, [], '% is matched literally');
  isError(t, await list({ search: 'x'.repeat(201) }), 'BAD_REQUEST', 'VALIDATION_FAILED');
});

t.test('includeDeleted', async (t) => {
  ok(
    t,
    await orgs[1]!.client.mutate('organization.delete', {
      organizationId: orgs[1]!.organizationId,
    }),
  );
  t.same(
    ok(t, await list()).data.map((o: { name: string }) => o.name),
    ['bravo', 'Charlie', 'Delta', 'Echo'],
  );
  const all = ok(t, await list({ includeDeleted: true }));
  t.equal(all.pagination.total, 5);
  t.ok(all.data[0]!.deletedAt, 'alpha is reported deleted');
  isError(t, await list({ includeDeleted: 'yes' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
