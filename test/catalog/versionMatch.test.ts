// Enrichment never answers a live, acoustic, instrumental or remixed line with another version of
// the recording (docs/catalog.md "Enrichment providers"): the clustering keeps such versions
// apart, and a result naming the studio recording would merge them into one track product
// (products are merged on the provider id and ISRC of a found result) and give the live line the
// studio recording's ISRC and release. Real ingestion, real block refresh, the offline dataset.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { refreshClusters } from '../../src/catalog/clusters.ts';
import { refreshProducts } from '../../src/catalog/products.ts';
import { repoRoot } from '../setup/paths.ts';
import { OfflineProvider } from '../../src/catalog/enrich/offline.ts';
import { titleKey, titleScore } from '../../src/catalog/enrich/match.ts';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';
import { detailIds, waitForEnrichment } from '../api/clustering/helpers.ts';
import { ingestBlock, waitForBlock } from './helpers.ts';
import { identityKey } from '../../src/catalog/identity.ts';

t.setTimeout(300_000);

/** A live version whose recording key (`bluecanyon|live:<venue…>`, 254 code points) is stored bounded. */
const LONG_LIVE =
  'Blue Canyon (Live at the Grand Municipal Amphitheatre of Santa Fe, New Mexico, during the Summer Solstice Festival for the Benefit of the Desert Preservation Society, with Guest Musicians from the Rio Grande Valley and the Sangre de Cristo Mountains over Three Consecutive Autumn Nights)';
/** its first 200 code points, `~` and a hash (src/catalog/identity.ts boundKey) */
const LONG_LIVE_KEY =
  'bluecanyon|live:grand municipal amphitheatre of santa fe new mexico during summer solstice festival for benefit of desert preservation society with guest musicians from rio grande valley and sangre de~39b80754eff1b110c5bd44fd85b2ae81';
const longLive = identityKey({ isrc: null, title: LONG_LIVE, artist: 'Marco Deluca' })!;

t.test(
  'the offline provider: a version is not the original, nor another kind of version',
  async (t) => {
    const provider = new OfflineProvider();
    // the dataset holds "Blue Canyon" by Marco Deluca (c393b90e…), and no live or acoustic version of it
    const studio = await provider.lookup({
      isrc: null,
      title: 'Blue Canyon',
      artist: 'Marco Deluca',
    });
    t.equal(studio?.providerId, 'c393b90e-64d7-562e-a53e-e363ea498434');
    t.equal(studio?.confidence, 0.95);
    t.equal(
      await provider.lookup({ isrc: null, title: 'Blue Canyon (Live)', artist: 'Marco Deluca' }),
      null,
      'a live line is not the studio recording',
    );
    t.equal(
      await provider.lookup({
        isrc: null,
        title: 'Blue Canyon - Acoustic',
        artist: 'Marco Deluca',
      }),
      null,
    );
    t.equal(
      await provider.lookup({
        isrc: null,
        title: 'Blue Canyon (Instrumental)',
        artist: 'Marco Deluca',
      }),
      null,
    );
    // versions that are the same recording still find it
    t.equal(
      (
        await provider.lookup({
          isrc: null,
          title: 'Blue Canyon - 2011 Remaster',
          artist: 'Marco Deluca',
        })
      )?.providerId,
      'c393b90e-64d7-562e-a53e-e363ea498434',
    );
    t.equal(
      (
        await provider.lookup({
          isrc: null,
          title: 'Blue Canyon (feat. Kai Moss)',
          artist: 'Marco Deluca',
        })
      )?.providerId,
      'c393b90e-64d7-562e-a53e-e363ea498434',
    );
    // the scores: same title 1, the original of a remaster 0.85, another kind of version at most 0.5
    t.equal(titleScore(titleKey('Song - Live'), titleKey('Song (Live)')), 1);
    t.equal(titleScore(titleKey('Song - 2011 Remaster'), titleKey('Song')), 0.85);
    t.equal(titleScore(titleKey('Song'), titleKey('Song - 2011 Remaster')), 0.8);
    t.equal(titleScore(titleKey('Song (Live)'), titleKey('Song')), 0.5);
    t.equal(titleScore(titleKey('Song'), titleKey('Song (Acoustic)')), 0.5);
    t.equal(titleScore(titleKey('Song (Live)'), titleKey('Song (Acoustic)')), 0.5);
    t.equal(
      titleScore(titleKey('Song (Live)'), titleKey('Song (Live at Wembley)')),
      0.8,
      'the same kind of version: as before',
    );
  },
);

t.test(
  'a live line and its studio recording stay two tracks end to end; a misspelt remixer does not split a remix',
  async (t) => {
    const srv = await startTestHandler(t, { jobs: true });
    const owner = await newOrganization(srv, 'Version Org');
    const org = owner.organizationId;
    const db = srv.deps.pool;
    const rh = await createRightsholder(owner.client, org, 'Marco Deluca');
    const { status, block } = await ingestBlock(srv, owner, rh, 'dk.tsv', [
      ['Marco Deluca', 'Blue Canyon', '', '10.10'],
      ['Marco Deluca', 'Blue Canyon (Live)', '', '2.02'],
      ['Marco Deluca', 'Blue Canyon - Acoustic', '', '0.33'],
      // one remix, its remixer once misspelt (one letter, sorting first); another remixer's is another recording
      ['Marco Deluca', 'Blue Canyon (Tiësto Remix)', '', '1.50'],
      ['Marco Deluca', 'Blue Canyon (Tieso Remix)', '', '0.25'],
      ['Marco Deluca', 'Blue Canyon (Alesso Remix)', '', '0.75'],
    ]);
    t.equal(status, 'processed');
    await waitForEnrichment(db, block);
    const md = await detailIds(db, block);
    const { rows } = await db.query<{
      identity_key: string;
      state: string;
      provider_id: string | null;
    }>(
      'SELECT identity_key, state, provider_id FROM musical_details WHERE block_id = $1 ORDER BY identity_key',
      [block],
    );
    t.same(rows, [
      {
        identity_key: 'ta:blue canyon\u001fmarco deluca',
        state: 'found',
        provider_id: 'c393b90e-64d7-562e-a53e-e363ea498434',
      },
      {
        identity_key: 'ta:blue canyon acoustic\u001fmarco deluca',
        state: 'not_found',
        provider_id: null,
      },
      {
        identity_key: 'ta:blue canyon alesso remix\u001fmarco deluca',
        state: 'not_found',
        provider_id: null,
      },
      {
        identity_key: 'ta:blue canyon live\u001fmarco deluca',
        state: 'not_found',
        provider_id: null,
      },
      {
        identity_key: 'ta:blue canyon tieso remix\u001fmarco deluca',
        state: 'not_found',
        provider_id: null,
      },
      {
        identity_key: 'ta:blue canyon tiesto remix\u001fmarco deluca',
        state: 'not_found',
        provider_id: null,
      },
    ]);
    const res: any = await owner.client.query('product.getByBlock', {
      organizationId: org,
      blockId: block,
      pagination: { page: 1, limit: 10, sortBy: 'earnings', sortOrder: 'desc' },
    });
    t.ok(res.ok, 'getByBlock');
    // by earnings; the track and the album of the same 10.1 tie, and a tie follows the products'
    // ids (random): sorted here by kind within a tie
    const products = res.data.data.map((p: any) => [
      p.kind,
      p.title,
      p.isrc,
      p.earnings,
      p.musicalDetailCount,
    ]);
    products.sort(
      (a: any[], b: any[]) =>
        Number(b[3]) - Number(a[3]) || String(b[0]).localeCompare(String(a[0])),
    );
    t.same(products, [
      ['track', 'Blue Canyon', 'CAP2T9700440', '10.1', 1],
      ['album', 'Distant Skies', null, '10.1', 1],
      ['track', 'Blue Canyon (Live)', null, '2.02', 1],
      ['track', 'Blue Canyon (Tiësto Remix)', null, '1.75', 2],
      ['track', 'Blue Canyon (Alesso Remix)', null, '0.75', 1],
      ['track', 'Blue Canyon - Acoustic', null, '0.33', 1],
    ]);
    t.equal(Object.keys(md).length, 6);
    const { rows: remixes } = await db.query<{ stable_key: string }>(
      `SELECT stable_key FROM products WHERE block_id = $1 AND stable_key LIKE '%remix%' ORDER BY stable_key`,
      [block],
    );
    t.same(
      remixes.map((r) => r.stable_key),
      [
        'track:cluster:bluecanyon|remix:alesso\u001fmarco deluca',
        'track:cluster:bluecanyon|remix:tiesto\u001fmarco deluca',
      ],
      "the misspelt credit joins the remix it misspells, under the common spelling's key",
    );
  },
);

t.test(
  'song level: one cluster for every version, the song in the view, corrections carried by the migration',
  async (t) => {
    const srv = await startTestHandler(t, { jobs: true });
    const owner = await newOrganization(srv, 'Song Org');
    const org = owner.organizationId;
    const db = srv.deps.pool;
    const rh = await createRightsholder(owner.client, org, 'Marco Deluca');
    const { status, block } = await ingestBlock(srv, owner, rh, 'dk.tsv', [
      ['Marco Deluca', 'BLUE CANYON', '', '10.10'],
      ['Marco Deluca', 'Blue Canyon (Live)', '', '2.02'],
      ['Marco Deluca', 'Blue Canyon - Acoustic', '', '0.33'],
      ['Marco Deluca', 'Desert Road', '', '1.01'],
      ['Marco Deluca', LONG_LIVE, '', '0.40'],
      ['Marco Deluca', 'Red Mesa', '', '0.07'],
    ]);
    t.equal(status, 'processed');
    await waitForEnrichment(db, block);
    const md = await detailIds(db, block);
    const songOf = async () =>
      Object.fromEntries(
        (
          await db.query<{ identity_key: string; stable_key: string; display_title: string }>(
            `SELECT md.identity_key, c.stable_key, c.display_title FROM musical_details md JOIN title_clusters c ON c.id = md.cluster_id WHERE md.block_id = $1`,
            [block],
          )
        ).rows.map((r) => [r.identity_key, `${r.stable_key} ${r.display_title}`]),
      );
    // the live and acoustic versions are the song; its name is the fetched mixed-case spelling
    t.same(await songOf(), {
      'ta:blue canyon\u001fmarco deluca': 'bluecanyon Blue Canyon',
      'ta:blue canyon live\u001fmarco deluca': 'bluecanyon Blue Canyon',
      'ta:blue canyon acoustic\u001fmarco deluca': 'bluecanyon Blue Canyon',
      'ta:desert road\u001fmarco deluca': 'desertroad Desert Road',
      [longLive]: 'bluecanyon Blue Canyon',
      'ta:red mesa\u001fmarco deluca': 'redmesa Red Mesa',
    });
    const tracks = async () =>
      (
        await db.query<{ stable_key: string; title: string }>(
          `SELECT stable_key, title FROM products WHERE block_id = $1 AND kind = 'track' ORDER BY stable_key`,
          [block],
        )
      ).rows.map((r) => [r.stable_key, r.title]);
    t.same(await tracks(), [
      ['track:cluster:bluecanyon\u001fmarco deluca', 'Blue Canyon'],
      ['track:cluster:bluecanyon|acoustic\u001fmarco deluca', 'Blue Canyon - Acoustic'],
      ['track:cluster:bluecanyon|live\u001fmarco deluca', 'Blue Canyon (Live)'],
      [`track:cluster:${LONG_LIVE_KEY}\u001fmarco deluca`, LONG_LIVE],
      ['track:cluster:desertroad\u001fmarco deluca', 'Desert Road'],
      ['track:cluster:redmesa\u001fmarco deluca', 'Red Mesa'],
    ]);
    const cube = async () => {
      const m = (name: string) => `analytics_full_view.${name}`;
      const res: any = await owner.client.mutate('cube.query', {
        organizationId: org,
        query: {
          dimensions: [
            m('track_title_raw'),
            m('product_title'),
            m('product_version'),
            m('product_release_date'),
          ],
          measures: [m('royalty_earnings_usd')],
          filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rh] }],
          order: { [m('track_title_raw')]: 'asc' },
        },
      });
      t.ok(res.ok, JSON.stringify(res.error ?? 'cube.query'));
      return res.data.data.map((r: any) => Object.values(r));
    };
    // the studio recording's release (1997-06-21 in the offline dataset) dates every version of the song
    t.same(await cube(), [
      ['BLUE CANYON', 'Blue Canyon', 'original', '1997-06-21T00:00:00.000', '10.1'],
      [LONG_LIVE, 'Blue Canyon', 'live', '1997-06-21T00:00:00.000', '0.4'],
      ['Blue Canyon (Live)', 'Blue Canyon', 'live', '1997-06-21T00:00:00.000', '2.02'],
      ['Blue Canyon - Acoustic', 'Blue Canyon', 'acoustic', '1997-06-21T00:00:00.000', '0.33'],
      ['Desert Road', 'Desert Road', 'original', null, '1.01'],
      ['Red Mesa', 'Red Mesa', 'original', null, '0.07'],
    ]);

    // the corrections as the recording-level clustering stored them: "Desert Road" moved into the
    // live version's own cluster, that cluster holding the live line, the live track retitled
    const { rows: live } = await db.query<{ id: string }>(
      `INSERT INTO title_clusters (organization_id, block_id, stable_key, display_title, similarity, source)
     SELECT organization_id, id, 'bluecanyon|live', 'Blue Canyon (Live)', 1, 'auto' FROM catalog_blocks WHERE id = $1 RETURNING id`,
      [block],
    );
    await db.query('UPDATE musical_details SET cluster_id = $1 WHERE id = ANY ($2::uuid[])', [
      live[0]!.id,
      [md['ta:blue canyon live\u001fmarco deluca'], md['ta:desert road\u001fmarco deluca']],
    ]);
    await db.query(
      `INSERT INTO cluster_assignment_overrides (organization_id, block_id, identity_key, musical_detail_id, cluster_key, cluster_display_title)
     SELECT organization_id, id, 'ta:desert road\u001fmarco deluca', $2, 'bluecanyon|live', 'Blue Canyon (Live)' FROM catalog_blocks WHERE id = $1`,
      [block, md['ta:desert road\u001fmarco deluca']],
    );
    await db.query(
      `INSERT INTO product_overrides (organization_id, block_id, product_key, kind, "values")
     SELECT organization_id, id, 'track:cluster:bluecanyon|live\u001fmarco deluca', 'update_by_id', '{"title": "Blue Canyon (Live at Home)"}' FROM catalog_blocks WHERE id = $1`,
      [block],
    );
    // the same for a version whose key was stored bounded: "Red Mesa" moved into it, its track retitled
    const { rows: longCluster } = await db.query<{ id: string }>(
      `INSERT INTO title_clusters (organization_id, block_id, stable_key, display_title, similarity, source)
     SELECT organization_id, id, $2, $3, 1, 'auto' FROM catalog_blocks WHERE id = $1 RETURNING id`,
      [block, LONG_LIVE_KEY, LONG_LIVE],
    );
    await db.query('UPDATE musical_details SET cluster_id = $1 WHERE id = ANY ($2::uuid[])', [
      longCluster[0]!.id,
      [md[longLive], md['ta:red mesa\u001fmarco deluca']],
    ]);
    await db.query(
      `INSERT INTO cluster_assignment_overrides (organization_id, block_id, identity_key, musical_detail_id, cluster_key, cluster_display_title)
     SELECT organization_id, id, 'ta:red mesa\u001fmarco deluca', $2, $3, $4 FROM catalog_blocks WHERE id = $1`,
      [block, md['ta:red mesa\u001fmarco deluca'], LONG_LIVE_KEY, LONG_LIVE],
    );
    await db.query(
      `INSERT INTO product_overrides (organization_id, block_id, product_key, kind, "values")
     SELECT organization_id, id, $2, 'update_by_id', '{"title": "Blue Canyon (Live in Santa Fe)"}' FROM catalog_blocks WHERE id = $1`,
      [block, `track:cluster:${LONG_LIVE_KEY}\u001fmarco deluca`],
    );
    await db.query(
      `INSERT INTO ignored_titles (organization_id, title, normalized_title) VALUES ($1, 'Blue Canyon (Karaoke)', 'blue canyon karaoke')`,
      [org],
    );

    for (const migration of [
      '000038_song_level_clusters.sql',
      '000047_song_moves_bounded_keys.sql',
    ])
      await db.query(await readFile(path.join(repoRoot, 'sql', 'migrations', migration), 'utf8'));
    const { rows: moves } = await db.query(
      'SELECT identity_key, cluster_key FROM cluster_assignment_overrides WHERE block_id = $1 ORDER BY identity_key',
      [block],
    );
    t.same(
      moves,
      [
        { identity_key: 'ta:desert road\u001fmarco deluca', cluster_key: 'bluecanyon' },
        { identity_key: 'ta:red mesa\u001fmarco deluca', cluster_key: 'bluecanyon' },
      ],
      "each move names the version's song, the bounded key's too",
    );
    await waitForBlock(db, rh, 1);
    // twice: the first refresh still sees the former version clusters, the second no longer
    for (let i = 0; i < 2; i++) {
      await refreshClusters(srv.deps, block);
      await refreshProducts(srv.deps, block);
    }
    const songs = await songOf();
    t.same(
      [songs['ta:desert road\u001fmarco deluca'], songs['ta:red mesa\u001fmarco deluca']],
      ['bluecanyon Blue Canyon', 'bluecanyon Blue Canyon'],
      'the moved lines are in the song',
    );
    t.equal(new Set(Object.values(songs)).size, 1);
    // the live track kept its key and its correction; the moved line is the song's original recording
    t.same(await tracks(), [
      ['track:cluster:bluecanyon\u001fmarco deluca', 'Blue Canyon'],
      ['track:cluster:bluecanyon|acoustic\u001fmarco deluca', 'Blue Canyon - Acoustic'],
      ['track:cluster:bluecanyon|live\u001fmarco deluca', 'Blue Canyon (Live at Home)'],
      [`track:cluster:${LONG_LIVE_KEY}\u001fmarco deluca`, 'Blue Canyon (Live in Santa Fe)'],
    ]);
    const { rows: ignored } = await db.query(
      'SELECT title, normalized_title FROM ignored_titles WHERE organization_id = $1',
      [org],
    );
    t.same(ignored, [{ title: 'Blue Canyon (Karaoke)', normalized_title: 'blue canyon karaoke' }]);
    t.same(await cube(), [
      ['BLUE CANYON', 'Blue Canyon', 'original', '1997-06-21T00:00:00.000', '10.1'],
      [LONG_LIVE, 'Blue Canyon (Live in Santa Fe)', 'live', '1997-06-21T00:00:00.000', '0.4'],
      [
        'Blue Canyon (Live)',
        'Blue Canyon (Live at Home)',
        'live',
        '1997-06-21T00:00:00.000',
        '2.02',
      ],
      ['Blue Canyon - Acoustic', 'Blue Canyon', 'acoustic', '1997-06-21T00:00:00.000', '0.33'],
      ['Desert Road', 'Blue Canyon', 'original', '1997-06-21T00:00:00.000', '1.01'],
      ['Red Mesa', 'Blue Canyon', 'original', '1997-06-21T00:00:00.000', '0.07'],
    ]);
  },
);
