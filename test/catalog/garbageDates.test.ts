// A provider that answers an impossible date (MusicBrainz `first-release-date` "0000" or
// "2019-02-30", say) must not break the catalog: the date is unknown (the release's own date is
// used when it is a real one), and the block's products are still derived. PostgreSQL has no year
// 0, so a result dated "0000" failed every derivation of the block's products (the track, its
// earnings and links were never written). The MusicBrainz provider against the local server
// speaking its format (test/helpers/musicbrainzServer.ts), real ingestion and queue.
import t from 'tap';
import { MusicBrainzProvider } from '../../src/catalog/enrich/musicbrainz.ts';
import { fullDate } from '../../src/catalog/enrich/match.ts';
import { releaseDateOf } from '../../src/catalog/products.ts';
import { drainQueue } from '../../src/catalog/enrichQueue.ts';
import { afterEnrichment } from '../../src/catalog/followUps.ts';
import { createRightsholder } from '../helpers/ingest.ts';
import { musicBrainzRecordings, startMusicBrainzServer } from '../helpers/musicbrainzServer.ts';
import { newOrganization } from '../helpers/principals.ts';
import { enrichmentDrivenServer, ingestBlock } from './helpers.ts';

t.setTimeout(300_000);

t.test('dates as the catalog keeps them: real calendar days from year 1', async (t) => {
  t.equal(fullDate('2019'), '2019-01-01');
  t.equal(fullDate('2019-05'), '2019-05-01');
  t.equal(fullDate('2020-02-29'), '2020-02-29');
  for (const bad of ['0000', '0000-00-00', '2019-02-30', '2019-13', '2019-00-10', '2019-05-00'])
    t.equal(fullDate(bad), null, bad);
  t.equal(releaseDateOf('0000'), null);
  t.equal(releaseDateOf('0000-01-01'), null);
  t.equal(releaseDateOf('0001-01-01'), '0001-01-01');
});

t.test('a recording dated "0000" is found and its track is derived', async (t) => {
  const midnight = musicBrainzRecordings.find((r) => r.isrcs.includes('USRC12250611'))!;
  const garbage = {
    ...midnight,
    firstReleaseDate: '0000',
    releases: midnight.releases.map((r) => ({ ...r, date: '0000-00-00' })),
  };
  const mb = await startMusicBrainzServer([garbage]);
  t.teardown(() => mb.close());
  const provider = new MusicBrainzProvider({
    baseUrl: mb.url,
    userAgent: 'royalty-engine-tests/1.0 ( tests@example.org )',
    minIntervalMs: 1,
    timeoutMs: 2000,
  });
  const hit = await provider.lookup({
    isrc: 'USRC12250611',
    title: 'Midnight Drive',
    artist: 'Bright Harbour',
  });
  t.equal(hit?.providerId, midnight.id);
  t.equal(hit?.releaseDate, null, 'an impossible date is unknown');

  const srv = await enrichmentDrivenServer(t);
  const owner = await newOrganization(srv, 'Garbage Dates Org');
  const org = owner.organizationId;
  const rh = await createRightsholder(owner.client, org, 'Bright Harbour');
  const { block } = await ingestBlock(srv, owner, rh, 'mb.tsv', [
    ['Bright Harbour', 'Midnight Drive', 'USRC12250611', '10.01'],
    ['Bright Harbour', 'Midnight Drive', '', '2.50'],
  ]);
  // a stored answer of before the fix, dated year 0, must not stop the derivation either
  await drainQueue(srv.deps, provider, {
    settings: { baseBackoffMs: 1, maxBackoffMs: 5 },
    onBlocksAdvanced: (ids) => afterEnrichment(srv.deps, ids),
  });
  await srv.deps.pool.query(
    `UPDATE musical_details SET result = jsonb_set(result, '{releaseDate}', '"0000-01-01"') WHERE block_id = $1 AND state = 'found'`,
    [block],
  );
  await afterEnrichment(srv.deps, [block]);
  const { rows } = await srv.deps.pool.query<{
    identity_key: string;
    state: string;
    provider_id: string;
  }>(
    'SELECT identity_key, state, provider_id FROM musical_details WHERE block_id = $1 ORDER BY identity_key',
    [block],
  );
  t.same(rows, [
    { identity_key: 'isrc:USRC12250611', state: 'found', provider_id: midnight.id },
    {
      identity_key: 'ta:midnight drive\u001fbright harbour',
      state: 'found',
      provider_id: midnight.id,
    },
  ]);
  const res: any = await owner.client.query('product.getByBlock', {
    organizationId: org,
    blockId: block,
    pagination: { page: 1, limit: 10, sortBy: 'earnings', sortOrder: 'desc' },
  });
  t.ok(res.ok);
  t.same(
    // the album and its one track earn the same: ordered by kind, not by their random ids
    res.data.data
      .map((p: any) => [
        p.kind,
        p.title,
        p.artist,
        p.isrc,
        p.releaseDate,
        p.genres,
        p.earnings,
        p.musicalDetailCount,
      ])
      .sort((a: string[], b: string[]) => (a[0]! < b[0]! ? -1 : 1)),
    [
      ['album', 'Harbour Lights', 'Bright Harbour', null, null, ['indie pop', 'pop'], '12.51', 2],
      [
        'track',
        'Midnight Drive',
        'Bright Harbour',
        'USRC12250611',
        null,
        ['indie pop', 'pop'],
        '12.51',
        2,
      ],
    ],
    'the fetched genres and release show: the products were derived after enrichment',
  );
});
