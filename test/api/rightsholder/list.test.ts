// rightsholder.list: the pagination envelope, search, soft-deleted ones, the member's sort
// preference, explicit sortBy, data-access roles.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createRightsholder, hostileStrings } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const names = (res: any) => res.data.map((r: any) => r.name);

// created in this order: created_at ascending
const charlie = await createRightsholder(t, owner, 'charlie', {
  legalName: 'Charlie Legal',
  aliases: ['Chaz'],
});
const alpha = await createRightsholder(t, owner, 'Alpha');
const bravo = await createRightsholder(t, owner, 'bravo');

const list = (caller = owner, input: Record<string, unknown> = {}) =>
  caller.client.query('rightsholder.list', { organizationId: org, ...input });

t.test(
  'the shared envelope; default order alphabetical (no preference set), case-insensitive',
  async (t) => {
    const res = ok(t, await list());
    t.same(names(res), ['Alpha', 'bravo', 'charlie']);
    t.same(res.pagination, {
      page: 1,
      limit: 300,
      total: 3,
      totalPages: 1,
      hasNext: false,
      hasPrev: false,
    });
    t.same(res.data[0], alpha);
  },
);

t.test('pages: a middle page, the last page, a page past the end, limits', async (t) => {
  const p1 = ok(t, await list(owner, { pagination: { page: 1, limit: 2 } }));
  t.same(names(p1), ['Alpha', 'bravo']);
  t.same(p1.pagination, {
    page: 1,
    limit: 2,
    total: 3,
    totalPages: 2,
    hasNext: true,
    hasPrev: false,
  });
  const p2 = ok(t, await list(owner, { pagination: { page: 2, limit: 2 } }));
  t.same(names(p2), ['charlie']);
  t.same(p2.pagination, {
    page: 2,
    limit: 2,
    total: 3,
    totalPages: 2,
    hasNext: false,
    hasPrev: true,
  });
  const p9 = ok(t, await list(owner, { pagination: { page: 9, limit: 2 } }));
  t.same(p9.data, []);
  t.same(p9.pagination, {
    page: 9,
    limit: 2,
    total: 3,
    totalPages: 2,
    hasNext: false,
    hasPrev: true,
  });
  t.equal(
    ok(t, await list(owner, { pagination: { page: 1 } })).pagination.limit,
    200,
    'only page given: limit 200',
  );
  t.equal(ok(t, await list(owner, { pagination: { limit: 2000 } })).pagination.limit, 2000);
  isError(
    t,
    await list(owner, { pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(t, await list(owner, { pagination: { limit: 0 } }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(t, await list(owner, { pagination: { page: 0 } }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(
    t,
    await list(owner, { pagination: { sortBy: 'password' } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('an empty organization lists nothing', async (t) => {
  const empty = await newOrganization(srv, 'Empty');
  const res = ok(
    t,
    await empty.client.query('rightsholder.list', { organizationId: empty.organizationId }),
  );
  t.same(res, {
    data: [],
    pagination: { page: 1, limit: 300, total: 0, totalPages: 0, hasNext: false, hasPrev: false },
  });
});

t.test('explicit sortBy overrides the preference', async (t) => {
  t.same(names(ok(t, await list(owner, { pagination: { sortBy: 'name', sortOrder: 'desc' } }))), [
    'charlie',
    'bravo',
    'Alpha',
  ]);
  t.same(names(ok(t, await list(owner, { pagination: { sortBy: 'createdAt' } }))), [
    'charlie',
    'Alpha',
    'bravo',
  ]);
  t.same(
    names(ok(t, await list(owner, { pagination: { sortBy: 'createdAt', sortOrder: 'desc' } }))),
    ['bravo', 'Alpha', 'charlie'],
  );
});

t.test("the caller's sort preference orders the list", async (t) => {
  const m = await addMember(srv, org, 'writer');
  ok(
    t,
    await m.client.mutate('user.setRightsholderSort', {
      organizationId: org,
      sort: 'recently_created',
    }),
  );
  t.same(names(ok(t, await list(m))), ['bravo', 'Alpha', 'charlie']);
  t.same(
    names(ok(t, await list(owner))),
    ['Alpha', 'bravo', 'charlie'],
    "another member's preference is their own",
  );

  ok(
    t,
    await m.client.mutate('user.setRightsholderSort', {
      organizationId: org,
      sort: 'last_updated',
    }),
  );
  // an update moves alpha first; a later visit of charlie moves charlie before it
  ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: alpha.id,
      name: 'Alpha',
      aliases: ['A'],
    }),
  );
  t.same(names(ok(t, await list(m))), ['Alpha', 'bravo', 'charlie']);
  ok(
    t,
    await m.client.mutate('activity.trackVisit', {
      organizationId: org,
      subjectType: 'rightsholder',
      subjectId: charlie.id,
    }),
  );
  t.same(names(ok(t, await list(m))), ['charlie', 'Alpha', 'bravo']);
  // visits are per member: the owner's visit does not reorder the member's list
  ok(
    t,
    await owner.client.mutate('activity.trackVisit', {
      organizationId: org,
      subjectType: 'rightsholder',
      subjectId: bravo.id,
    }),
  );
  t.same(names(ok(t, await list(m))), ['charlie', 'Alpha', 'bravo']);

  ok(
    t,
    await m.client.mutate('user.setRightsholderSort', {
      organizationId: org,
      sort: 'alphabetical',
    }),
  );
  t.same(names(ok(t, await list(m))), ['Alpha', 'bravo', 'charlie']);
});

t.test(
  'search matches name, legal name and aliases, case-insensitively; wildcards are literal',
  async (t) => {
    t.same(names(ok(t, await list(owner, { search: 'ALP' }))), ['Alpha']);
    t.same(names(ok(t, await list(owner, { search: 'legal' }))), ['charlie']);
    t.same(names(ok(t, await list(owner, { search: 'chaz' }))), ['charlie']);
    t.same(names(ok(t, await list(owner, { search: '' }))), ['Alpha', 'bravo', 'charlie']);
    t.same(ok(t, await list(owner, { search: '%' })).data, []);
    t.same(ok(t, await list(owner, { search: '_' })).data, []);
    for (const s of hostileStrings) {
      const res = await list(owner, { search: s });
      t.ok(res.ok, `search ${s} answers`);
    }
    isError(t, await list(owner, { search: 'x'.repeat(201) }), 'BAD_REQUEST', 'VALIDATION_FAILED');
    isError(t, await list(owner, { search: 'a\u0000' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  },
);

t.test('soft-deleted rightsholders are hidden unless includeDeleted', async (t) => {
  const gone = await createRightsholder(t, owner, 'Gone');
  ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: gone.id,
      name: 'Gone',
      isDeleted: true,
    }),
  );
  t.same(names(ok(t, await list())), ['Alpha', 'bravo', 'charlie']);
  const all = ok(t, await list(owner, { includeDeleted: true }));
  t.same(names(all), ['Alpha', 'bravo', 'charlie', 'Gone']);
  t.equal(all.pagination.total, 4);
  t.equal(all.data[3]!.isDeleted, true);
});

t.test(
  'a restricted member lists only their rightsholders; other organizations never appear',
  async (t) => {
    const restricted = await addMember(srv, org, 'member');
    await srv.deps.pool.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
      [org, restricted.userId, [bravo.id]],
    );
    const res = ok(t, await list(restricted));
    t.same(names(res), ['bravo']);
    t.equal(res.pagination.total, 1);

    const other = await newOrganization(srv, 'Other');
    await createRightsholder(t, other, 'Alpha Other');
    t.same(names(ok(t, await list(owner, { search: 'alpha' }))), ['Alpha']);
  },
);

t.test('2000 rows in one page', async (t) => {
  const big = await newOrganization(srv, 'Big');
  await srv.deps.pool.query(
    `INSERT INTO rightsholders (organization_id, name) SELECT $1, 'rh ' || lpad(i::text, 4, '0') FROM generate_series(1, 2001) i`,
    [big.organizationId],
  );
  const res = ok(
    t,
    await big.client.query('rightsholder.list', {
      organizationId: big.organizationId,
      pagination: { limit: 2000 },
    }),
  );
  t.equal(res.data.length, 2000);
  t.same(res.pagination, {
    page: 1,
    limit: 2000,
    total: 2001,
    totalPages: 2,
    hasNext: true,
    hasPrev: false,
  });
  const last = ok(
    t,
    await big.client.query('rightsholder.list', {
      organizationId: big.organizationId,
      pagination: { page: 2, limit: 2000 },
    }),
  );
  t.same(names(last), ['rh 2001']);
});
