// mapping.revision.listByMapping: every revision of a mapping, with what changed.
import t from 'tap';
import { computeHeaderHash } from '../../../workers/headerHash.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createMapping, FIELDS, HEADERS, libraryMapping, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const revisions = (mappingId: string, extra: Record<string, unknown> = {}) =>
  owner.client.query('mapping.revision.listByMapping', {
    organizationId: org,
    mappingId,
    ...extra,
  });

const m = await createMapping(t, owner);
const headers2 = [...HEADERS, 'Label'];
for (const patch of [
  { name: 'Two' },
  { headers: headers2 },
  { fields: { ...FIELDS, accountName: { column: 'Label' } } },
  { name: 'Four' },
]) {
  const res = await owner.client.mutate('mapping.updateById', {
    organizationId: org,
    id: m.id,
    ...patch,
  });
  if (!res.ok) throw new Error(res.error.message);
}

t.test('every revision, oldest first, each complete and with its changes', async (t) => {
  const res = ok(t, await revisions(m.id));
  t.same(res.pagination, {
    page: 1,
    limit: 300,
    total: 5,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  t.same(
    res.data.map((r: any) => [r.revision, r.name, r.headerHash, r.changedFields, r.changedById]),
    [
      [1, 'Our layout', m.headerHash, null, owner.userId],
      [2, 'Two', m.headerHash, ['name'], owner.userId],
      [3, 'Two', computeHeaderHash(headers2), ['headers', 'headerHash'], owner.userId],
      [4, 'Two', computeHeaderHash(headers2), ['fields'], owner.userId],
      [5, 'Four', computeHeaderHash(headers2), ['name'], owner.userId],
    ],
  );
  t.same(res.data[3]!.fields, { ...FIELDS, accountName: { column: 'Label' } });
  t.same(res.data[2]!.headers, headers2);
  t.ok(res.data.every((r: any) => r.mappingId === m.id && typeof r.createdAt === 'string'));
});

t.test('pagination: newest first on request, pages and edges', async (t) => {
  const desc = ok(t, await revisions(m.id, { pagination: { sortOrder: 'desc', limit: 2 } }));
  t.same(
    desc.data.map((r: any) => r.revision),
    [5, 4],
  );
  t.same(desc.pagination, {
    page: 1,
    limit: 2,
    total: 5,
    totalPages: 3,
    hasNext: true,
    hasPrev: false,
  });
  const last = ok(
    t,
    await revisions(m.id, { pagination: { page: 3, limit: 2, sortOrder: 'desc' } }),
  );
  t.same(
    last.data.map((r: any) => r.revision),
    [1],
  );
  t.equal(last.data[0]!.changedFields, null);
  const beyond = ok(t, await revisions(m.id, { pagination: { page: 4, limit: 2 } }));
  t.same(beyond, {
    data: [],
    pagination: { page: 4, limit: 2, total: 5, totalPages: 3, hasNext: false, hasPrev: true },
  });
  isError(
    t,
    await revisions(m.id, { pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(
    t,
    await revisions(m.id, { pagination: { sortBy: 'name' } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('library mappings have revisions too', async (t) => {
  const lib = await libraryMapping(t, owner, 'mlc');
  const res = ok(t, await revisions(lib.id));
  t.equal(res.pagination.total, lib.revision);
  t.match(res.data.at(-1), {
    revision: lib.revision,
    headers: lib.headers,
    fields: lib.fields,
    changedById: null,
  });
});

t.test('unknown, foreign and malformed ids; roles', async (t) => {
  const other = await newOrganization(srv, 'Other');
  const theirs = await createMapping(t, other);
  isError(t, await revisions(theirs.id), 'NOT_FOUND', 'MAPPING_NOT_FOUND');
  isError(t, await revisions(UNKNOWN_ID), 'NOT_FOUND', 'MAPPING_NOT_FOUND');
  isError(t, await revisions('x'), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
