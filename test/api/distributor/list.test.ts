// distributor.list: the organization's own and the library's distributors, each with its mappings.
import t from 'tap';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createDistributor, createMapping } from '../mapping/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const list = (input: Record<string, unknown> = {}) =>
  owner.client.query('distributor.list', { organizationId: org, ...input });

const { rows: libraryRows } = await srv.deps.pool.query<{ name: string }>(
  `SELECT name FROM distributors WHERE organization_id IS NULL ORDER BY lower(name)`,
);
const libraryNames = libraryRows.map((r) => r.name);
const own = [
  await createDistributor(t, owner, 'zeta'),
  await createDistributor(t, owner, 'Alpha Own'),
  await createDistributor(t, owner, 'mid'),
];
const mapped = await createMapping(t, owner, { distributorId: own[1].id });
const other = await newOrganization(srv, 'Other');
await createDistributor(t, other, 'Not visible');

t.test('all visible distributors by name, each with its mappings', async (t) => {
  t.ok(libraryNames.length >= 19, `${libraryNames.length} library distributors`);
  for (const name of [
    'DistroKid',
    'TuneCore',
    'CD Baby',
    'The Orchard',
    'AWAL',
    'Believe',
    'Apple',
    'YouTube',
    'SoundCloud',
    'Bandcamp',
    'Beatport',
    'ASCAP',
    'BMI',
    'SoundExchange',
    'The MLC',
  ]) {
    t.ok(libraryNames.includes(name), `the library has ${name}`);
  }
  const res = ok(t, await list());
  t.same(res.pagination, {
    page: 1,
    limit: 300,
    total: libraryNames.length + 3,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  const names = res.data.map((d: any) => d.name);
  t.same(
    names,
    [...libraryNames, 'zeta', 'Alpha Own', 'mid'].sort((a, b) =>
      a.toLowerCase().localeCompare(b.toLowerCase()),
    ),
  );
  t.notOk(names.includes('Not visible'));
  const alpha = res.data.find((d: any) => d.id === own[1].id);
  t.same(
    alpha!.mappings.map((m: any) => m.id),
    [mapped.id],
  );
  const orchard = res.data.find((d: any) => d.name === 'The Orchard');
  t.same(orchard!.mappings.map((m: any) => m.libraryKey).sort(), ['orchard', 'orchard-legacy']);
  t.equal(orchard!.source, 'library');
});

t.test('source filter and search', async (t) => {
  t.same(
    ok(t, await list({ source: 'organization' })).data.map((d: any) => d.name),
    ['Alpha Own', 'mid', 'zeta'],
  );
  t.same(
    ok(t, await list({ source: 'library' })).data.map((d: any) => d.name),
    libraryNames,
  );
  t.same(
    ok(t, await list({ search: 'ORCH' })).data.map((d: any) => d.name),
    ['The Orchard'],
  );
  t.same(ok(t, await list({ search: "%' OR '1'='1" })).data, []);
});

t.test('pagination edges', async (t) => {
  const p1 = ok(t, await list({ source: 'organization', pagination: { page: 1, limit: 2 } }));
  t.same(
    p1.data.map((d: any) => d.name),
    ['Alpha Own', 'mid'],
  );
  t.same(p1.pagination, {
    page: 1,
    limit: 2,
    total: 3,
    totalPages: 2,
    hasNext: true,
    hasPrev: false,
  });
  const p2 = ok(t, await list({ source: 'organization', pagination: { page: 2, limit: 2 } }));
  t.same(
    p2.data.map((d: any) => d.name),
    ['zeta'],
  );
  t.same(ok(t, await list({ source: 'organization', pagination: { page: 5, limit: 2 } })), {
    data: [],
    pagination: { page: 5, limit: 2, total: 3, totalPages: 2, hasNext: false, hasPrev: true },
  });
  t.same(
    ok(
      t,
      await list({
        source: 'organization',
        pagination: { sortBy: 'createdAt', sortOrder: 'desc' },
      }),
    ).data.map((d: any) => d.name),
    ['mid', 'Alpha Own', 'zeta'],
  );
  t.equal(ok(t, await list({ pagination: { page: 1 } })).pagination.limit, 200);
  isError(
    t,
    await list({ pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(
    t,
    await list({ pagination: { sortBy: 'mappings' } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(t, await list({ source: 'everyone' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
