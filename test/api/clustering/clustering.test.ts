// clustering.*: the title clusters of a block built from a statement ingested through the real
// API (statement → block refresh → clusterTitles in a worker thread), their exact entries,
// earnings, shares and order, user moves that survive re-clustering, roles, data access, other
// organizations' ids and hostile input. At the handler: nothing here is about HTTP.
import t from 'tap';
import { refreshBlock } from '../../../src/catalog/blocks.ts';
import { createRightsholder } from '../../helpers/ingest.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { ingestBlock } from '../../catalog/helpers.ts';
import { UNKNOWN_ID } from '../mapping/helpers.ts';
import { detailIds, waitForEnrichment } from './helpers.ts';
import type { QueryName } from '../../helpers/procedures.ts';
import { isError, ok } from '../../helpers/outcome.ts';

t.setTimeout(300_000);

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Cluster Org');
const org = owner.organizationId;
const db = srv.deps.pool;
const rh = await createRightsholder(owner.client, org, 'Nova Reed');
const otherRh = await createRightsholder(owner.client, org, 'Other Artist');
const [mine, other] = await Promise.all([
  ingestBlock(srv, owner, rh, 'dk.tsv', [
    ['Nova Reed', 'Velvet Tramline', 'QZZ1A2400001', '10.00'],
    ['Nova Reed', 'Velvet Tramline (feat. Kai Moss)', 'QZZ1A2400002', '5.50'],
    ['Nova Reed', 'VELVET TRAMLINE - 2019 Remaster', '', '2.25'],
    // a live version joins its song (test/catalog/versionMatch.test.ts); another song stays apart
    ['Nova Reed', 'Violet Harbor', '', '1.00'],
    ['Nova Reed', 'Copper Fjord', 'QZZ1A2400003', '7.125'],
    ['Nova Reed', 'Copper Fjord', '', '0.875'],
    ['Nova Reed', 'Saltwater Ledger', '', '0.01'],
  ]),
  ingestBlock(srv, owner, otherRh, 'other.tsv', [
    ['Other Artist', 'Hidden Track', 'QZZ1A2400009', '3'],
  ]),
]);
const status = [mine.status, other.status];
const block = mine.block;
const otherBlock = other.block;
await waitForEnrichment(db, block);
const md = await detailIds(db, block);
const M = {
  velvet: md['isrc:QZZ1A2400001']!,
  feat: md['isrc:QZZ1A2400002']!,
  remaster: md['ta:velvet tramline 2019 remaster\u001fnova reed']!,
  violet: md['ta:violet harbor\u001fnova reed']!,
  copper: md['isrc:QZZ1A2400003']!,
  copperTa: md['ta:copper fjord\u001fnova reed']!,
  salt: md['ta:saltwater ledger\u001fnova reed']!,
};
const q = (proc: QueryName<'clustering'>, input: Record<string, unknown>, caller = owner) =>
  caller.client.queryUnchecked(`clustering.${proc}`, {
    organizationId: org,
    blockId: block,
    ...input,
  });
const update = (changes: unknown, caller = owner) =>
  caller.client.mutateUnchecked('clustering.updateClustering', {
    organizationId: org,
    blockId: block,
    changes,
  });
const summary = (c: any) => [
  c.displayTitle,
  c.stableKey,
  c.entries,
  c.earnings,
  c.similarity,
  c.source,
];
async function clusterIdOf(mdId: string): Promise<string> {
  const { rows } = await db.query<{ cluster_id: string }>(
    'SELECT cluster_id FROM musical_details WHERE id = $1',
    [mdId],
  );
  return rows[0]!.cluster_id;
}

t.test('getClustersList: every cluster of the block, highest earnings first', async (t) => {
  t.same(status, ['processed', 'processed']);
  t.equal(Object.keys(md).length, 7, 'seven musical details');
  const res = ok(t, await q('getClustersList', {}));
  t.equal(res.blockId, block);
  t.same(res.data.map(summary), [
    ['Velvet Tramline', 'velvettramline', 3, '17.75', 1, 'auto'],
    ['Copper Fjord', 'copperfjord', 2, '8', 1, 'auto'],
    ['Violet Harbor', 'violetharbor', 1, '1', 1, 'auto'],
    ['Saltwater Ledger', 'saltwaterledger', 1, '0.01', 1, 'auto'],
  ]);
  t.ok(res.data.every((c: any) => c.blockId === block && /^[0-9a-f-]{36}$/.test(c.id)));
});

t.test('getTitleClustering: sort fields, outer and inner pagination', async (t) => {
  const byEntries = ok(t, await q('getTitleClustering', {}));
  t.same(
    byEntries.pagination,
    { page: 1, limit: 50, total: 4, totalPages: 1, hasNext: false, hasPrev: false },
    'default page 1, limit 50',
  );
  t.same(
    byEntries.data.slice(0, 2).map((c: any) => [c.displayTitle, c.entries]),
    [
      ['Velvet Tramline', 3],
      ['Copper Fjord', 2],
    ],
    'entries desc by default',
  );
  const velvet = byEntries.data[0];
  t.same(
    velvet.musicalDetails.pagination,
    { page: 1, limit: 20, total: 3, totalPages: 1, hasNext: false, hasPrev: false },
    'inner default page 1, limit 20',
  );
  t.same(
    velvet.musicalDetails.data.map((e: any) => [
      e.id,
      e.title,
      e.artist,
      e.isrc,
      e.earningsUsd,
      e.rowCount,
      e.state,
      e.moved,
    ]),
    [
      [M.velvet, 'Velvet Tramline', 'Nova Reed', 'QZZ1A2400001', '10', 1, 'not_found', false],
      [
        M.feat,
        'Velvet Tramline (feat. Kai Moss)',
        'Nova Reed',
        'QZZ1A2400002',
        '5.5',
        1,
        'not_found',
        false,
      ],
      [
        M.remaster,
        'VELVET TRAMLINE - 2019 Remaster',
        'Nova Reed',
        null,
        '2.25',
        1,
        'not_found',
        false,
      ],
    ],
  );
  const byTitle = ok(
    t,
    await q('getTitleClustering', { sortField: 'titleDisplay', sortDirection: 'asc' }),
  );
  t.same(
    byTitle.data.map((c: any) => c.displayTitle),
    ['Copper Fjord', 'Saltwater Ledger', 'Velvet Tramline', 'Violet Harbor'],
  );
  const byEarningsAsc = ok(
    t,
    await q('getTitleClustering', { sortField: 'earnings', sortDirection: 'asc' }),
  );
  t.same(
    byEarningsAsc.data.map((c: any) => c.earnings),
    ['0.01', '1', '8', '17.75'],
  );
  const paged = ok(
    t,
    await q('getTitleClustering', {
      sortField: 'earnings',
      pagination: { page: 1, limit: 1, innerPage: 2, innerLimit: 2 },
    }),
  );
  t.same(paged.pagination, {
    page: 1,
    limit: 1,
    total: 4,
    totalPages: 4,
    hasNext: true,
    hasPrev: false,
  });
  t.same(
    paged.data.map((c: any) => c.displayTitle),
    ['Velvet Tramline'],
  );
  t.same(paged.data[0].musicalDetails.pagination, {
    page: 2,
    limit: 2,
    total: 3,
    totalPages: 2,
    hasNext: false,
    hasPrev: true,
  });
  t.same(
    paged.data[0].musicalDetails.data.map((e: any) => e.id),
    [M.remaster],
  );
  // limit 50 without pagination, 20 (the inner default) when pagination is given without one
  t.same(ok(t, await q('getTitleClustering', { pagination: { page: 1 } })).pagination, {
    page: 1,
    limit: 20,
    total: 4,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  t.same(ok(t, await q('getTitleClustering', { pagination: {} })).pagination, {
    page: 1,
    limit: 20,
    total: 4,
    totalPages: 1,
    hasNext: false,
    hasPrev: false,
  });
  const second = ok(
    t,
    await q('getTitleClustering', { sortField: 'earnings', pagination: { page: 2, limit: 1 } }),
  );
  t.same(
    second.data.map((c: any) => [c.displayTitle, c.musicalDetails.data.map((e: any) => e.id)]),
    [['Copper Fjord', [M.copper, M.copperTa]]],
  );
  const similarity = ok(
    t,
    await q('getTitleClustering', { sortField: 'similarity', sortDirection: 'asc' }),
  );
  t.equal(similarity.data.length, 4);
  // more than 2000 is the shared envelope's error, for the outer and the inner limit
  isError(
    t,
    await q('getTitleClustering', { pagination: { limit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(
    t,
    await q('getTitleClustering', { pagination: { innerLimit: 2001 } }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  t.equal(
    ok(t, await q('getTitleClustering', { pagination: { limit: 2000, innerLimit: 2000 } }))
      .pagination.limit,
    2000,
  );
});

t.test(
  'getCluster: one cluster with its musical details; other blocks and organizations are NOT_FOUND',
  async (t) => {
    const id = await clusterIdOf(M.copper);
    const c = ok(t, await q('getCluster', { clusterId: id }));
    t.same(summary(c), ['Copper Fjord', 'copperfjord', 2, '8', 1, 'auto']);
    t.same(
      c.musicalDetails.map((e: any) => [e.id, e.identityKey, e.earningsUsd]),
      [
        [M.copper, 'isrc:QZZ1A2400003', '7.125'],
        [M.copperTa, 'ta:copper fjord\u001fnova reed', '0.875'],
      ],
    );
    isError(
      t,
      await q('getCluster', { clusterId: UNKNOWN_ID }),
      'NOT_FOUND',
      'CLUSTER_NOT_FOUND',
      'unknown cluster',
    );
    const { rows } = await db.query<{ id: string }>(
      'SELECT id FROM title_clusters WHERE block_id = $1',
      [otherBlock],
    );
    isError(
      t,
      await q('getCluster', { clusterId: rows[0]!.id }),
      'NOT_FOUND',
      'CLUSTER_NOT_FOUND',
      "another block's cluster",
    );
    isError(
      t,
      await q('getCluster', { blockId: UNKNOWN_ID, clusterId: id }),
      'NOT_FOUND',
      'BLOCK_NOT_FOUND',
      'unknown block',
    );
    const stranger = await newOrganization(srv, 'Stranger Org');
    isError(
      t,
      await stranger.client.query('clustering.getCluster', {
        organizationId: stranger.organizationId,
        blockId: block,
        clusterId: id,
      }),
      'NOT_FOUND',
      'BLOCK_NOT_FOUND',
      "another organization's block",
    );
    isError(
      t,
      await stranger.client.query('clustering.getClustersList', {
        organizationId: stranger.organizationId,
        blockId: block,
      }),
      'NOT_FOUND',
      'BLOCK_NOT_FOUND',
    );
  },
);

t.test('getTopClusters: earnings share threshold, limit and wanted clusters', async (t) => {
  const all = ok(t, await q('getTopClusters', {}));
  t.equal(all.totalEarnings, '26.76');
  t.same(
    all.data.map((c: any) => [c.displayTitle, c.earningsShare, c.wanted]),
    [
      ['Velvet Tramline', '0.663303', false],
      ['Copper Fjord', '0.298954', false],
      ['Violet Harbor', '0.037369', false],
    ],
    'Saltwater Ledger (0.000374) is below the default threshold 0.001',
  );
  const wanted = ok(t, await q('getTopClusters', { wantedMusicalDetails: [M.salt], limit: 1 }));
  t.same(
    wanted.data.map((c: any) => [c.displayTitle, c.earningsShare, c.wanted]),
    [
      ['Velvet Tramline', '0.663303', false],
      ['Saltwater Ledger', '0.000374', true],
    ],
  );
  const byId = ok(
    t,
    await q('getTopClusters', { wantedClusterIds: [await clusterIdOf(M.violet)], threshold: 0.5 }),
  );
  t.same(
    byId.data.map((c: any) => [c.displayTitle, c.wanted]),
    [
      ['Velvet Tramline', false],
      ['Violet Harbor', true],
    ],
  );
  t.same(
    ok(t, await q('getTopClusters', { threshold: 0 })).data.length,
    4,
    'threshold 0 keeps every cluster',
  );
  isError(
    t,
    await q('getTopClusters', { wantedMusicalDetails: ["' OR 1=1 --"] }),
    'NOT_FOUND',
    'MUSICAL_DETAIL_NOT_FOUND',
    'SQL in a wanted id',
  );
  isError(
    t,
    await q('getTopClusters', { wantedClusterIds: [UNKNOWN_ID] }),
    'NOT_FOUND',
    'CLUSTER_NOT_FOUND',
  );
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM musical_details WHERE block_id = $1',
    [otherBlock],
  );
  isError(
    t,
    await q('getTopClusters', { wantedMusicalDetails: [rows[0]!.id] }),
    'NOT_FOUND',
    'MUSICAL_DETAIL_NOT_FOUND',
    "another block's musical detail",
  );
  for (const [label, input] of [
    ['threshold above 1', { threshold: 2 }],
    ['negative limit', { limit: -1 }],
    ['limit too large', { limit: 2001 }],
  ] as const) {
    isError(t, await q('getTopClusters', input), 'BAD_REQUEST', 'VALIDATION_FAILED', label);
  }
});

t.test('getTopMdsFromBlock: limit and minimum earnings percentage', async (t) => {
  const all = ok(t, await q('getTopMdsFromBlock', {}));
  t.equal(all.totalEarnings, '26.76');
  t.same(
    all.data.map((m: any) => [m.id, m.earningsUsd, m.earningsPercentage]),
    [
      [M.velvet, '10', '37.3692'],
      [M.copper, '7.125', '26.6256'],
      [M.feat, '5.5', '20.5531'],
      [M.remaster, '2.25', '8.4081'],
      [M.violet, '1', '3.7369'],
      [M.copperTa, '0.875', '3.2698'],
      [M.salt, '0.01', '0.0374'],
    ],
  );
  t.equal(all.data[1].clusterId, await clusterIdOf(M.copper));
  t.same(
    ok(t, await q('getTopMdsFromBlock', { minEarningsPercentage: 5 })).data.map((m: any) => m.id),
    [M.velvet, M.copper, M.feat, M.remaster],
  );
  t.same(
    ok(t, await q('getTopMdsFromBlock', { limit: 2 })).data.map((m: any) => m.id),
    [M.velvet, M.copper],
  );
  isError(
    t,
    await q('getTopMdsFromBlock', { minEarningsPercentage: 101 }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test(
  'updateClustering: moves are overrides with who and when, and survive re-clustering',
  async (t) => {
    const velvetId = await clusterIdOf(M.velvet);
    const violetId = await clusterIdOf(M.violet);
    const moved = ok(t, await update([{ musicalDetailId: M.violet, toClusterId: velvetId }]));
    t.same(moved, {
      blockId: block,
      moved: 1,
      data: [{ musicalDetailId: M.violet, clusterId: velvetId }],
    });
    let list = ok(t, await q('getClustersList', {})).data;
    t.same(list.map(summary), [
      ['Velvet Tramline', 'velvettramline', 4, '18.75', 0, 'auto'],
      ['Copper Fjord', 'copperfjord', 2, '8', 1, 'auto'],
      ['Saltwater Ledger', 'saltwaterledger', 1, '0.01', 1, 'auto'],
    ]);
    // the lowest similarity to the display title: another song's title scores 0
    t.equal(list[0].id, velvetId, 'the cluster keeps its id');
    t.notOk(
      list.some((c: any) => c.id === violetId),
      'the emptied cluster is gone',
    );

    const fresh = ok(t, await update([{ musicalDetailId: M.remaster, newCluster: true }]));
    const newId = fresh.data[0].clusterId;
    t.not(newId, velvetId);
    const c = ok(t, await q('getCluster', { clusterId: newId }));
    t.same(
      [
        c.displayTitle,
        c.entries,
        c.earnings,
        c.source,
        c.musicalDetails.map((e: any) => [e.id, e.moved]),
      ],
      ['VELVET TRAMLINE - 2019 Remaster', 1, '2.25', 'user', [[M.remaster, true]]],
    );

    const { rows: trail } = await db.query(
      `SELECT musical_detail_id, cluster_key, cluster_display_title, created_by FROM cluster_assignment_overrides WHERE block_id = $1 ORDER BY created_at`,
      [block],
    );
    t.same(
      trail.map((r: any) => [
        r.musical_detail_id,
        r.cluster_key,
        r.cluster_display_title,
        r.created_by,
      ]),
      [
        [M.violet, 'velvettramline', 'Velvet Tramline', owner.userId],
        [M.remaster, trail[1]!.cluster_key, 'VELVET TRAMLINE - 2019 Remaster', owner.userId],
      ],
    );
    t.match(trail[1]!.cluster_key, /^user:[0-9a-f-]{36}$/);
    const { rows: activity } = await db.query(
      `SELECT action, subject_type, subject_id, changes FROM activity_events WHERE organization_id = $1 AND action = 'clustering.updateClustering' ORDER BY created_at`,
      [org],
    );
    t.same(
      activity.map((a: any) => [
        a.subject_type,
        a.subject_id,
        a.changes.cluster.after.displayTitle,
      ]),
      [
        ['product', M.violet, 'Velvet Tramline'],
        ['product', M.remaster, 'VELVET TRAMLINE - 2019 Remaster'],
      ],
    );

    // a full block refresh re-clusters from scratch: the moves are laid over again, ids kept
    const before = ok(t, await q('getClustersList', {})).data;
    await refreshBlock(srv.deps, org, rh);
    const after = ok(t, await q('getClustersList', {})).data;
    t.same(
      after.map((x: any) => [x.id, x.displayTitle, x.entries, x.earnings, x.source]),
      before.map((x: any) => [x.id, x.displayTitle, x.entries, x.earnings, x.source]),
    );
    t.equal(await clusterIdOf(M.violet), velvetId);
    t.equal(await clusterIdOf(M.remaster), newId);

    // back into the cluster it was computed into
    ok(t, await update([{ musicalDetailId: M.remaster, toClusterId: velvetId }]));
    list = ok(t, await q('getClustersList', {})).data;
    t.same(
      list.map((x: any) => [x.displayTitle, x.entries, x.earnings]),
      [
        ['Velvet Tramline', 4, '18.75'],
        ['Copper Fjord', 2, '8'],
        ['Saltwater Ledger', 1, '0.01'],
      ],
    );
  },
);

t.test('updateClustering: bad changes', async (t) => {
  const velvetId = await clusterIdOf(M.velvet);
  isError(
    t,
    await update([{ musicalDetailId: UNKNOWN_ID, toClusterId: velvetId }]),
    'NOT_FOUND',
    'MUSICAL_DETAIL_NOT_FOUND',
  );
  isError(
    t,
    await update([{ musicalDetailId: M.salt, toClusterId: UNKNOWN_ID }]),
    'NOT_FOUND',
    'CLUSTER_NOT_FOUND',
  );
  const { rows } = await db.query<{ id: string; cluster_id: string }>(
    'SELECT id, cluster_id FROM musical_details WHERE block_id = $1',
    [otherBlock],
  );
  isError(
    t,
    await update([{ musicalDetailId: rows[0]!.id, toClusterId: velvetId }]),
    'NOT_FOUND',
    'MUSICAL_DETAIL_NOT_FOUND',
    "another block's musical detail",
  );
  isError(
    t,
    await update([{ musicalDetailId: M.salt, toClusterId: rows[0]!.cluster_id }]),
    'NOT_FOUND',
    'CLUSTER_NOT_FOUND',
    "another block's cluster",
  );
  for (const [label, changes] of [
    ['empty', []],
    ['both target kinds', [{ musicalDetailId: M.salt, toClusterId: velvetId, newCluster: true }]],
    ['newCluster false', [{ musicalDetailId: M.salt, newCluster: false }]],
    ['no target', [{ musicalDetailId: M.salt }]],
    [
      'SQL as id',
      [{ musicalDetailId: "x'; DROP TABLE title_clusters; --", toClusterId: velvetId }],
    ],
    [
      'too many',
      Array.from({ length: 501 }, () => ({ musicalDetailId: M.salt, newCluster: true })),
    ],
  ] as const) {
    isError(t, await update(changes), 'BAD_REQUEST', 'VALIDATION_FAILED', label);
  }
  const { rows: n } = await db.query(
    'SELECT count(*)::int AS n FROM title_clusters WHERE block_id = $1',
    [block],
  );
  t.equal(n[0].n, 3, 'nothing changed');
});

t.test('roles and data access', async (t) => {
  for (const role of ['member', 'reader'] as const) {
    const m = await addMember(srv, org, role);
    ok(t, await q('getClustersList', {}, m), `${role} reads`);
    ok(t, await q('getTitleClustering', {}, m), `${role} reads`);
    isError(
      t,
      await update([{ musicalDetailId: M.salt, newCluster: true }], m),
      'FORBIDDEN',
      'INSUFFICIENT_ROLE',
      `${role} may not move`,
    );
  }
  const writer = await addMember(srv, org, 'writer');
  ok(t, await update([{ musicalDetailId: M.salt, newCluster: true }], writer), 'writer moves');
  const restricted = await addMember(srv, org, 'admin');
  await db.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
    [org, restricted.userId, [otherRh]],
  );
  isError(
    t,
    await q('getClustersList', {}, restricted),
    'NOT_FOUND',
    'BLOCK_NOT_FOUND',
    'a block outside the data access',
  );
  isError(
    t,
    await update([{ musicalDetailId: M.salt, newCluster: true }], restricted),
    'NOT_FOUND',
    'BLOCK_NOT_FOUND',
  );
  ok(
    t,
    await restricted.client.query('clustering.getClustersList', {
      organizationId: org,
      blockId: otherBlock,
    }),
    'its own rightsholder',
  );
  isError(
    t,
    await q('getTitleClustering', { sortField: 'entries; DROP TABLE title_clusters' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'SQL as sort field',
  );
  isError(
    t,
    await q('getTitleClustering', { blockId: 'not-a-uuid' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});
