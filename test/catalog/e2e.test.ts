// The catalog end to end: fixture statements ingested through the real API, the block refreshed,
// every musical detail enriched by the offline provider (the default), clusters and products
// derived, and product-level analytics through cube.query against exact values; then a user
// correction shows in the next query.
import path from 'node:path';
import t from 'tap';
import { createRightsholder, putFile, uploadFixture, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { waitForEnrichment } from '../api/clustering/helpers.ts';
import { waitForBlock } from './helpers.ts';

t.setTimeout(300_000);

const HEADER = [
  'Reporting Date',
  'Sale Month',
  'Store',
  'Artist',
  'Title',
  'ISRC',
  'UPC',
  'Quantity',
  'Team Percentage',
  'Song/Album',
  'Country of Sale',
  'Songwriter Royalties Withheld',
  'Earnings (USD)',
];
/** A DistroKid statement of the 2023M09 period: rows of [artist, title, isrc, earnings]. */
function september(rows: [string, string, string, string][]): Buffer {
  const lines = [
    HEADER.join('\t'),
    ...rows.map(([a, ti, i, e]) =>
      ['2023-09-11', '2023-08', 'Spotify', a, ti, i, '', '10', '100', 'Song', 'US', '0', e].join(
        '\t',
      ),
    ),
  ];
  return Buffer.from(`${lines.join('\n')}\n`);
}

const srv = await startTestServer(t, { role: 'serve' });
const owner = await newOrganization(srv, 'E2E Org');
const org = owner.organizationId;
const db = srv.deps.pool;
const rh = await createRightsholder(owner.client, org, 'Distro Label');
const march = await uploadFixture(
  owner.client,
  org,
  rh,
  path.resolve('fixtures/statements/distrokid-legacy.tsv'),
);
const sept = await putFile(
  owner.client,
  org,
  rh,
  'dk-2023-09.tsv',
  september([
    ['Orla Finn', 'Glasshouse', 'USRC12236601', '10.00'],
    ['Orla Finn', 'Blue Hearts', 'ESA1B1100343', '5.00'],
    ['Nobody Known', 'Qwerty Zebra Anthem', 'QZZ1A2400001', '2.50'],
  ]),
);
const statuses = [
  (await waitForStatement(owner.client, org, march.statementId)).status,
  (await waitForStatement(owner.client, org, sept.statementId)).status,
];
const block = await waitForBlock(db, rh, 2);
await waitForEnrichment(db, block);

const m = (name: string) => `analytics_full_view.${name}`;
const byRh = { member: m('rightsholder_id'), operator: 'equals', values: [rh] };
async function cube(query: Record<string, unknown>): Promise<Record<string, string | null>[]> {
  const res = await owner.client.mutate('cube.query', {
    organizationId: org,
    query: { ...query, filters: [byRh, ...((query.filters as unknown[]) ?? [])] },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return (res.data.data as Record<string, string | null>[]).map((r) =>
    Object.fromEntries(
      Object.entries(r).map(([k, v]) => [k.replace('analytics_full_view.', ''), v]),
    ),
  );
}

const LTM = { member: m('tm'), operator: 'equals', values: ['01.LTM'] };
const valuation = [
  m('fetching_percentage'),
  m('royalty_earnings_usd'),
  m('product_dollar_age'),
  m('product_dollar_age_percentage'),
  m('product_age_avg'),
  m('product_age_percentage'),
];
const productDims = [
  m('product_title'),
  m('product_artist'),
  m('product_release_date'),
  m('release_title'),
];
const productRows = async (title: string) =>
  (
    await cube({
      dimensions: productDims,
      measures: [m('royalty_earnings_usd')],
      filters: [{ member: m('product_title'), operator: 'equals', values: [title] }],
      order: { [m('product_artist')]: 'asc' },
    })
  ).map((r) => [
    r.product_title,
    r.product_artist,
    r.product_release_date,
    r.release_title,
    r.royalty_earnings_usd,
  ]);

t.test('the catalog of the block: every musical detail resolved, products derived', async (t) => {
  t.same(statuses, ['processed', 'processed']);
  const { rows } = await db.query<{ state: string; n: number }>(
    'SELECT state, count(*)::int AS n FROM musical_details WHERE block_id = $1 GROUP BY state ORDER BY state',
    [block],
  );
  t.same(rows, [
    { state: 'found', n: 29 },
    { state: 'not_found', n: 3 },
  ]);
  const { rows: products } = await db.query<{ kind: string; n: number }>(
    'SELECT kind, count(*)::int AS n FROM products WHERE block_id = $1 GROUP BY kind ORDER BY kind',
    [block],
  );
  t.same(products, [
    // one per release title and release artist: the 27 tracks that name a release name 27 different ones
    { kind: 'album', n: 27 },
    { kind: 'track', n: 30 },
  ]);
  const fresh = await owner.client.query('dataFreshness.checkProducts', {
    organizationId: org,
    rightsholderIds: [rh],
  });
  t.same(fresh.data, {
    catalogAvailable: true,
    rightsholders: [
      {
        rightsholderId: rh,
        rightsholderName: 'Distro Label',
        tracks: 32,
        tracksWithIsrc: 26,
        rowsWithoutTrack: 0,
        products: 30,
        enrichedTracks: 29,
        enrichedPercentage: '90.63',
      },
    ],
  });
});

t.test('product-level analytics', async (t) => {
  t.same(await cube({ measures: valuation }), [
    {
      fetching_percentage: '100',
      royalty_earnings_usd: '688.9859880327',
      // (10 × 1.9740 + 5 × 13.1691) / 15: Glasshouse (2022-04-10) and Blue Hearts (2011-01-29) to 2024-03-31
      product_dollar_age: '5.7057',
      product_dollar_age_percentage: '85.7143',
      product_age_avg: '1.4867',
      product_age_percentage: '90',
    },
  ]);
  t.same(
    await cube({
      dimensions: [m('product_age_bucket')],
      measures: [m('royalty_earnings_usd')],
      filters: [LTM],
      order: { [m('product_age_bucket')]: 'asc' },
    }),
    [
      { product_age_bucket: '1', royalty_earnings_usd: '10' },
      { product_age_bucket: '8+', royalty_earnings_usd: '5' },
      { product_age_bucket: null, royalty_earnings_usd: '2.5' },
    ],
  );
  t.same(
    await productRows('Glasshouse'),
    [
      ['Glasshouse', 'Lúa Castro', '2023-03-18T00:00:00.000', 'Glasshouse', '-1.5074225275'],
      ['Glasshouse', 'Mara Velde', '2024-01-29T00:00:00.000', 'Glasshouse', '36.5517365607'],
      ['Glasshouse', 'Northern Lights', '2022-09-17T00:00:00.000', 'Hollow', '1.7179377189'],
      ['Glasshouse', 'Orla Finn', '2022-04-10T00:00:00.000', 'Glasshouse', '15.3745836426'],
    ],
    "one title by four artists is four products; Orla Finn's is in both statements",
  );
  t.same(
    await productRows('Midnight Drive'),
    [
      [
        'Midnight Drive',
        'Bright Harbour',
        '2023-05-04T00:00:00.000',
        'Midnight Drive',
        '19.6082643995',
      ],
      ['Midnight Drive', 'DJ Kōsuke', '2023-01-12T00:00:00.000', 'Midnight Drive', '53.9359278326'],
      [
        'Midnight Drive',
        'Lúa Castro',
        '2023-05-27T00:00:00.000',
        'Midnight Drive',
        '30.4949674737',
      ],
      ['Midnight Drive', 'Mara Velde', '2022-11-23T00:00:00.000', 'Midnight Drive', '3.1331931777'],
      [
        'Midnight Drive',
        'The Quiet Hours',
        '2023-05-08T00:00:00.000',
        'Paper Boats',
        '28.9470199532',
      ],
    ],
    "DJ Kōsuke's two recordings are one product with the earliest release date",
  );
  t.same(
    await cube({
      dimensions: [m('product_age_bucket')],
      measures: [m('royalty_earnings_usd')],
      filters: [{ member: m('product_artist'), operator: 'equals', values: ['Orla Finn'] }],
      order: { [m('product_age_bucket')]: 'asc' },
    }),
    [
      { product_age_bucket: '0', royalty_earnings_usd: '85.3785532325' },
      { product_age_bucket: '1', royalty_earnings_usd: '15.3745836426' },
      { product_age_bucket: '8+', royalty_earnings_usd: '5' },
      { product_age_bucket: null, royalty_earnings_usd: '51.7420981712' },
    ],
    'Paper Boats and Salt & Stone (2023) are 0; Love, Actually and Summer 12" Mix have no release date',
  );
});

t.test('a correction shows in the next query', async (t) => {
  const { rows } = await db.query<{ id: string }>(
    `SELECT p.id FROM products p WHERE p.block_id = $1 AND p.kind = 'track' AND p.title = 'Glasshouse' AND p.artist = 'Orla Finn'`,
    [block],
  );
  const res = await owner.client.mutate('product.updateById', {
    organizationId: org,
    productId: rows[0]!.id,
    title: 'Glasshouse (Deluxe)',
    releaseDate: '2015-06-01',
  });
  t.ok(res.ok, 'product.updateById');
  t.same(await productRows('Glasshouse (Deluxe)'), [
    ['Glasshouse (Deluxe)', 'Orla Finn', '2015-06-01T00:00:00.000', 'Glasshouse', '15.3745836426'],
  ]);
  t.same(
    await cube({
      dimensions: [m('product_age_bucket')],
      measures: [m('royalty_earnings_usd'), m('product_dollar_age')],
      filters: [LTM],
      order: { [m('product_age_bucket')]: 'asc' },
    }),
    [
      { product_age_bucket: '8+', royalty_earnings_usd: '15', product_dollar_age: '10.2779' },
      { product_age_bucket: null, royalty_earnings_usd: '2.5', product_dollar_age: null },
    ],
    '(10 × 8.8323 + 5 × 13.1691) / 15',
  );

  // a correction of the musical detail: its track title, and the product derived from it
  const { rows: summer } = await db.query<{ id: string }>(
    `SELECT id FROM musical_details WHERE block_id = $1 AND identity_key = 'isrc:USTCA2365135'`,
    [block],
  );
  const fix = await owner.client.mutate('musicalDetails.updateResults', {
    organizationId: org,
    resultIds: [summer[0]!.id],
    overrideValues: { title: 'Summer (12" Mix)', artist: 'Orla Finn', releaseDate: '2020-07' },
  });
  t.ok(fix.ok, 'musicalDetails.updateResults');
  t.same(
    await cube({
      dimensions: [
        m('track_title_raw'),
        m('track_title'),
        m('product_title'),
        m('product_version'),
        m('release_date'),
        m('product_age_bucket'),
      ],
      measures: [m('royalty_earnings_usd')],
      filters: [{ member: m('isrc'), operator: 'equals', values: ['USTCA2365135'] }],
    }),
    // the corrected title names a mix: the song is Summer, the recording a remix of it
    [
      {
        track_title_raw: 'Summer 12" Mix',
        track_title: 'Summer (12" Mix)',
        product_title: 'Summer',
        product_version: 'remix',
        release_date: '2020-07-01T00:00:00.000',
        product_age_bucket: '3',
        royalty_earnings_usd: '27.4147237801',
      },
    ],
  );
});
