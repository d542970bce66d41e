// A re-fetch (fetching.refetchByBlock) of musical details that were found: the earlier result
// stays in effect, marked stale, while the new fetch is queued, runs, and when it fails (the
// failure reported in state and lastError): the values, the provider with its id, and the products
// merged on that recording are those of the result shown; a new answer replaces it (found) or
// clears it (not found). The MusicBrainz provider is tested against the local server speaking its
// format (test/helpers/musicbrainzServer.ts), failing with a body that is not JSON.
import t from 'tap';
import { MusicBrainzProvider } from '../../src/catalog/enrich/musicbrainz.ts';
import { OfflineProvider } from '../../src/catalog/enrich/offline.ts';
import type { EnrichmentProvider } from '../../src/catalog/enrich/provider.ts';
import { drainQueue } from '../../src/catalog/enrichQueue.ts';
import { afterEnrichment } from '../../src/catalog/followUps.ts';
import { createRightsholder } from '../helpers/ingest.ts';
import { startMusicBrainzServer } from '../helpers/musicbrainzServer.ts';
import { addMember, newOrganization } from '../helpers/principals.ts';
import { enrichmentDrivenHandler, ingestBlock } from './helpers.ts';

t.setTimeout(900_000);

const mb = await startMusicBrainzServer();
t.teardown(() => mb.close());
const musicbrainz = new MusicBrainzProvider({
  baseUrl: mb.url,
  userAgent: 'royalty-engine-tests/1.0 ( tests@example.org )',
  minIntervalMs: 1,
  timeoutMs: 2000,
});

const srv = await enrichmentDrivenHandler(t);
const owner = await newOrganization(srv, 'Refetch Org');
const org = owner.organizationId;
const writer = await addMember(srv, org, 'writer');
const rhMb = await createRightsholder(owner.client, org, 'Bright Harbour');
const rhOffline = await createRightsholder(owner.client, org, 'Orla Finn');
const [{ block: mbBlock }, { block: offlineBlock }] = await Promise.all([
  ingestBlock(srv, owner, rhMb, 'mb.tsv', [
    ['Bright Harbour', 'Midnight Drive', 'USRC12250611', '10.01'],
    ['Bright Harbour', 'Midnight Drive', '', '2.50'],
  ]),
  ingestBlock(srv, owner, rhOffline, 'offline.tsv', [
    ['Orla Finn', 'Blue Hearts', 'ESA1B1100343', '3.30'],
  ]),
]);

/** Drains the queue as the catalog_enrich task does: clusters and products follow each round. */
const drain = (provider: EnrichmentProvider) =>
  drainQueue(srv.deps, provider, {
    settings: { baseBackoffMs: 1, maxBackoffMs: 5 },
    onBlocksAdvanced: (ids) => afterEnrichment(srv.deps, ids),
  });

async function details(blockId: string) {
  const res = await owner.client.query('musicalDetails.getMusicalDetails', {
    organizationId: org,
    query: { blockId: { in: [blockId] } },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.data as Record<string, any>[];
}
async function tracks(blockId: string) {
  const res = await owner.client.query('product.getByBlock', {
    organizationId: org,
    blockId,
    pagination: { page: 1, limit: 100, sortBy: 'earnings', sortOrder: 'desc' },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return (res.data.data as Record<string, any>[])
    .filter((p) => p.kind === 'track')
    .map((p) => [p.id, p.title, p.artist, p.earnings, p.musicalDetailCount]);
}

const MIDNIGHT = '3e1f6d2a-8b4c-4d7e-9a05-6c2b8e4f1a93';

// the MusicBrainz server knows Bright Harbour's recording, the offline dataset Orla Finn's
const held = await owner.client.mutate('fetching.stopFetchingByBlock', {
  organizationId: org,
  blockId: offlineBlock,
});
if (!held.ok) throw new Error(JSON.stringify(held.error));
await drain(musicbrainz);
const resumed = await owner.client.mutate('fetching.reprocessSkippedByBlock', {
  organizationId: org,
  blockId: offlineBlock,
});
if (!resumed.ok) throw new Error(JSON.stringify(resumed.error));
await drain(new OfflineProvider());

t.test('found, then corrected: one track merged on the recording', async (t) => {
  const mds = await details(mbBlock);
  t.same(
    mds.map((m) => [m.identityKey, m.state, m.provider, m.providerId, m.result?.title, m.stale]),
    [
      ['isrc:USRC12250611', 'found', 'musicbrainz', MIDNIGHT, 'Midnight Drive', false],
      [
        'ta:midnight drive\u001fbright harbour',
        'found',
        'musicbrainz',
        MIDNIGHT,
        'Midnight Drive',
        false,
      ],
    ],
  );
  // the user credits the second line otherwise: another artist, so another group, but one recording
  const corrected = await owner.client.mutate('musicalDetails.updateResults', {
    organizationId: org,
    resultIds: [mds[1]!.id],
    overrideValues: { title: '', artist: 'Bright Harbour & Friends', releaseDate: '2019-05' },
  });
  t.ok(corrected.ok, JSON.stringify(corrected.error));
  const before = await tracks(mbBlock);
  t.same(
    before.map((p) => p.slice(1)),
    [['Midnight Drive', 'Bright Harbour', '12.51', 2]],
    'one track: the same recording',
  );
});

t.test(
  'a re-fetch keeps the earlier result in effect, marked stale, until a new answer',
  async (t) => {
    const productsBefore = await tracks(mbBlock);
    const refetch = await writer.client.mutate('fetching.refetchByBlock', {
      organizationId: org,
      blockId: mbBlock,
    });
    t.same(refetch.data, { blockId: mbBlock, musicalDetails: 2 });
    const pending = await details(mbBlock);
    t.same(
      pending.map((m) => [m.state, m.providerId, m.result?.title, m.effective.title, m.stale]),
      [
        ['pending', MIDNIGHT, 'Midnight Drive', 'Midnight Drive', true],
        ['pending', MIDNIGHT, 'Midnight Drive', 'Midnight Drive', true],
      ],
      'pending: the earlier result shows, stale',
    );

    // the service answers with a body that is not JSON: not retryable, the re-fetch fails
    mb.malformedNext(2);
    const drained = await drain(musicbrainz);
    t.match(drained.settled, { found: 0, not_found: 0, failed: 2 });
    const failed = await details(mbBlock);
    t.same(
      failed.map((m) => [
        m.state,
        m.provider,
        m.providerId,
        m.result?.title,
        m.result?.releaseDate,
        m.effective.artist,
        m.stale,
      ]),
      [
        ['failed', 'musicbrainz', MIDNIGHT, 'Midnight Drive', '2019-05-01', 'Bright Harbour', true],
        [
          'failed',
          'musicbrainz',
          MIDNIGHT,
          'Midnight Drive',
          '2019-05-01',
          'Bright Harbour & Friends',
          true,
        ],
      ],
      'failed: the earlier result still shows, stale, with its provider and id',
    );
    t.ok(
      failed.every(
        (m) => typeof m.lastError === 'string' && m.lastError.startsWith('ProviderError'),
      ),
      'the failure is reported',
    );
    t.same(
      await tracks(mbBlock),
      productsBefore,
      'the products stand as they were: still one track on the recording',
    );
  },
);

t.test(
  'a re-fetch that fails with another provider keeps the earlier provider and id with the result',
  async (t) => {
    const [blue] = await details(offlineBlock);
    t.match(blue, { state: 'found', provider: 'offline', stale: false });
    const offlineId = blue!.providerId;
    const refetch = await owner.client.mutate('fetching.refetchByBlock', {
      organizationId: org,
      blockId: offlineBlock,
    });
    t.same(refetch.data, { blockId: offlineBlock, musicalDetails: 1 });
    mb.malformedNext(1);
    await drain(musicbrainz);
    const [after] = await details(offlineBlock);
    t.same(
      [after!.state, after!.provider, after!.providerId, after!.result?.title, after!.stale],
      ['failed', 'offline', offlineId, 'Blue Hearts', true],
    );
    const providers = await owner.client.query('musicalDetails.getDistinctTargetProviders', {
      organizationId: org,
      blockId: offlineBlock,
    });
    t.same(providers.data.providers, [
      { provider: 'offline', musicalDetails: 1, found: 0, notFound: 0, failed: 1 },
    ]);
  },
);

t.test('a successful re-fetch replaces the result: no longer stale, no error', async (t) => {
  const refetch = await writer.client.mutate('fetching.refetchByBlock', {
    organizationId: org,
    blockId: mbBlock,
  });
  t.same(refetch.data, { blockId: mbBlock, musicalDetails: 2 });
  await drain(musicbrainz);
  const mds = await details(mbBlock);
  t.same(
    mds.map((m) => [m.state, m.provider, m.providerId, m.lastError, m.stale]),
    [
      ['found', 'musicbrainz', MIDNIGHT, null, false],
      ['found', 'musicbrainz', MIDNIGHT, null, false],
    ],
  );
  t.same(
    (await tracks(mbBlock)).map((p) => p.slice(1)),
    [['Midnight Drive', 'Bright Harbour', '12.51', 2]],
  );
});

t.test('a re-fetch answered "not found" clears the result', async (t) => {
  // the MusicBrainz server does not know Orla Finn's recording: a definite answer, not a failure
  const refetch = await writer.client.mutate('fetching.refetchByBlock', {
    organizationId: org,
    blockId: offlineBlock,
  });
  t.same(refetch.data, { blockId: offlineBlock, musicalDetails: 1 });
  await drain(musicbrainz);
  const mds = await details(offlineBlock);
  t.same(
    mds.map((m) => [
      m.state,
      m.provider,
      m.providerId,
      m.result,
      m.lastError,
      m.effective.title,
      m.stale,
    ]),
    [['not_found', 'musicbrainz', null, null, null, 'Blue Hearts', false]],
  );
});
