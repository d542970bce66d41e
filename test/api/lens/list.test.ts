// lens.list: every filter, the four orders, keyset cursors (stable under inserts), limits and
// visibility.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const writer = await addMember(srv, org, 'writer');

// unchecked: some cases send invalid input on purpose
const list = (caller: typeof owner, input: Record<string, unknown> = {}) =>
  caller.client.queryUnchecked('lens.list', { organizationId: org, ...input });
const names = (page: any) => page.data.map((l: any) => l.name);

/** Every page of a list, following nextCursor. */
async function allPages(
  t: Parameters<typeof ok>[0],
  caller: typeof owner,
  input: Record<string, unknown>,
) {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const page: any = ok(t, await list(caller, { ...input, cursor }));
    seen.push(...names(page));
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return seen;
}

// created in this order; updated_desc therefore lists them newest first
const delta = await createLens(t, owner, {
  name: 'delta',
  kind: 'pivot',
  tags: ['finance'],
  viewName: 'analytics_full_view',
  description: 'Quarterly money',
});
const bravo = await createLens(t, owner, {
  name: 'Bravo',
  kind: 'query',
  tags: ['finance', 'ops'],
});
const alpha = await createLens(t, writer, {
  name: 'alpha',
  kind: 'funnel',
  scope: 'personal',
  tags: ['ops'],
});
const charlie = await createLens(t, writer, {
  name: 'Charlie',
  kind: 'query',
  viewName: { custom: true },
});
const hidden = await createLens(t, owner, {
  name: 'Owner Secret',
  kind: 'query',
  scope: 'personal',
});

t.test(
  'default: updated_desc, { data, nextCursor }, personal lenses only for their owner',
  async (t) => {
    const page = ok(t, await list(writer));
    t.same(names(page), ['Charlie', 'alpha', 'Bravo', 'delta']);
    t.equal(page.nextCursor, null);
    t.same(Object.keys(page).sort(), ['data', 'nextCursor']);
    t.same(page.data[0], charlie);
    const ownerPage = ok(t, await list(owner));
    t.same(names(ownerPage), ['Owner Secret', 'Charlie', 'Bravo', 'delta']);
    t.same(ownerPage.data[0], hidden);
    const reader = await addMember(srv, org, 'reader');
    t.same(names(ok(t, await list(reader))), ['Charlie', 'Bravo', 'delta']);
  },
);

t.test('the four sort orders', async (t) => {
  t.same(names(ok(t, await list(writer, { sort: 'created_desc' }))), [
    'Charlie',
    'alpha',
    'Bravo',
    'delta',
  ]);
  t.same(names(ok(t, await list(writer, { sort: 'name_asc' }))), [
    'alpha',
    'Bravo',
    'Charlie',
    'delta',
  ]);
  ok(
    t,
    await writer.client.mutate('lens.update', {
      organizationId: org,
      id: delta.id,
      tags: ['finance', 'q1'],
    }),
  );
  t.same(names(ok(t, await list(writer, { sort: 'updated_desc' }))), [
    'delta',
    'Charlie',
    'alpha',
    'Bravo',
  ]);
  t.same(
    names(ok(t, await list(writer, { sort: 'created_desc' }))),
    ['Charlie', 'alpha', 'Bravo', 'delta'],
    'an update does not change created order',
  );
  // last_opened_desc: the caller's own opens, never-opened lenses last (newest id first among them)
  ok(t, await writer.client.mutate('lens.recordOpened', { organizationId: org, id: bravo.id }));
  ok(t, await writer.client.mutate('lens.recordOpened', { organizationId: org, id: alpha.id }));
  ok(t, await owner.client.mutate('lens.recordOpened', { organizationId: org, id: charlie.id }));
  const opened = ok(t, await list(writer, { sort: 'last_opened_desc' }));
  t.same(names(opened).slice(0, 2), ['alpha', 'Bravo']);
  t.same(names(opened).slice(2).sort(), ['Charlie', 'delta']);
  t.ok(opened.data[0].lastOpenedAt > opened.data[1].lastOpenedAt);
  t.equal(opened.data[2].lastOpenedAt, null);
  isError(t, await list(writer, { sort: 'random' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
});

t.test('filters', async (t) => {
  t.same(names(ok(t, await list(writer, { kind: 'query', sort: 'name_asc' }))), [
    'Bravo',
    'Charlie',
  ]);
  t.same(names(ok(t, await list(writer, { viewName: 'analytics_full_view' }))), ['delta']);
  t.same(names(ok(t, await list(writer, { scope: 'personal' }))), ['alpha']);
  t.same(names(ok(t, await list(owner, { scope: 'personal' }))), ['Owner Secret']);
  t.same(names(ok(t, await list(writer, { scope: 'organization', sort: 'name_asc' }))), [
    'Bravo',
    'Charlie',
    'delta',
  ]);
  t.same(names(ok(t, await list(writer, { tag: 'ops', sort: 'name_asc' }))), ['alpha', 'Bravo']);
  t.same(
    names(ok(t, await list(writer, { tag: 'OPS', sort: 'name_asc' }))),
    ['alpha', 'Bravo'],
    'tags match without case',
  );
  t.same(names(ok(t, await list(writer, { ownerUserId: writer.userId, sort: 'name_asc' }))), [
    'alpha',
    'Charlie',
  ]);
  t.same(
    names(ok(t, await list(writer, { ownerUserId: owner.userId, sort: 'name_asc' }))),
    ['Bravo', 'delta'],
    "never another's personal lens",
  );
  t.same(names(ok(t, await list(writer, { search: 'ARL' }))), ['Charlie']);
  t.same(
    names(ok(t, await list(writer, { search: 'quarterly' }))),
    ['delta'],
    'search reads a text description',
  );
  t.same(names(ok(t, await list(writer, { search: '%' }))), [], '% is literal');
  t.same(
    names(ok(t, await list(writer, { kind: 'query', tag: 'finance' }))),
    ['Bravo'],
    'filters combine',
  );
  t.same(
    ok(t, await list(writer, { kind: 'retention' })),
    { data: [], nextCursor: null },
    'an empty page',
  );
});

t.test('pinnedOnly and recentOnly are per member', async (t) => {
  ok(
    t,
    await writer.client.mutate('lens.setPinned', {
      organizationId: org,
      id: charlie.id,
      pinned: true,
    }),
  );
  t.same(names(ok(t, await list(writer, { pinnedOnly: true }))), ['Charlie']);
  t.same(names(ok(t, await list(owner, { pinnedOnly: true }))), []);
  // the writer opened alpha and bravo in the sort test, the owner charlie
  t.same(names(ok(t, await list(writer, { recentOnly: true, sort: 'name_asc' }))), [
    'alpha',
    'Bravo',
  ]);
  t.same(names(ok(t, await list(owner, { recentOnly: true }))), ['Charlie']);
  // activity.trackVisit of a lens counts as opening it
  ok(
    t,
    await owner.client.mutate('activity.trackVisit', {
      organizationId: org,
      subjectType: 'lens',
      subjectId: delta.id,
    }),
  );
  t.same(names(ok(t, await list(owner, { recentOnly: true, sort: 'last_opened_desc' }))), [
    'delta',
    'Charlie',
  ]);
  // opens older than 30 days are not recent
  await srv.deps.pool.query(
    `UPDATE subject_visits SET last_visited_at = now() - interval '31 days' WHERE user_id = $1 AND subject_id = $2`,
    [owner.userId, delta.id],
  );
  t.same(names(ok(t, await list(owner, { recentOnly: true }))), ['Charlie']);
});

t.test('cursor pages cover every lens exactly once, in every order, at any limit', async (t) => {
  const big = await newOrganization(srv, 'Many lenses');
  for (let i = 0; i < 23; i++) {
    await createLens(t, big, {
      name: `lens ${String(i).padStart(2, '0')}`,
      tags: [i % 2 ? 'odd' : 'even'],
    });
    if (i % 3 === 0)
      ok(
        t,
        await big.client.mutate('lens.recordOpened', {
          organizationId: big.organizationId,
          id: (await latest(big))!.id,
        }),
      );
  }
  for (const sort of ['updated_desc', 'created_desc', 'name_asc', 'last_opened_desc'] as const) {
    const whole = names(
      ok(
        t,
        await big.client.query('lens.list', {
          organizationId: big.organizationId,
          sort,
          limit: 2000,
        }),
      ),
    );
    t.equal(whole.length, 23);
    for (const limit of [1, 5, 23, 50]) {
      const seen = await allPages(t, big, { organizationId: big.organizationId, sort, limit });
      t.same(seen, whole, `${sort} limit ${limit}`);
    }
  }
  // the last page has no cursor; an exact multiple ends with an empty-free final page
  const p1 = ok(
    t,
    await big.client.query('lens.list', { organizationId: big.organizationId, limit: 23 }),
  );
  t.equal(p1.data.length, 23);
  t.equal(p1.nextCursor, null);
  const p2 = ok(
    t,
    await big.client.query('lens.list', { organizationId: big.organizationId, limit: 22 }),
  );
  const last = ok(
    t,
    await big.client.query('lens.list', {
      organizationId: big.organizationId,
      limit: 22,
      cursor: p2.nextCursor,
    }),
  );
  t.equal(last.data.length, 1);
  t.equal(last.nextCursor, null);
});

async function latest(caller: typeof owner) {
  return ok(
    t,
    await caller.client.query('lens.list', {
      organizationId: caller.organizationId,
      sort: 'created_desc',
      limit: 1,
    }),
  ).data[0];
}

t.test('a cursor stays stable when lenses are inserted between pages', async (t) => {
  const o = await newOrganization(srv, 'Concurrent');
  for (let i = 0; i < 6; i++) await createLens(t, o, { name: `n${i}` });
  for (const sort of ['updated_desc', 'created_desc', 'name_asc'] as const) {
    const first = ok(
      t,
      await o.client.query('lens.list', { organizationId: o.organizationId, sort, limit: 3 }),
    );
    // new lenses sort before the cursor (newest, or alphabetically first): they must not shift page 2
    await createLens(t, o, { name: `a-inserted-${sort}` });
    const second = ok(
      t,
      await o.client.query('lens.list', {
        organizationId: o.organizationId,
        sort,
        limit: 3,
        cursor: first.nextCursor,
      }),
    );
    const before = names(first);
    t.equal(new Set([...before, ...names(second)]).size, 6, `${sort}: no repeats`);
    t.notOk(
      names(second).some((n: string) => n.startsWith('a-inserted')),
      `${sort}: the insert is not on page 2`,
    );
  }
});

t.test('limits: default 50, 2000 allowed, 2001 refused', async (t) => {
  const o = await newOrganization(srv, 'Limits');
  await srv.deps.pool.query(
    `INSERT INTO lenses (organization_id, owner_user_id, name, kind, payload) SELECT $1, $2, 'l' || i, 'query', '{}' FROM generate_series(1, 2001) i`,
    [o.organizationId, o.userId],
  );
  const d = ok(t, await o.client.query('lens.list', { organizationId: o.organizationId }));
  t.equal(d.data.length, 50);
  t.type(d.nextCursor, 'string');
  const max = ok(
    t,
    await o.client.query('lens.list', { organizationId: o.organizationId, limit: 2000 }),
  );
  t.equal(max.data.length, 2000);
  const rest = ok(
    t,
    await o.client.query('lens.list', {
      organizationId: o.organizationId,
      limit: 2000,
      cursor: max.nextCursor,
    }),
  );
  t.equal(rest.data.length, 1);
  t.equal(rest.nextCursor, null);
  isError(
    t,
    await o.client.query('lens.list', { organizationId: o.organizationId, limit: 2001 }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(
    t,
    await o.client.query('lens.list', { organizationId: o.organizationId, limit: 0 }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await o.client.query('lens.list', { organizationId: o.organizationId, limit: 1.5 }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('invalid cursors are INVALID_CURSOR', async (t) => {
  const page = ok(t, await list(writer, { limit: 1 }));
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const cursors = [
    'garbage',
    '!!!',
    b64({ not: 'an array' }),
    b64(['updated_desc', '2024-01-01T00:00:00.000000Z']),
    b64(['updated_desc', 'yesterday', alpha.id]),
    b64(['updated_desc', '2024-02-30T00:00:00.000000Z', alpha.id]),
    b64(['updated_desc', '2024-01-01T00:00:00.000000Z', "' OR 1=1 --"]),
    b64(['name_asc', 7, alpha.id]),
    b64(['updated_desc', null, alpha.id]),
  ];
  for (const cursor of cursors)
    isError(t, await list(writer, { cursor }), 'BAD_REQUEST', 'INVALID_CURSOR', cursor);
  // a cursor of one order is not valid for another
  isError(
    t,
    await list(writer, { cursor: page.nextCursor, sort: 'name_asc' }),
    'BAD_REQUEST',
    'INVALID_CURSOR',
    'another sort',
  );
  isError(t, await list(writer, { cursor: 'x'.repeat(1001) }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(t, await list(writer, { cursor: { any: 'json' } }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  // a hostile but well-formed name key is only a value
  t.ok(
    (
      await list(writer, {
        sort: 'name_asc',
        cursor: b64(['name_asc', "'; DROP TABLE lenses; --", alpha.id]),
      })
    ).ok,
  );
  t.equal(
    ok(t, await list(writer, { limit: 2000 })).data.length,
    4,
    'and the table is still there',
  );
  t.same(
    ok(t, await list(writer, { cursor: null })).data.length,
    4,
    'a null cursor is the first page',
  );
});

t.test('lenses of another organization never appear', async (t) => {
  const other = await newOrganization(srv, 'Other');
  await createLens(t, other, { name: 'Foreign' });
  t.notOk(names(ok(t, await list(owner, { limit: 2000 }))).includes('Foreign'));
  t.same(names(ok(t, await list(owner, { search: 'Foreign' }))), []);
  t.same(names(ok(t, await list(owner, { ownerUserId: other.userId }))), []);
});
