// The offline provider over fixtures/catalog/recordings.json, asked about every track of every
// fixture statement as the ingestion reads them (fixtures/catalog/fixture-tracks.json, which
// test/analytics/fixtures.test.ts checks against the rows the real ingestion writes): each one the
// dataset holds is found with its title, artist and a release date before the statement's period;
// the deliberately absent ones are not found.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config.ts';
import { createProvider } from '../../src/catalog/enrich/index.ts';
import { foldText, titleKey } from '../../src/catalog/enrich/match.ts';
import { OfflineProvider } from '../../src/catalog/enrich/offline.ts';
import { normalizeIsrc } from '../../src/ingest/values.ts';
import { committedFixtureTracks, type FixtureTrack } from '../helpers/fixtureTracks.ts';
import { repoRoot } from '../setup/paths.ts';

const statementsDir = path.join(repoRoot, 'fixtures', 'statements');
const expectations = readdirSync(statementsDir)
  .filter((f) => f.endsWith('.expected.json'))
  .sort()
  .map(
    (f) =>
      JSON.parse(readFileSync(path.join(statementsDir, f), 'utf8')) as {
        file: string;
        period?: string;
      },
  );

/** First day of a statement period (`2024-03`, `2024Q1`). */
function periodStart(p: string | undefined): string {
  const m = /^(\d{4})(?:-(\d{2})|Q(\d))/.exec(p ?? '');
  if (!m) return '9999-12-31';
  const month = m[2] ? Number(m[2]) : (Number(m[3]) - 1) * 3 + 1;
  return `${m[1]}-${String(month).padStart(2, '0')}-01`;
}

/** Tracks of the fixture statements the dataset deliberately lacks (docs/catalog.md "Enrichment providers"). */
const ABSENT = [
  { title: 'Summer 12" Mix', artist: 'Orla Finn' }, // distrokid-legacy.tsv, USTCA2365135
  { title: 'Tøilette & Café', artist: 'DJ Kōsuke' }, // distrokid-nonascii.tsv, FRAT22285230
  { title: 'Café € Noir', artist: 'Chloé Martin' }, // orchard-legacy-cp1252.csv, three ISRCs
  { title: 'Love, Actually', artist: 'Orla Finn' }, // distrokid-legacy.tsv, no ISRC
];
const isAbsent = (tr: FixtureTrack): boolean =>
  ABSENT.some((a) => a.title === tr.title && a.artist === tr.artist);

const EXPECTED_NEON_RAIN = {
  provider: 'offline',
  providerId: '6b4468b1-1493-5209-bb27-8f6d1b583182',
  title: 'Neon Rain',
  artist: 'Orla Finn',
  isrc: 'GBQZ42466801',
  releaseTitle: 'Paper Boats, Vol. 2',
  releaseArtist: 'Orla Finn',
  releaseDate: '2024-01-24',
  genres: ['folk', 'singer-songwriter'],
  songWriters: ['Orla Finn'],
  composers: ['Orla Finn'],
  imageUrl: 'https://coverartarchive.org/release/9ce5569a-5794-5b91-90f5-9c0893723961/front-250',
  confidence: 1,
};
const EXPECTED_MIDNIGHT_DRIVE = {
  provider: 'offline',
  providerId: '19177827-69e5-5457-81ac-7b99b9316156',
  title: 'Midnight Drive',
  artist: 'Bright Harbour',
  isrc: 'USRC12250611',
  releaseTitle: 'Midnight Drive',
  releaseArtist: 'Bright Harbour',
  releaseDate: '2023-05-04',
  genres: ['indie pop'],
  songWriters: ['Orla Finn', 'Mara Velde'],
  composers: ['Orla Finn'],
  imageUrl: 'https://coverartarchive.org/release/856cd7f4-1e08-52ed-86c9-9770e9b21edd/front-250',
  confidence: 0.95,
};

const provider = new OfflineProvider();
const tracks = committedFixtureTracks();
const periods = new Map(expectations.map((e) => [e.file, periodStart(e.period)]));

t.test('the dataset loads once, checked: 866 recordings', async (t) => {
  t.same(await provider.load(), { recordings: 866 });
  const p = createProvider(loadConfig({}));
  t.equal(p.name, 'offline', 'the default provider');
});

t.test('every fixture track the dataset holds is found; the absent ones are not', async (t) => {
  t.equal(
    tracks.length,
    500,
    'distinct (file, title, artist, ISRC) rows in the fixture statements',
  );
  let byIsrc = 0;
  let byTitle = 0;
  let absent = 0;
  let titleOnly = 0;
  for (const tr of tracks) {
    const label = `${tr.file}: ${tr.title} / ${tr.artist} / ${tr.isrc}`;
    const hit = await provider.lookup({ isrc: tr.isrc, title: tr.title, artist: tr.artist });
    if (isAbsent(tr)) {
      absent++;
      if (hit !== null) t.fail(`${label}: deliberately absent, found ${hit.providerId}`);
      continue;
    }
    if (!tr.isrc && !tr.artist) {
      // a title alone (BMI's works) is ambiguous between the artists who recorded it
      titleOnly++;
      if (tr.title && hit !== null) t.fail(`${label}: a title alone should be ambiguous`);
      continue;
    }
    if (!hit) {
      t.fail(`${label}: not found`);
      continue;
    }
    if (tr.isrc) {
      byIsrc++;
      if (hit.isrc !== normalizeIsrc(tr.isrc) || hit.confidence !== 1)
        t.fail(`${label}: ISRC match expected, got ${hit.isrc} ${hit.confidence}`);
    } else {
      byTitle++;
      if (hit.confidence < 0.6) t.fail(`${label}: confidence ${hit.confidence}`);
    }
    if (titleKey(hit.title).base !== titleKey(tr.title).base)
      t.fail(`${label}: title ${hit.title}`);
    if (tr.artist && foldText(hit.artist) !== foldText(tr.artist))
      t.fail(`${label}: artist ${hit.artist}`);
    if (!hit.releaseDate || !/^\d{4}-\d{2}-\d{2}$/.test(hit.releaseDate))
      t.fail(`${label}: release date ${hit.releaseDate}`);
    if (tr.isrc && hit.releaseDate! >= periods.get(tr.file)!)
      t.fail(`${label}: released ${hit.releaseDate}, after the statement period`);
    if (
      hit.genres.length === 0 ||
      hit.songWriters.length === 0 ||
      !hit.imageUrl ||
      !hit.releaseTitle
    )
      t.fail(`${label}: incomplete ${JSON.stringify(hit)}`);
  }
  t.same(
    { byIsrc, byTitle, absent, titleOnly },
    { byIsrc: 446, byTitle: 37, absent: 6, titleOnly: 11 },
  );
});

t.test('exact answers', async (t) => {
  // tunecore.csv: Neon Rain by Orla Finn, GBQZ42466801
  t.same(
    await provider.lookup({ isrc: 'GBQZ42466801', title: 'Neon Rain', artist: 'Orla Finn' }),
    EXPECTED_NEON_RAIN,
  );
  // ascap-domestic.csv: "MIDNIGHT DRIVE" by Bright Harbour, no ISRC: the earliest of its recordings
  t.same(
    await provider.lookup({ isrc: null, title: 'MIDNIGHT DRIVE', artist: 'Bright Harbour' }),
    EXPECTED_MIDNIGHT_DRIVE,
  );
});

t.test('ISRC written any way', async (t) => {
  for (const isrc of [
    'GBQZ42466801',
    'gbqz42466801',
    'GB-QZ4-24-66801',
    'GB QZ4 24 66801',
    ' gb-qz4-24-66801 ',
  ]) {
    const hit = await provider.lookup({ isrc, title: null, artist: null });
    t.equal(hit?.providerId, EXPECTED_NEON_RAIN.providerId, isrc);
    t.equal(hit?.isrc, 'GBQZ42466801');
    t.equal(hit?.confidence, 1);
  }
  // an unknown ISRC falls back on title and artist, below ISRC certainty
  const fallback = await provider.lookup({
    isrc: 'ZZ-ZZZ-99-99999',
    title: 'Neon Rain',
    artist: 'Orla Finn',
  });
  t.equal(fallback?.title, 'Neon Rain');
  t.equal(fallback?.artist, 'Orla Finn');
  t.equal(fallback?.confidence, 0.95);
  // not an ISRC at all: ignored
  t.equal(await provider.lookup({ isrc: 'not-an-isrc', title: null, artist: null }), null);
  // an ISRC whose title disagrees entirely is still that recording, a little less certain
  const odd = await provider.lookup({
    isrc: 'GBQZ42466801',
    title: 'Completely Different Song',
    artist: null,
  });
  t.equal(odd?.providerId, EXPECTED_NEON_RAIN.providerId);
  t.equal(odd?.confidence, 0.9);
});

t.test('title variants find the original recording', async (t) => {
  const original = await provider.lookup({ isrc: null, title: 'Neon Rain', artist: 'Lúa Castro' });
  t.ok(original);
  for (const [title, artist, confidence] of [
    ['NEON RAIN', 'LÚA CASTRO', 0.95],
    ['neon rain', 'Lua Castro', 0.95],
    ['Neon Rain (vinyl)', 'Lúa Castro', 0.85],
    ['Neon Rain - 2019 Remaster', 'Lúa Castro', 0.85],
    ['Neon Rain (feat. Orla Finn)', 'Lúa Castro', 0.95],
    ['Neon Rain - 2019 Remaster', 'Lúa Castro feat. Mara Velde', 0.765],
  ] as const) {
    const hit = await provider.lookup({ isrc: null, title, artist });
    t.equal(hit?.providerId, original!.providerId, `${title} / ${artist}`);
    t.equal(hit?.confidence, confidence, `${title} / ${artist} confidence`);
  }
  // a radio edit is its own recording (its own ISRC), as the clustering keeps it apart: not the original
  t.equal(
    await provider.lookup({
      isrc: null,
      title: 'Neon Rain [Radio Edit]',
      artist: 'Lúa Castro feat. Mara Velde',
    }),
    null,
  );
  t.same(
    await provider
      .lookup({ isrc: null, title: 'Salt and Stone', artist: 'Sami and the Tides' })
      .then((h) => [h?.title, h?.artist]),
    ['Salt & Stone', 'Sami & The Tides'],
  );
  // a version asked for by name is that version
  const live = await provider.search({
    isrc: null,
    title: 'Midnight Drive (Live)',
    artist: 'Bright Harbour',
    limit: 3,
  });
  t.ok(live.length > 0);
});

t.test('a similar title of another song is a search candidate, never a lookup match', async (t) => {
  // the dataset holds "Blue Canyon" by Marco Deluca: its words in another order share the bigrams
  // (dice 0.88) but are another song for the clustering (similarity 0.765 < 0.88)
  t.equal(
    await provider.lookup({ isrc: null, title: 'Canyon Blues', artist: 'Marco Deluca' }),
    null,
  );
  const found = await provider.search({
    isrc: null,
    title: 'Canyon Blues',
    artist: 'Marco Deluca',
    limit: 1,
  });
  t.same(
    found.map((f) => [f.title, f.confidence]),
    [['Blue Canyon', 0.5]],
  );
  // the same words in another order may be the recording: "Silver Streets" by Orla Finn (9369af5b…)
  const reordered = await provider.lookup({
    isrc: null,
    title: 'Streets of Silver',
    artist: 'Orla Finn',
  });
  t.same(
    [reordered?.providerId, reordered?.title],
    ['9369af5b-e74f-57d0-ae45-6b2bd6a98e3c', 'Silver Streets'],
  );
  // a one-letter typo of the title is still the recording
  const typo = await provider.lookup({ isrc: null, title: 'Blue Canyn', artist: 'Marco Deluca' });
  t.same([typo?.providerId, typo?.confidence], ['c393b90e-64d7-562e-a53e-e363ea498434', 0.609]);
});

t.test('same title, other artist: never a lookup match, still a search candidate', async (t) => {
  t.equal(
    await provider.lookup({ isrc: null, title: 'Café € Noir', artist: 'Chloé Martin' }),
    null,
  );
  const found = await provider.search({ isrc: null, title: 'Café € Noir', artist: 'Chloé Martin' });
  t.ok(found.length >= 4);
  t.ok(found.some((f) => f.artist === 'Zoë Brandt'));
  t.notOk(found.some((f) => f.artist === 'Chloé Martin'));
  t.ok(found.every((f) => f.confidence === 0.3 && f.title === 'Café € Noir'));
});

t.test('search ranks candidates, best first, within the limit', async (t) => {
  const all = await provider.search({
    isrc: null,
    title: 'Midnight Drive',
    artist: 'Bright Harbour',
    limit: 100,
  });
  t.ok(all.length > 10);
  for (let i = 1; i < all.length; i++) {
    const [a, b] = [all[i - 1]!, all[i]!];
    t.ok(
      a.confidence > b.confidence ||
        (a.confidence === b.confidence && (a.releaseDate ?? '') <= (b.releaseDate ?? '')),
      `ranked at ${i}`,
    );
  }
  t.equal(all[0]!.providerId, EXPECTED_MIDNIGHT_DRIVE.providerId);
  t.ok(
    all
      .filter((c) => c.confidence === 0.95)
      .every((c) => c.artist === 'Bright Harbour' && c.title === 'Midnight Drive'),
  );
  t.ok(
    all.some((c) => c.artist !== 'Bright Harbour'),
    'other artists compete',
  );
  t.equal(
    (
      await provider.search({
        isrc: null,
        title: 'Midnight Drive',
        artist: 'Bright Harbour',
        limit: 3,
      })
    ).length,
    3,
  );
  t.equal(
    (await provider.search({ isrc: null, title: 'Midnight Drive', artist: null })).length,
    10,
    'default limit',
  );
  t.equal(
    (await provider.search({ isrc: null, title: 'Midnight Drive', artist: null, limit: 100_000 }))
      .length <= 100,
    true,
    'at most 100',
  );
  const byIsrc = await provider.search({
    isrc: 'USRC12250611',
    title: 'Midnight Drive',
    artist: 'Bright Harbour',
    limit: 5,
  });
  t.equal(byIsrc[0]!.isrc, 'USRC12250611');
  t.equal(byIsrc[0]!.confidence, 1);
});

t.test('hostile and empty queries: an answer, never an error', async (t) => {
  t.equal(await provider.lookup({ isrc: null, title: null, artist: null }), null);
  t.same(await provider.search({ isrc: null, title: '', artist: '' }), []);
  t.equal(
    await provider.lookup({
      isrc: "'; DROP TABLE recordings; --",
      title: "x' OR '1'='1",
      artist: 'OR 1=1',
    }),
    null,
  );
  t.equal(
    await provider.lookup({ isrc: null, title: 'x'.repeat(100_000), artist: 'y'.repeat(100_000) }),
    null,
  );
  t.equal(await provider.lookup({ isrc: null, title: '!!!', artist: '???' }), null);
  const ac = new AbortController();
  ac.abort(new Error('stop'));
  await t.rejects(
    provider.lookup({ isrc: 'GBQZ42466801', title: null, artist: null }, { signal: ac.signal }),
    /stop/,
  );
});
