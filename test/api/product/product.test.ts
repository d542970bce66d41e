// product.*: products derived from a block built from a statement ingested through the real API
// and enriched by the offline provider: tracks per cluster merged by recording, albums by
// release, exact values and earnings; corrections (updateById, relationships) kept as overrides
// that survive refreshes; roles, data access, other organizations' ids and hostile input.
import t from 'tap';
import { refreshBlock } from '../../../src/catalog/blocks.ts';
import { refreshClusters } from '../../../src/catalog/clusters.ts';
import { refreshProducts } from '../../../src/catalog/products.ts';
import { createRightsholder } from '../../helpers/ingest.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { ingestBlock } from '../../catalog/helpers.ts';
import { UNKNOWN_ID } from '../mapping/helpers.ts';
import { detailIds, waitForEnrichment } from '../clustering/helpers.ts';
import type { MutationName, QueryName } from '../../helpers/procedures.ts';
import { isError, ok } from '../../helpers/outcome.ts';

t.setTimeout(300_000);

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Product Org');
const org = owner.organizationId;
const db = srv.deps.pool;
const rh = await createRightsholder(owner.client, org, 'Orla Finn');
const { status, block } = await ingestBlock(srv, owner, rh, 'dk.tsv', [
  ['Orla Finn', 'Blue Hearts', 'ESA1B1100343', '12.00'],
  ['Orla Finn', 'Blue Hearts - Remastered', '', '3.00'],
  ['Orla Finn', 'Crystal Hearts', 'CAP2T0200414', '4.50'],
  ['Orla Finn', 'Silver Streets', 'CAP2T0100290', '2.25'],
  ['Orla Finn', 'Streets of Silver', '', '0.75'],
  ['Orla Finn', 'Copper Fjord', 'QZZ1A2400003', '1.10'],
]);
await waitForEnrichment(db, block);

const md = await detailIds(db, block);
const M = {
  blue: md['isrc:ESA1B1100343']!,
  blueRemaster: md['ta:blue hearts remastered\u001forla finn']!,
  crystal: md['isrc:CAP2T0200414']!,
  silver: md['isrc:CAP2T0100290']!,
  streets: md['ta:streets of silver\u001forla finn']!,
  copper: md['isrc:QZZ1A2400003']!,
};
const q = (proc: QueryName<'product'>, input: Record<string, unknown>, caller = owner) =>
  caller.client.queryUnchecked(`product.${proc}`, { organizationId: org, ...input });
const m = (proc: MutationName<'product'>, input: Record<string, unknown>, caller = owner) =>
  caller.client.mutateUnchecked(`product.${proc}`, { organizationId: org, ...input });
async function products(): Promise<Record<string, any>> {
  const res = ok(t, await q('getByBlock', { blockId: block, pagination: { page: 1, limit: 100 } }));
  return Object.fromEntries(res.data.map((p: any) => [p.stableKey, p]));
}
const row = (p: any) => [
  p.kind,
  p.title,
  p.artist,
  p.isrc,
  p.releaseDate,
  p.earnings,
  p.musicalDetailCount,
];
const P = await products();
const T = {
  blue: P['track:cluster:bluehearts\u001forla finn']?.id,
  crystal: P['track:cluster:crystalhearts\u001forla finn']?.id,
  silver: P['track:cluster:silverstreets\u001forla finn']?.id,
  copper: P['track:cluster:copperfjord\u001forla finn']?.id,
  burning: P['album:burning horizon\u001forla finn']?.id,
  paper: P['album:paper canyon\u001forla finn']?.id,
  silverAlbum: P['album:silver streets\u001forla finn']?.id,
};

t.test('products: a track per cluster, merged by recording; albums by release', async (t) => {
  t.equal(status, 'processed');
  t.same(
    Object.entries(P)
      .map(([k, p]) => [k, ...row(p)])
      .sort(),
    [
      [
        'album:burning horizon\u001forla finn',
        'album',
        'Burning Horizon',
        'Orla Finn',
        null,
        '2011-01-29',
        '15',
        2,
      ],
      [
        'album:paper canyon\u001forla finn',
        'album',
        'Paper Canyon',
        'Orla Finn',
        null,
        '2002-07-21',
        '4.5',
        1,
      ],
      [
        'album:silver streets\u001forla finn',
        'album',
        'Silver Streets',
        'Orla Finn',
        null,
        '2001-10-20',
        '3',
        2,
      ],
      [
        'track:cluster:bluehearts\u001forla finn',
        'track',
        'Blue Hearts',
        'Orla Finn',
        'ESA1B1100343',
        '2011-01-29',
        '15',
        2,
      ],
      [
        'track:cluster:copperfjord\u001forla finn',
        'track',
        'Copper Fjord',
        'Orla Finn',
        'QZZ1A2400003',
        null,
        '1.1',
        1,
      ],
      [
        'track:cluster:crystalhearts\u001forla finn',
        'track',
        'Crystal Hearts',
        'Orla Finn',
        'CAP2T0200414',
        '2002-07-21',
        '4.5',
        1,
      ],
      [
        'track:cluster:silverstreets\u001forla finn',
        'track',
        'Silver Streets',
        'Orla Finn',
        'CAP2T0100290',
        '2001-10-20',
        '3',
        2,
      ],
    ],
    '"Streets of Silver" is its own cluster but the same recording as "Silver Streets": one track',
  );
  t.equal(P['track:cluster:bluehearts\u001forla finn'].parentId, T.burning);
  t.equal(
    P['track:cluster:copperfjord\u001forla finn'].parentId,
    null,
    'no release known: no album',
  );
  t.same(P['track:cluster:bluehearts\u001forla finn'].genres, ['folk', 'singer-songwriter']);
  t.same(P['track:cluster:bluehearts\u001forla finn'].songWriters, ['Orla Finn']);
  t.equal(
    P['track:cluster:bluehearts\u001forla finn'].imageUrl,
    'https://coverartarchive.org/release/0c4f00fa-463a-5737-9bcc-c09c5ccdbf7f/front-250',
  );
  const { rows } = await db.query('SELECT count(*)::int AS n FROM products WHERE block_id = $1', [
    block,
  ]);
  t.equal(rows[0].n, 7);
});

t.test('deriving again changes nothing (idempotent, no row rewritten)', async (t) => {
  const snapshot = async () => [
    (
      await db.query(
        'SELECT id, xmin::text, updated_at FROM products WHERE block_id = $1 ORDER BY id',
        [block],
      )
    ).rows,
    (
      await db.query(
        'SELECT product_id, musical_detail_id, xmin::text FROM product_musical_details WHERE organization_id = $1 ORDER BY 1, 2',
        [org],
      )
    ).rows,
    (
      await db.query('SELECT id, xmin::text FROM title_clusters WHERE block_id = $1 ORDER BY id', [
        block,
      ])
    ).rows,
  ];
  // once after enrichment (clusters then see the fetched titles), then again: nothing moves
  await refreshClusters(srv.deps, block);
  await refreshProducts(srv.deps, block);
  const before = await snapshot();
  await refreshClusters(srv.deps, block);
  await refreshProducts(srv.deps, block);
  t.same(await snapshot(), before);
});

t.test('getByBlock: pagination, sort and search', async (t) => {
  const all = ok(t, await q('getByBlock', { blockId: block }));
  t.same(all.pagination, {
    page: 1,
    limit: 300,
    total: 7,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  const pageOnly = ok(t, await q('getByBlock', { blockId: block, pagination: { page: 1 } }));
  t.equal(pageOnly.pagination.limit, 20, 'inner default limit 20');
  const byEarnings = ok(
    t,
    await q('getByBlock', {
      blockId: block,
      pagination: { page: 2, limit: 2, sortBy: 'earnings', sortOrder: 'asc' },
    }),
  );
  t.same(
    byEarnings.data.map((p: any) => p.earnings),
    ['3', '4.5'],
    '1.1, 3 | 3, 4.5 | 4.5, 15 | 15',
  );
  t.same(byEarnings.pagination, {
    page: 2,
    limit: 2,
    total: 7,
    totalPages: 4,
    hasNext: true,
    hasPrev: true,
  });
  const search = ok(t, await q('getByBlock', { blockId: block, searchQuery: 'HEARTS' }));
  t.same(
    search.data.map((p: any) => p.title),
    ['Blue Hearts', 'Crystal Hearts'],
  );
  t.same(
    ok(t, await q('getByBlock', { blockId: block, searchQuery: '%' })).data,
    [],
    'wildcards are literal',
  );
  t.same(ok(t, await q('getByBlock', { blockId: block, searchQuery: "' OR 1=1 --" })).data, []);
  isError(
    t,
    await q('getByBlock', { blockId: block, pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(
    t,
    await q('getByBlock', { blockId: block, pagination: { sortBy: 'title; DROP TABLE products' } }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(t, await q('getByBlock', { blockId: UNKNOWN_ID }), 'NOT_FOUND', 'BLOCK_NOT_FOUND');
});

t.test('getById, getProductsByIds', async (t) => {
  const p = ok(t, await q('getById', { productId: T.silver }));
  t.same(row(p), ['track', 'Silver Streets', 'Orla Finn', 'CAP2T0100290', '2001-10-20', '3', 2]);
  t.same(
    [p.blockId, p.rightsholderId, p.parentId, p.overriddenFields, p.trail],
    [block, rh, T.silverAlbum, [], []],
  );
  const many = ok(t, await q('getProductsByIds', { productIds: [T.copper, T.blue, T.copper] }));
  t.same(
    many.data.map((x: any) => x.title),
    ['Copper Fjord', 'Blue Hearts'],
  );
  isError(t, await q('getById', { productId: UNKNOWN_ID }), 'NOT_FOUND', 'PRODUCT_NOT_FOUND');
  isError(
    t,
    await q('getProductsByIds', { productIds: [T.blue, UNKNOWN_ID] }),
    'NOT_FOUND',
    'PRODUCT_NOT_FOUND',
  );
  isError(t, await q('getProductsByIds', { productIds: [] }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  const huge = await q('getProductsByIds', {
    productIds: Array.from({ length: 1001 }, () => T.blue),
  });
  t.notOk(huge.ok, 'too many ids');
  t.ok(
    huge.status >= 400 && huge.status < 500,
    `too many ids: refused as the client's fault (${huge.status})`,
  );
  isError(
    t,
    await q('getByBlock', { blockId: block, searchQuery: 'x'.repeat(501) }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'search too long',
  );
  isError(t, await q('getById', { productId: "1' OR '1'='1" }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  const stranger = await newOrganization(srv, 'Stranger Org');
  isError(
    t,
    await stranger.client.query('product.getById', {
      organizationId: stranger.organizationId,
      productId: T.blue,
    }),
    'NOT_FOUND',
    'PRODUCT_NOT_FOUND',
    "another organization's product",
  );
  isError(
    t,
    await stranger.client.query('product.getByBlock', {
      organizationId: stranger.organizationId,
      blockId: block,
    }),
    'NOT_FOUND',
    'BLOCK_NOT_FOUND',
  );
});

t.test('musical details of products', async (t) => {
  const all = ok(
    t,
    await q('getAllMusicalDetailsForProduct', { productId: T.silver, blockId: block }),
  );
  t.same(
    all.data.map((d: any) => [d.id, d.title, d.earningsUsd, d.state, d.linkSource]),
    [
      [M.silver, 'Silver Streets', '2.25', 'found', 'auto'],
      [M.streets, 'Streets of Silver', '0.75', 'found', 'auto'],
    ],
  );
  t.same(all.data[1].effective.title, 'Silver Streets', 'the effective title is the fetched one');
  const album = ok(
    t,
    await q('getAllMusicalDetailsForProduct', { productId: T.burning, blockId: block }),
  );
  t.same(
    album.data.map((d: any) => d.id),
    [M.blue, M.blueRemaster],
  );
  const batch = ok(
    t,
    await q('getMusicalDetailsBatch', { productIds: [T.copper, T.blue], blockId: block }),
  );
  t.same(
    batch.data.map((b: any) => [b.productId, b.musicalDetails.map((d: any) => d.id)]),
    [
      [T.copper, [M.copper]],
      [T.blue, [M.blue, M.blueRemaster]],
    ],
  );
  const byBlock = ok(t, await q('getMusicalDetailsByBlock', { blockId: block, productId: T.blue }));
  t.same(byBlock.pagination, {
    page: 1,
    limit: 5000,
    total: 2,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  t.same(
    byBlock.data.map((d: any) => d.title),
    ['Blue Hearts', 'Blue Hearts - Remastered'],
    'title asc by default',
  );
  const paged = ok(
    t,
    await q('getMusicalDetailsByBlock', {
      blockId: block,
      productId: T.blue,
      pagination: { page: 2, limit: 1, sortBy: 'earnings', sortOrder: 'desc' },
    }),
  );
  t.same(
    [paged.data.map((d: any) => [d.id, d.earningsUsd]), paged.pagination.hasPrev],
    [[[M.blueRemaster, '3']], true],
  );
  const otherRh = await createRightsholder(owner.client, org, 'Someone Else');
  const { block: otherBlock } = await ingestBlock(srv, owner, otherRh, 'o.tsv', [
    ['Someone Else', 'Tide Song', 'QZZ1A2400077', '1'],
  ]);
  isError(
    t,
    await q('getAllMusicalDetailsForProduct', { productId: T.blue, blockId: otherBlock }),
    'NOT_FOUND',
    'PRODUCT_NOT_FOUND',
    'a product of another block',
  );
  isError(
    t,
    await q('getMusicalDetailsBatch', { productIds: [T.blue], blockId: UNKNOWN_ID }),
    'NOT_FOUND',
    'BLOCK_NOT_FOUND',
  );
  isError(
    t,
    await q('getMusicalDetailsByBlock', {
      blockId: block,
      productId: T.blue,
      pagination: { limit: 5001 },
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('updateById: an override with who and when, surviving refreshes', async (t) => {
  const res = ok(
    t,
    await m('updateById', {
      productId: T.blue,
      title: 'Blue Hearts (Single)',
      releaseDate: '2010',
      genres: ['indie folk'],
    }),
  );
  t.same(row(res), [
    'track',
    'Blue Hearts (Single)',
    'Orla Finn',
    'ESA1B1100343',
    '2010-01-01',
    '15',
    2,
  ]);
  t.same(res.genres, ['indie folk']);
  t.same(res.overriddenFields, ['title', 'releaseDate', 'genres']);
  t.equal(res.id, T.blue);
  t.same(
    res.trail.map((o: any) => [o.kind, o.values, o.createdBy]),
    [
      [
        'update_by_id',
        { title: 'Blue Hearts (Single)', releaseDate: '2010', genres: ['indie folk'] },
        owner.userId,
      ],
    ],
  );
  t.equal(
    ok(t, await q('getById', { productId: T.burning })).releaseDate,
    '2010-01-01',
    "the album's date is its earliest track's",
  );
  const { rows: activity } = await db.query(
    `SELECT subject_type, subject_id, changes FROM activity_events WHERE organization_id = $1 AND action = 'product.updateById'`,
    [org],
  );
  t.same(activity, [
    {
      subject_type: 'product',
      subject_id: T.blue,
      changes: {
        title: { before: 'Blue Hearts', after: 'Blue Hearts (Single)' },
        releaseDate: { before: '2011-01-29', after: '2010' },
        genres: { before: ['folk', 'singer-songwriter'], after: ['indie folk'] },
      },
    },
  ]);
  ok(t, await m('updateById', { productId: T.blue, releaseDate: '' }));
  t.equal(ok(t, await q('getById', { productId: T.blue })).releaseDate, null, "'' clears");
  ok(t, await m('updateById', { productId: T.blue, releaseDate: '2010-05' }));
  await refreshBlock(srv.deps, org, rh);
  const after = ok(t, await q('getById', { productId: T.blue }));
  t.same(
    row(after),
    ['track', 'Blue Hearts (Single)', 'Orla Finn', 'ESA1B1100343', '2010-05-01', '15', 2],
    'kept through a block refresh, same id',
  );
  t.equal(after.trail.length, 3);
  for (const [label, input] of [
    ['nothing to change', {}],
    ['empty title', { title: '' }],
    ['NUL', { title: 'a\u0000b' }],
    ['too long', { title: 'x'.repeat(501) }],
    ['bad date', { releaseDate: '2010-13-01' }],
    ['no such day', { releaseDate: '2024-02-30' }],
    ['year 0', { releaseDate: '0000' }],
    ['not a date', { releaseDate: "2010'; DROP TABLE products; --" }],
    ['script url', { imageUrl: 'javascript:alert(1)' }],
    ['data url', { imageUrl: 'data:text/html,<script>alert(1)</script>' }],
    ['unknown field', { title: 'x', kind: 'album' }],
  ] as const) {
    const res = await m('updateById', { productId: T.blue, ...input });
    if (label === 'unknown field') {
      // unknown keys are stripped, not stored
      t.equal(ok(t, res).kind, 'track', label);
      continue;
    }
    isError(t, res, 'BAD_REQUEST', 'VALIDATION_FAILED', label);
  }
  ok(t, await m('updateById', { productId: T.blue, title: 'Blue Hearts (Single)' }));
  isError(
    t,
    await m('updateById', { productId: UNKNOWN_ID, title: 'x' }),
    'NOT_FOUND',
    'PRODUCT_NOT_FOUND',
  );
});

t.test('updateProductMusicalDetailsRelationships: links as overrides', async (t) => {
  const rel = (input: Record<string, unknown>, caller = owner) =>
    m('updateProductMusicalDetailsRelationships', { blockId: block, ...input }, caller);
  const moved = ok(
    t,
    await rel({
      update: [{ musicalDetailId: M.streets, fromProductId: T.silver, toProductId: T.crystal }],
    }),
  );
  t.same([moved.blockId, moved.created, moved.deleted, moved.updated], [block, 0, 0, 1]);
  t.same(
    moved.products.map((p: any) => [p.id, p.earnings, p.musicalDetailCount]).sort(),
    [
      [T.crystal, '5.25', 2],
      [T.silver, '2.25', 1],
    ].sort(),
  );
  const crystal = ok(
    t,
    await q('getAllMusicalDetailsForProduct', { productId: T.crystal, blockId: block }),
  );
  t.same(
    crystal.data.map((d: any) => [d.id, d.linkSource]),
    [
      [M.crystal, 'auto'],
      [M.streets, 'user'],
    ],
  );
  await refreshBlock(srv.deps, org, rh);
  t.same(
    row(ok(t, await q('getById', { productId: T.crystal }))),
    ['track', 'Crystal Hearts', 'Orla Finn', 'CAP2T0200414', '2001-10-20', '5.25', 2],
    'kept through a refresh; the earliest date of its musical details',
  );

  // deleting the user's link: back to the derived track
  ok(t, await rel({ delete: [{ productId: T.crystal, musicalDetailId: M.streets }] }));
  t.same(
    [
      ok(t, await q('getById', { productId: T.silver })).musicalDetailCount,
      ok(t, await q('getById', { productId: T.crystal })).musicalDetailCount,
    ],
    [2, 1],
  );
  // deleting a derived link: the musical detail is unlinked, the emptied track goes
  ok(t, await rel({ delete: [{ productId: T.copper, musicalDetailId: M.copper }] }));
  isError(
    t,
    await q('getById', { productId: T.copper }),
    'NOT_FOUND',
    'PRODUCT_NOT_FOUND',
    'an emptied product is gone',
  );
  const created = ok(t, await rel({ create: [{ productId: T.blue, musicalDetailId: M.copper }] }));
  t.same(
    created.products.map((p: any) => [p.id, p.earnings, p.musicalDetailCount]),
    [[T.blue, '16.1', 3]],
  );
  const { rows: trail } = await db.query(
    `SELECT kind, "values", created_by FROM product_overrides WHERE block_id = $1 AND kind = 'link' ORDER BY created_at`,
    [block],
  );
  t.same(
    trail.map((o: any) => [o.values.action, o.values.identityKey, o.created_by]),
    [
      ['remove', 'ta:streets of silver\u001forla finn', owner.userId],
      ['add', 'ta:streets of silver\u001forla finn', owner.userId],
      ['remove', 'ta:streets of silver\u001forla finn', owner.userId],
      ['remove', 'isrc:QZZ1A2400003', owner.userId],
      ['add', 'isrc:QZZ1A2400003', owner.userId],
    ],
  );
  const { rows: activity } = await db.query(
    `SELECT count(*)::int AS n FROM activity_events WHERE organization_id = $1 AND action = 'product.updateProductMusicalDetailsRelationships' AND subject_type = 'product'`,
    [org],
  );
  t.equal(activity[0].n, 5);

  isError(
    t,
    await rel({ delete: [{ productId: T.silver, musicalDetailId: M.blue }] }),
    'BAD_REQUEST',
    'PRODUCT_LINK_INVALID',
    'a link that does not exist',
  );
  const before = (
    await db.query(`SELECT count(*)::int AS n FROM product_overrides WHERE block_id = $1`, [block])
  ).rows[0].n;
  isError(
    t,
    await rel({
      create: [{ productId: T.blue, musicalDetailId: M.copper }],
      delete: [{ productId: T.blue, musicalDetailId: M.copper }],
    }),
    'BAD_REQUEST',
    'PRODUCT_LINK_INVALID',
    'one link added and removed in one request',
  );
  t.equal(
    (
      await db.query(`SELECT count(*)::int AS n FROM product_overrides WHERE block_id = $1`, [
        block,
      ])
    ).rows[0].n,
    before,
    'nothing written',
  );
  t.equal(
    ok(t, await q('getById', { productId: T.blue })).musicalDetailCount,
    3,
    'the track keeps its details',
  );
  isError(
    t,
    await rel({ create: [{ productId: T.burning, musicalDetailId: M.blue }] }),
    'BAD_REQUEST',
    'PRODUCT_LINK_INVALID',
    'an album',
  );
  isError(
    t,
    await rel({ create: [{ productId: UNKNOWN_ID, musicalDetailId: M.blue }] }),
    'NOT_FOUND',
    'PRODUCT_NOT_FOUND',
  );
  isError(
    t,
    await rel({ create: [{ productId: T.blue, musicalDetailId: UNKNOWN_ID }] }),
    'NOT_FOUND',
    'MUSICAL_DETAIL_NOT_FOUND',
  );
  isError(t, await rel({}), 'BAD_REQUEST', 'VALIDATION_FAILED', 'no change');
  isError(
    t,
    await rel({
      create: Array.from({ length: 501 }, () => ({ productId: T.blue, musicalDetailId: M.blue })),
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'too many',
  );
  isError(
    t,
    await rel({ create: [{ productId: T.blue, musicalDetailId: M.blue, source: 'auto' }] }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'unknown key in a change',
  );
});

t.test('roles and data access', async (t) => {
  for (const role of ['member', 'reader'] as const) {
    const c = await addMember(srv, org, role);
    ok(t, await q('getById', { productId: T.blue }, c), `${role} reads`);
    ok(t, await q('getByBlock', { blockId: block }, c), `${role} reads`);
    isError(
      t,
      await m('updateById', { productId: T.blue, title: 'x' }, c),
      'FORBIDDEN',
      'INSUFFICIENT_ROLE',
      `${role} may not correct`,
    );
    isError(
      t,
      await m(
        'updateProductMusicalDetailsRelationships',
        { blockId: block, create: [{ productId: T.blue, musicalDetailId: M.blue }] },
        c,
      ),
      'FORBIDDEN',
      'INSUFFICIENT_ROLE',
    );
  }
  const writer = await addMember(srv, org, 'writer');
  t.equal(
    ok(t, await m('updateById', { productId: T.blue, artist: 'Orla Finn & Band' }, writer)).artist,
    'Orla Finn & Band',
    'writer corrects',
  );
  const restricted = await addMember(srv, org, 'admin');
  await db.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', '{}')`,
    [org, restricted.userId],
  );
  isError(
    t,
    await q('getById', { productId: T.blue }, restricted),
    'NOT_FOUND',
    'PRODUCT_NOT_FOUND',
    'outside the data access',
  );
  isError(t, await q('getByBlock', { blockId: block }, restricted), 'NOT_FOUND', 'BLOCK_NOT_FOUND');
  isError(
    t,
    await m('updateById', { productId: T.blue, title: 'x' }, restricted),
    'NOT_FOUND',
    'PRODUCT_NOT_FOUND',
  );
});
