// A cluster whose display title changes (a later statement makes another spelling the
// highest-earning) keeps its id under a new stable key; what the users corrected by key follows
// it: a move into it stays in it, its track keeps its id and its corrections.
import t from 'tap';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { enrichmentDrivenHandler, ingestBlock } from './helpers.ts';
import type { MutationPath, QueryPath } from '../helpers/procedures.ts';
import { isError, ok } from '../helpers/outcome.ts';

t.setTimeout(600_000);

const srv = await enrichmentDrivenHandler(t);
const db = srv.deps.pool;
const owner = await newOrganization(srv, 'Rekey Org');
const org = owner.organizationId;
const rh = await createRightsholder(owner.client, org, 'Probe Artist');
// ISRCs no provider knows, and the test drives no enrichment: the raw titles are the effective ones
const { block } = await ingestBlock(srv, owner, rh, 'a.tsv', [
  ['Probe Artist', 'Midnight Drive', 'QZZ9Z9900001', '5'],
  ['Probe Artist', 'Midnight Drvie', 'QZZ9Z9900002', '3'],
  ['Probe Artist', 'Ocean Avenue', 'QZZ9Z9900003', '1'],
]);
const q = (proc: QueryPath, input: Record<string, unknown>) =>
  owner.client.queryUnchecked(proc, { organizationId: org, ...input });
const mut = (proc: MutationPath, input: Record<string, unknown>) =>
  owner.client.mutateUnchecked(proc, { organizationId: org, ...input });
const clusters = async () =>
  ok(t, await q('clustering.getClustersList', { blockId: block })).data.map((c: any) => [
    c.id,
    c.stableKey,
    c.displayTitle,
    c.entries,
  ]);
const tracks = async () =>
  ok(t, await q('product.getByBlock', { blockId: block }))
    .data.filter((p: any) => p.kind === 'track')
    .map((p: any) => [
      p.id,
      p.stableKey,
      p.title,
      p.earnings,
      p.musicalDetailCount,
      p.overriddenFields,
    ]);
const ocean = (
  await db.query(
    `SELECT id FROM musical_details WHERE block_id = $1 AND identity_key = 'isrc:QZZ9Z9900003'`,
    [block],
  )
).rows[0].id as string;

t.test('corrections by key follow a cluster whose display title changed', async (t) => {
  const [[midnight, midnightKey, midnightTitle], [oceanCluster]] = await clusters();
  t.same(
    [midnightKey, midnightTitle],
    ['midnightdrive', 'Midnight Drive'],
    'the highest-earning spelling is the display title',
  );
  ok(
    t,
    await mut('clustering.updateClustering', {
      blockId: block,
      changes: [{ musicalDetailId: ocean, toClusterId: midnight }],
    }),
  );
  const [[track]] = await tracks();
  t.equal(
    ok(t, await mut('product.updateById', { productId: track, title: 'Midnight Drive (Fixed)' }))
      .title,
    'Midnight Drive (Fixed)',
  );
  t.same(await tracks(), [
    [
      track,
      'track:cluster:midnightdrive\u001fprobe artist',
      'Midnight Drive (Fixed)',
      '9',
      3,
      ['title'],
    ],
  ]);

  // the other spelling now earns more: the cluster keeps its id under the key of its new display title
  await ingestBlock(
    srv,
    owner,
    rh,
    'b.tsv',
    [['Probe Artist', 'Midnight Drvie', 'QZZ9Z9900002', '10']],
    2,
  );
  t.same(
    await clusters(),
    [[midnight, 'midnightdrvie', 'Midnight Drvie', 3]],
    'the moved musical detail stays in the cluster it was moved to',
  );
  t.same(
    await tracks(),
    [
      [
        track,
        'track:cluster:midnightdrvie\u001fprobe artist',
        'Midnight Drive (Fixed)',
        '19',
        3,
        ['title'],
      ],
    ],
    'the track keeps its id and its correction',
  );
  const got = ok(t, await q('product.getById', { productId: track }));
  t.same(
    got.trail.map((o: any) => [o.kind, o.values, o.createdBy]),
    [['update_by_id', { title: 'Midnight Drive (Fixed)' }, owner.userId]],
  );
  const entries = ok(
    t,
    await q('clustering.getCluster', { blockId: block, clusterId: midnight }),
  ).musicalDetails;
  t.same(
    entries.map((e: any) => [e.title, e.moved]),
    [
      ['Midnight Drvie', false],
      ['Midnight Drive', false],
      ['Ocean Avenue', true],
    ],
  );
  isError(
    t,
    await q('clustering.getCluster', { blockId: block, clusterId: oceanCluster }),
    'NOT_FOUND',
    'CLUSTER_NOT_FOUND',
    'the emptied cluster is gone',
  );

  // and again with the first spelling back on top: the keys follow back
  await ingestBlock(
    srv,
    owner,
    rh,
    'c.tsv',
    [['Probe Artist', 'Midnight Drive', 'QZZ9Z9900001', '20']],
    3,
  );
  t.same(await clusters(), [[midnight, 'midnightdrive', 'Midnight Drive', 3]]);
  t.same(await tracks(), [
    [
      track,
      'track:cluster:midnightdrive\u001fprobe artist',
      'Midnight Drive (Fixed)',
      '39',
      3,
      ['title'],
    ],
  ]);
});
