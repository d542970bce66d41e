// Enrichment never answers a live, acoustic, instrumental or remixed line with another version of
// the recording (README "Enrichment providers", Matching): the clustering keeps such versions
// apart, and a result naming the studio recording would merge them into one track product
// (products are merged on the provider id and ISRC of a found result) and give the live line the
// studio recording's ISRC and release. Real ingestion, real block refresh, the offline dataset.
import t from 'tap';
import { OfflineProvider } from '../../src/catalog/enrich/offline.ts';
import { titleKey, titleScore } from '../../src/catalog/enrich/match.ts';
import { createRightsholder } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { detailIds, waitForEnrichment } from '../api/clustering/helpers.ts';
import { ingestBlock } from './helpers.ts';

t.setTimeout(300_000);

t.test('the offline provider: a version is not the original, nor another kind of version', async (t) => {
  const provider = new OfflineProvider();
  // the dataset holds "Blue Canyon" by Marco Deluca (c393b90e…), and no live or acoustic version of it
  const studio = await provider.lookup({ isrc: null, title: 'Blue Canyon', artist: 'Marco Deluca' });
  t.equal(studio?.providerId, 'c393b90e-64d7-562e-a53e-e363ea498434');
  t.equal(studio?.confidence, 0.95);
  t.equal(await provider.lookup({ isrc: null, title: 'Blue Canyon (Live)', artist: 'Marco Deluca' }), null, 'a live line is not the studio recording');
  t.equal(await provider.lookup({ isrc: null, title: 'Blue Canyon - Acoustic', artist: 'Marco Deluca' }), null);
  t.equal(await provider.lookup({ isrc: null, title: 'Blue Canyon (Instrumental)', artist: 'Marco Deluca' }), null);
  // versions that are the same recording still find it
  t.equal((await provider.lookup({ isrc: null, title: 'Blue Canyon - 2011 Remaster', artist: 'Marco Deluca' }))?.providerId, 'c393b90e-64d7-562e-a53e-e363ea498434');
  t.equal((await provider.lookup({ isrc: null, title: 'Blue Canyon (feat. Kai Moss)', artist: 'Marco Deluca' }))?.providerId, 'c393b90e-64d7-562e-a53e-e363ea498434');
  // the scores: same title 1, the original of a remaster 0.85, another kind of version at most 0.5
  t.equal(titleScore(titleKey('Song - Live'), titleKey('Song (Live)')), 1);
  t.equal(titleScore(titleKey('Song - 2011 Remaster'), titleKey('Song')), 0.85);
  t.equal(titleScore(titleKey('Song'), titleKey('Song - 2011 Remaster')), 0.8);
  t.equal(titleScore(titleKey('Song (Live)'), titleKey('Song')), 0.5);
  t.equal(titleScore(titleKey('Song'), titleKey('Song (Acoustic)')), 0.5);
  t.equal(titleScore(titleKey('Song (Live)'), titleKey('Song (Acoustic)')), 0.5);
  t.equal(titleScore(titleKey('Song (Live)'), titleKey('Song (Live at Wembley)')), 0.8, 'the same kind of version: as before');
});

t.test('a live line and its studio recording stay two tracks end to end', async (t) => {
  const srv = await startTestServer(t, { role: 'serve' });
  const owner = await newOrganization(srv, 'Version Org');
  const org = owner.organizationId;
  const db = srv.deps.pool;
  const rh = await createRightsholder(owner.client, org, 'Marco Deluca');
  const { status, block } = await ingestBlock(srv, owner, rh, 'dk.tsv', [
    ['Marco Deluca', 'Blue Canyon', '', '10.10'],
    ['Marco Deluca', 'Blue Canyon (Live)', '', '2.02'],
    ['Marco Deluca', 'Blue Canyon - Acoustic', '', '0.33'],
  ]);
  t.equal(status, 'processed');
  await waitForEnrichment(db, block);
  const md = await detailIds(db, block);
  const { rows } = await db.query<{ identity_key: string; state: string; provider_id: string | null }>(
    'SELECT identity_key, state, provider_id FROM musical_details WHERE block_id = $1 ORDER BY identity_key',
    [block],
  );
  t.same(rows, [
    { identity_key: 'ta:blue canyon\u001fmarco deluca', state: 'found', provider_id: 'c393b90e-64d7-562e-a53e-e363ea498434' },
    { identity_key: 'ta:blue canyon acoustic\u001fmarco deluca', state: 'not_found', provider_id: null },
    { identity_key: 'ta:blue canyon live\u001fmarco deluca', state: 'not_found', provider_id: null },
  ]);
  const res: any = await owner.client.query('product.getByBlock', { organizationId: org, blockId: block, pagination: { page: 1, limit: 10, sortBy: 'earnings', sortOrder: 'desc' } });
  t.ok(res.ok, 'getByBlock');
  // by earnings; the track and the album of the same 10.1 tie, and a tie follows the products'
  // ids (random): sorted here by kind within a tie
  const products = res.data.data.map((p: any) => [p.kind, p.title, p.isrc, p.earnings, p.musicalDetailCount]);
  products.sort((a: any[], b: any[]) => Number(b[3]) - Number(a[3]) || String(b[0]).localeCompare(String(a[0])));
  t.same(
    products,
    [
      ['track', 'Blue Canyon', 'CAP2T9700440', '10.1', 1],
      ['album', 'Distant Skies', null, '10.1', 1],
      ['track', 'Blue Canyon (Live)', null, '2.02', 1],
      ['track', 'Blue Canyon - Acoustic', null, '0.33', 1],
    ],
  );
  t.equal(Object.keys(md).length, 3);
});
