// Which spelling of a track stands for it, and which spellings are one track, through the real API
// (statement → block refresh → clusters and products): a tie on rows prefers the mixed-case
// spelling over an all-capitals or all-lower one; "Don't", "Dont" and "Don’t" are one identity and
// "Don T" another; a block whose clusters earn nothing or less still has top clusters.
import t from 'tap';
import { refreshBlock } from '../../src/catalog/blocks.ts';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { ok } from '../helpers/outcome.ts';
import { detailIds } from '../api/clustering/helpers.ts';
import { enrichmentDrivenServer, ingestBlock } from './helpers.ts';
import type { QueryPath } from '../helpers/procedures.ts';

t.setTimeout(600_000);

const srv = await enrichmentDrivenServer(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Spellings Org');
const org = owner.organizationId;
const q = (proc: QueryPath, input: Record<string, unknown>) =>
  owner.client.query(proc, { organizationId: org, ...input });
const [rh, refundsRh] = [
  await createRightsholder(owner.client, org, 'Ivy Lane'),
  await createRightsholder(owner.client, org, 'Refund Artist'),
];
// ISRCs no provider knows, and the test drives no enrichment: the raw titles are the effective ones
const [{ block }, { block: refunds }] = await Promise.all([
  ingestBlock(srv, owner, rh, 'spellings.tsv', [
    ['Ivy Lane', 'LOVE SONG', 'QZZ7S7700001', '1.00'],
    ['Ivy Lane', 'Love Song', 'QZZ7S7700001', '2.00'],
    ['Ivy Lane', 'love song', 'QZZ7S7700001', '0.50'],
    ['Ivy Lane', 'PAPER BOATS', '', '0.25'],
    ['Ivy Lane', 'Paper Boats', '', '0.25'],
    ['Ivy Lane', 'PAPER BOATS', '', '0.25'],
    ['Ivy Lane', 'RIVER', '', '3'],
    ['Ivy Lane', 'river', '', '3'],
    ['Ivy Lane', "Don't Stop", '', '1.10'],
    ['Ivy Lane', 'Dont Stop', '', '2.20'],
    ['Ivy Lane', 'Don’t Stop', '', '3.30'],
    ['Ivy Lane', 'Don T Stop', '', '0.40'],
    ['Ivy Lane', 'Won’t Back\u200b Down', '', '0.60'],
  ]),
  ingestBlock(srv, owner, refundsRh, 'refunds.tsv', [
    ['Refund Artist', 'Cold Harbor', '', '-1.25'],
    ['Refund Artist', 'Glass Orchard', '', '-0.50'],
    ['Refund Artist', 'Quiet Engine', '', '0'],
  ]),
]);

const details = async (blockId: string) =>
  (
    await db.query<{
      identity_key: string;
      title: string;
      artist: string;
      row_count: string;
      earnings_usd: string;
    }>(
      `SELECT identity_key, title, artist, row_count::text, earnings_usd::text FROM musical_details WHERE block_id = $1`,
      [blockId],
    )
  ).rows
    .map((r) => [r.identity_key, r.title, r.artist, r.row_count, r.earnings_usd])
    .sort((a, b) => (a[0]! < b[0]! ? -1 : 1));

t.test('a tie on rows: the mixed-case spelling stands for the track', async (t) => {
  t.same(
    await details(block),
    [
      ['isrc:QZZ7S7700001', 'Love Song', 'Ivy Lane', '3', '3.5'],
      ['ta:dont stop\u001fivy lane', "Don't Stop", 'Ivy Lane', '3', '6.6'],
      ['ta:don t stop\u001fivy lane', 'Don T Stop', 'Ivy Lane', '1', '0.4'],
      ['ta:paper boats\u001fivy lane', 'PAPER BOATS', 'Ivy Lane', '3', '0.75'],
      ['ta:river\u001fivy lane', 'river', 'Ivy Lane', '2', '6'],
      ['ta:wont back down\u001fivy lane', 'Won’t Back\u200b Down', 'Ivy Lane', '1', '0.6'],
    ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
  );
  const clusters = ok(t, await q('clustering.getClustersList', { blockId: block })).data.map(
    (c: any) => [c.displayTitle, c.entries, c.earnings],
  );
  t.same(clusters, [
    ["Don't Stop", 2, '7'],
    ['river', 1, '6'],
    ['Love Song', 1, '3.5'],
    ['PAPER BOATS', 1, '0.75'],
    ['Won’t Back\u200b Down', 1, '0.6'],
  ]);
});

t.test(
  'a block stored under the earlier identity keys is re-keyed by its next refresh, corrections kept',
  async (t) => {
    const key = 'ta:wont back down\u001fivy lane';
    const legacy = 'ta:won t back down\u001fivy lane';
    const { rows } = await db.query<{ id: string; cluster_id: string }>(
      'SELECT id, cluster_id FROM musical_details WHERE block_id = $1 AND identity_key = $2',
      [block, key],
    );
    const { id, cluster_id: cluster } = rows[0]!;
    ok(
      t,
      await owner.client.mutate('musicalDetails.updateResults', {
        organizationId: org,
        resultIds: [id],
        overrideValues: { title: 'Won’t Back Down', artist: 'Ivy Lane', releaseDate: '2020' },
      }),
    );
    const paper = (
      await db.query<{ cluster_id: string }>(
        `SELECT cluster_id FROM musical_details WHERE block_id = $1 AND identity_key = 'ta:paper boats\u001fivy lane'`,
        [block],
      )
    ).rows[0]!.cluster_id;
    const clusterOf = async (identity: string) =>
      (
        await db.query<{ cluster_id: string }>(
          'SELECT cluster_id FROM musical_details WHERE block_id = $1 AND identity_key = $2',
          [block, identity],
        )
      ).rows[0]!.cluster_id;
    const [river, love] = [
      await clusterOf('ta:river\u001fivy lane'),
      await clusterOf('isrc:QZZ7S7700001'),
    ];
    // each target shares one musical detail with its previous self and one with the cluster the moved one left: it keeps its own id
    const moved = ok(
      t,
      await owner.client.mutate('clustering.updateClustering', {
        organizationId: org,
        blockId: block,
        changes: [
          { musicalDetailId: id, toClusterId: paper },
          {
            musicalDetailId: (await detailIds(db, block))['ta:river\u001fivy lane']!,
            toClusterId: love,
          },
        ],
      }),
    );
    t.same(
      moved.data.map((m: any) => m.clusterId),
      [paper, love],
      'the clusters moved into keep their ids',
    );
    t.not(river, love);
    ok(
      t,
      await owner.client.mutate('musicalDetails.ignoreTitles', {
        organizationId: org,
        titles: ['Don’t Stop'],
      }),
    );
    // as an earlier version stored them: apostrophes and format characters were spaces
    await db.query(
      'UPDATE musical_details SET identity_key = $3 WHERE block_id = $1 AND identity_key = $2',
      [block, key, legacy],
    );
    for (const table of ['musical_detail_overrides', 'cluster_assignment_overrides']) {
      await db.query(
        `UPDATE ${table} SET identity_key = $3 WHERE block_id = $1 AND identity_key = $2`,
        [block, key, legacy],
      );
    }
    await db.query(
      `UPDATE ignored_titles SET normalized_title = 'don t stop' WHERE organization_id = $1`,
      [org],
    );

    await refreshBlock(srv.deps, org, rh);
    const after = (
      await db.query<{ id: string; identity_key: string; cluster_id: string }>(
        'SELECT id, identity_key, cluster_id FROM musical_details WHERE block_id = $1 AND id = $2',
        [block, id],
      )
    ).rows;
    t.same(
      after,
      [{ id, identity_key: key, cluster_id: paper }],
      'the same musical detail under the current key, still moved',
    );
    t.not(cluster, paper);
    const record = ok(
      t,
      await q('musicalDetails.getMusicalDetails', { query: { id: { in: [id] } } }),
    ).data[0];
    t.same(
      [
        record.identityKey,
        record.effective.title,
        record.effective.releaseDate,
        record.overriddenFields,
      ],
      [key, 'Won’t Back Down', '2020', ['title', 'artist', 'releaseDate']],
    );
    const overrides = await db.query(
      'SELECT count(*)::int AS n FROM musical_detail_overrides WHERE block_id = $1 AND identity_key = $2 AND musical_detail_id = $3',
      [block, key, id],
    );
    t.equal(overrides.rows[0].n, 1, 'the correction follows the key');
    t.same(
      (
        await db.query('SELECT normalized_title FROM ignored_titles WHERE organization_id = $1', [
          org,
        ])
      ).rows,
      [{ normalized_title: 'dont stop' }],
    );
    t.same(
      await details(block),
      [
        ['isrc:QZZ7S7700001', 'Love Song', 'Ivy Lane', '3', '3.5'],
        ['ta:dont stop\u001fivy lane', "Don't Stop", 'Ivy Lane', '3', '6.6'],
        ['ta:don t stop\u001fivy lane', 'Don T Stop', 'Ivy Lane', '1', '0.4'],
        ['ta:paper boats\u001fivy lane', 'PAPER BOATS', 'Ivy Lane', '3', '0.75'],
        ['ta:river\u001fivy lane', 'river', 'Ivy Lane', '2', '6'],
        ['ta:wont back down\u001fivy lane', 'Won’t Back\u200b Down', 'Ivy Lane', '1', '0.6'],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
  },
);

t.test(
  'getTopClusters and getTopMdsFromBlock: a block that earns nothing or less answers its clusters and details, highest first',
  async (t) => {
    const top = ok(t, await q('clustering.getTopClusters', { blockId: refunds }));
    t.equal(top.totalEarnings, '-1.75');
    t.same(
      top.data.map((c: any) => [c.displayTitle, c.earnings, c.earningsShare, c.wanted]),
      [
        ['Quiet Engine', '0', null, false],
        ['Glass Orchard', '-0.5', null, false],
        ['Cold Harbor', '-1.25', null, false],
      ],
    );
    t.same(
      ok(t, await q('clustering.getTopClusters', { blockId: refunds, limit: 1 })).data.map(
        (c: any) => c.displayTitle,
      ),
      ['Quiet Engine'],
    );
    const mds = ok(
      t,
      await q('clustering.getTopMdsFromBlock', { blockId: refunds, minEarningsPercentage: 1 }),
    );
    t.same(
      [mds.totalEarnings, mds.data.map((m: any) => [m.title, m.earningsUsd, m.earningsPercentage])],
      [
        '-1.75',
        [
          ['Quiet Engine', '0', null],
          ['Glass Orchard', '-0.5', null],
          ['Cold Harbor', '-1.25', null],
        ],
      ],
    );
  },
);

t.test('concurrent corrections: the clusters show every one of them', async (t) => {
  const ids = (
    await db.query<{ id: string; title: string }>(
      'SELECT id, title FROM musical_details WHERE block_id = $1 ORDER BY title',
      [refunds],
    )
  ).rows;
  t.equal(ids.length, 3);
  for (let round = 1; round <= 3; round++) {
    await Promise.all(
      ids.map((m) =>
        owner.client.mutate('musicalDetails.updateResults', {
          organizationId: org,
          resultIds: [m.id],
          overrideValues: {
            title: `${m.title} Take ${round}`,
            artist: 'Refund Artist',
            releaseDate: '2020',
          },
        }),
      ),
    );
    const clusters = ok(t, await q('clustering.getClustersList', { blockId: refunds }))
      .data.map((c: any) => c.displayTitle)
      .sort();
    t.same(clusters, ids.map((m) => `${m.title} Take ${round}`).sort(), `round ${round}`);
  }
});

t.test('concurrent moves: each lands where it was asked, in a cluster that exists', async (t) => {
  const mds = (
    await db.query<{ id: string }>(
      'SELECT id FROM musical_details WHERE block_id = $1 ORDER BY id',
      [block],
    )
  ).rows.map((r) => r.id);
  for (let round = 0; round < 6; round++) {
    const answers = await Promise.all(
      mds.map((id) =>
        owner.client.mutate('clustering.updateClustering', {
          organizationId: org,
          blockId: block,
          changes: [{ musicalDetailId: id, newCluster: true }],
        }),
      ),
    );
    const placed = answers.map((a) => ok(t, a).data[0].clusterId);
    const { rows } = await db.query<{ id: string; cluster_id: string }>(
      'SELECT id, cluster_id FROM musical_details WHERE block_id = $1 ORDER BY id',
      [block],
    );
    t.same(
      rows.map((r) => r.cluster_id),
      placed,
      `round ${round}: where the answers said`,
    );
    t.equal(new Set(placed).size, mds.length, 'each in a cluster of its own');
  }
});
