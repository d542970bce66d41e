// mapping.list: the organization's own mappings and the library's, paginated, with an ids filter.
import { readdirSync } from 'node:fs';
import t from 'tap';
import { computeHeaderHash } from '../../../workers/headerHash.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { repoRoot } from '../../setup/paths.ts';
import { createMapping, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const libraryCount = readdirSync(`${repoRoot}/fixtures/mappings`).filter((f) =>
  f.endsWith('.json'),
).length;

function layout(name: string) {
  const headers = [`${name} period`, `${name} money`];
  return {
    name,
    headers,
    headerHash: computeHeaderHash(headers),
    fields: {
      stmtYear: { column: headers[0] },
      stmtPeriod: { column: headers[0] },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: headers[1] },
    },
  };
}

const mine: any[] = [];
for (const name of ['delta', 'Alpha', 'charlie', 'Bravo'])
  mine.push(await createMapping(t, owner, layout(name)));

const list = async (input: Record<string, unknown>) =>
  owner.client.query('mapping.list', { organizationId: org, ...input });

t.test('without pagination: own and library mappings, by name, limit 300', async (t) => {
  const res = ok(t, await list({}));
  t.same(res.pagination, {
    page: 1,
    limit: 300,
    total: libraryCount + 4,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  const names = res.data.map((m: any) => m.name);
  t.same(
    names,
    [...names].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase())),
    'sorted by name, ignoring case',
  );
  t.equal(res.data.filter((m: any) => m.source === 'library').length, libraryCount);
});

t.test('source filter and search', async (t) => {
  const own = ok(t, await list({ source: 'organization' }));
  t.same(
    own.data.map((m: any) => m.name),
    ['Alpha', 'Bravo', 'charlie', 'delta'],
  );
  const lib = ok(t, await list({ source: 'library' }));
  t.equal(lib.pagination.total, libraryCount);
  t.ok(lib.data.every((m: any) => m.organizationId === null && m.libraryKey !== null));
  t.same(
    ok(t, await list({ search: 'ALPH' })).data.map((m: any) => m.name),
    ['Alpha'],
  );
  t.same(
    ok(t, await list({ search: 'distrokid', source: 'library' }))
      .data.map((m: any) => m.libraryKey)
      .sort(),
    ['distrokid', 'distrokid-legacy'],
  );
  for (const s of ['%', "'", '\\'])
    t.same(ok(t, await list({ search: s })).data, [], `search ${JSON.stringify(s)} is literal`);
  t.same(
    ok(t, await list({ search: '_' })).data.map((m: any) => m.libraryKey),
    ['cargo-digital', 'youtube-asset-raw'],
    '_ matches only names with _ in them',
  );
});

t.test('ids filter: only visible ones come back', async (t) => {
  const other = await newOrganization(srv, 'Other');
  const theirs = await createMapping(t, other);
  const res = ok(t, await list({ ids: [mine[0].id, mine[2].id, theirs.id, UNKNOWN_ID] }));
  t.same(res.data.map((m: any) => m.id).sort(), [mine[0].id, mine[2].id].sort());
  t.equal(res.pagination.total, 2);
  t.same(ok(t, await list({ ids: [] })).data, []);
  isError(t, await list({ ids: ['not-a-uuid'] }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  // 1001 ids do not fit in a URL: the transport refuses them before the schema would
  const huge = await list({ ids: Array.from({ length: 1_001 }, () => UNKNOWN_ID) });
  t.equal(huge.ok, false);
  t.ok(huge.status >= 400 && huge.status < 500, `refused as a client error (${huge.status})`);
});

t.test('pagination edges', async (t) => {
  const p1 = ok(t, await list({ source: 'organization', pagination: { page: 1, limit: 3 } }));
  t.same(
    p1.data.map((m: any) => m.name),
    ['Alpha', 'Bravo', 'charlie'],
  );
  t.same(p1.pagination, {
    page: 1,
    limit: 3,
    total: 4,
    totalPages: 2,
    hasNext: true,
    hasPrev: false,
  });
  const p2 = ok(t, await list({ source: 'organization', pagination: { page: 2, limit: 3 } }));
  t.same(
    p2.data.map((m: any) => m.name),
    ['delta'],
  );
  t.same(p2.pagination, {
    page: 2,
    limit: 3,
    total: 4,
    totalPages: 2,
    hasNext: false,
    hasPrev: true,
  });
  const beyond = ok(t, await list({ source: 'organization', pagination: { page: 9, limit: 3 } }));
  t.same(beyond, {
    data: [],
    pagination: { page: 9, limit: 3, total: 4, totalPages: 2, hasNext: false, hasPrev: true },
  });
  t.equal(
    ok(t, await list({ pagination: { page: 1 } })).pagination.limit,
    200,
    'only page: limit 200',
  );
  const desc = ok(
    t,
    await list({ source: 'organization', pagination: { sortBy: 'createdAt', sortOrder: 'desc' } }),
  );
  t.same(
    desc.data.map((m: any) => m.name),
    ['Bravo', 'charlie', 'Alpha', 'delta'],
  );
  t.equal(ok(t, await list({ pagination: { limit: 2000 } })).pagination.limit, 2000);
  isError(
    t,
    await list({ pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  for (const pagination of [
    { page: 0 },
    { limit: 0 },
    { page: 1.5 },
    { sortBy: 'headers' },
    { sortBy: 'name; DROP TABLE mappings' },
    { sortOrder: 'sideways' },
  ]) {
    isError(
      t,
      await list({ pagination }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      JSON.stringify(pagination),
    );
  }
});

t.test('roles: admin and above', async (t) => {
  const support = await addMember(srv, org, 'c2_customer_support');
  t.equal(
    ok(
      t,
      await support.client.query('mapping.list', { organizationId: org, source: 'organization' }),
    ).pagination.total,
    4,
  );
});
