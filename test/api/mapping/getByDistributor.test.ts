// mapping.getByDistributor: the mappings of one distributor the organization sees.
import t from 'tap';
import { computeHeaderHash } from '../../../workers/headerHash.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createDistributor, createMapping, libraryMapping, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const byDistributor = (distributorId: unknown, extra: Record<string, unknown> = {}) =>
  owner.client.queryUnchecked('mapping.getByDistributor', {
    organizationId: org,
    distributorId,
    ...extra,
  });

function layout(name: string, distributorId: string) {
  const headers = [`${name} month`, `${name} amount`];
  return {
    name,
    distributorId,
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

t.test('an own distributor: its mappings, paginated by name', async (t) => {
  const d = await createDistributor(t, owner, 'Paged');
  const made = [];
  for (const name of ['c', 'A', 'b']) made.push(await createMapping(t, owner, layout(name, d.id)));
  await createMapping(
    t,
    owner,
    layout('elsewhere', (await createDistributor(t, owner, 'Elsewhere')).id),
  );
  const all = ok(t, await byDistributor(d.id));
  t.same(
    all.data.map((m: any) => m.name),
    ['A', 'b', 'c'],
  );
  t.same(all.pagination, {
    page: 1,
    limit: 300,
    total: 3,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  const p2 = ok(t, await byDistributor(d.id, { pagination: { page: 2, limit: 2 } }));
  t.same(
    p2.data.map((m: any) => m.name),
    ['c'],
  );
  t.same(p2.pagination, {
    page: 2,
    limit: 2,
    total: 3,
    totalPages: 2,
    hasNext: false,
    hasPrev: true,
  });
  t.same(ok(t, await byDistributor(d.id, { pagination: { page: 3, limit: 2 } })).data, []);
  t.same(
    ok(
      t,
      await byDistributor(d.id, { pagination: { sortBy: 'name', sortOrder: 'desc' } }),
    ).data.map((m: any) => m.name),
    ['c', 'b', 'A'],
  );
  isError(
    t,
    await byDistributor(d.id, { pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
});

t.test(
  "a library distributor: its library mappings plus the organization's own for it",
  async (t) => {
    const orchard = await libraryMapping(t, owner, 'orchard');
    const res = ok(t, await byDistributor(orchard.distributorId));
    t.same(res.data.map((m: any) => m.libraryKey).sort(), ['orchard', 'orchard-legacy']);
    const own = await createMapping(t, owner, layout('Orchard variant', orchard.distributorId));
    const other = await newOrganization(srv, 'Other');
    await createMapping(t, other, layout('Their variant', orchard.distributorId));
    const now = ok(t, await byDistributor(orchard.distributorId));
    t.equal(now.pagination.total, 3);
    t.ok(now.data.some((m: any) => m.id === own.id));
    t.notOk(now.data.some((m: any) => m.name === 'Their variant'));
  },
);

t.test('foreign, unknown and malformed distributor ids', async (t) => {
  const other = await newOrganization(srv, 'Foreign');
  const theirs = await createDistributor(t, other, 'Theirs');
  isError(t, await byDistributor(theirs.id), 'NOT_FOUND', 'DISTRIBUTOR_NOT_FOUND');
  isError(t, await byDistributor(UNKNOWN_ID), 'NOT_FOUND', 'DISTRIBUTOR_NOT_FOUND');
  isError(t, await byDistributor(undefined), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(t, await byDistributor("' OR 1=1 --"), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
