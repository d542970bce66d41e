// suggestMapping: for every format of the shared library, on its real headers (with and without a
// few sample rows), the suggestion proposes the money column, currency, period and units the
// library mapping uses; plus the traps the statement-format notes name.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import {
  headerKey,
  mappingFieldsSchema,
  referencedColumns,
  type FieldSpec,
  type MappingFields,
} from '../../src/ingest/mappingFields.ts';
import { libraryDir } from '../../src/ingest/library.ts';
import { suggestMapping } from '../../src/ingest/suggest.ts';

interface Entry {
  key: string;
  distributor: string;
  headers: string[];
  fields: MappingFields;
}

const library: Entry[] = readdirSync(libraryDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(path.join(libraryDir, f), 'utf8')) as Entry);

/** How each format writes its statement period (from the format notes), for the sample rows. */
const periodValues: Record<string, string[]> = {
  'distrokid-legacy': ['2024-03-15', '2024-03-16'],
  distrokid: ['2024-03-15', '2024-03-16'],
  tunecore: ['2020-06-01', '2020-06-01'],
  cdbaby: ['10/15/2023 12:00:00 AM', '10/15/2023 12:00:00 AM'],
  believe: ['2024/03/01', '2024/03/01'],
  'orchard-legacy': ['2017M10', '2017M10'],
  orchard: ['January 2026', 'January 2026'],
  awal: ['January 2026', 'January 2026'],
  apple: ['09/27/2014', '09/27/2014'],
  'youtube-asset-raw': ['20240301', '20240302'],
  soundcloud: ['2024-03-01T00:00:00', '2024-03-01T00:00:00'],
  bandcamp: ['11/25/22 5:45pm', '11/26/22 1:05am'],
  beatport: ['2024-03-04', '2024-03-09'],
  revelator: ['2024-03', '2024-03'],
  'cargo-digital': ['31/12/2023', '31/12/2023'],
  'cargo-digital-runs': ['2023Q4 Digital', '2023Q4 Digital'],
  'ascap-a': ['2024', '2024'],
  'ascap-b': ['01-31-2026', '01-31-2026'],
  bmi: ['20241', '20241'],
  'bmi-artists': ['20241', '20241'],
  soundexchange: ['2024Q1', '2024Q1'],
  sonosuite: ['2024-03-05', '2024-03-07'],
  mlc: ['2024-03-20', '2024-03-20'],
  songtrust: ['2024-01-01', '2024-01-01'],
};

function valueFor(entry: Entry, column: string, row: number): string {
  const reads = (s: FieldSpec) => (s.column !== undefined ? [s.column] : (s.columns ?? []));
  const uses = (Object.entries(entry.fields) as [string, FieldSpec][])
    .filter(([, s]) => reads(s).some((c) => headerKey(c) === headerKey(column)))
    .map(([f]) => f);
  if (uses.includes('stmtYear') && uses.includes('stmtPeriod'))
    return periodValues[entry.key]![row % 2]!;
  if (uses.includes('stmtYear')) return '2024';
  if (uses.includes('stmtPeriod')) return String(1 + (row % 4));
  if (uses.includes('currency')) return ['USD', 'EUR'][row % 2]!;
  if (uses.some((f) => ['royaltyEarnings', 'grossRoyaltyEarnings', 'otherAdjustments'].includes(f)))
    return ['0.00789993', '12.50', '-1.25'][row % 3]!;
  if (uses.includes('units')) return ['1', '250', '-1'][row % 3]!;
  if (uses.includes('royaltyRate') || uses.includes('taxDeduction'))
    return ['100', '0.7'][row % 2]!;
  if (uses.includes('isrc')) return ['USRC12400001', 'GBAAA2400003'][row % 2]!;
  if (uses.includes('upc')) return '0886443927087';
  if (uses.includes('country')) return ['US', 'DE', 'GB'][row % 3]!;
  if (uses.some((f) => f === 'salesPeriodStart' || f === 'salesPeriodEnd')) return '2024-02-01';
  return ['Spotify', 'Summer Nights', 'Some Text'][row % 3]!;
}

function samples(entry: Entry): string[][] {
  return [0, 1, 2, 3].map((row) => entry.headers.map((h) => valueFor(entry, h, row)));
}

/** Where a field comes from, without its format: what "the same proposal" means. */
function source(spec: FieldSpec | undefined): unknown {
  if (!spec) return null;
  if (spec.column !== undefined) return { column: headerKey(spec.column) };
  const { format: _format, ...rest } = spec;
  return rest;
}

const checked = [
  'royaltyEarnings',
  'currency',
  'stmtYear',
  'stmtPeriod',
  'stmtCadence',
  'units',
] as const;

for (const withSamples of [false, true]) {
  t.test(
    `every library format, ${withSamples ? 'with sample rows' : 'headers only'}`,
    async (t) => {
      const agree: Record<string, number> = Object.fromEntries(checked.map((f) => [f, 0]));
      let allFields = 0;
      let allAgree = 0;
      for (const entry of library) {
        const s = suggestMapping(
          entry.headers,
          withSamples ? samples(entry) : [],
          `${entry.key}_statement.csv`,
        );
        t.ok(
          mappingFieldsSchema.safeParse(s.fields).success,
          `${entry.key}: the suggestion is a valid mapping`,
        );
        const known = new Set(entry.headers.map(headerKey));
        t.same(
          referencedColumns(s.fields).filter((c) => !known.has(headerKey(c))),
          [],
          `${entry.key}: it reads only header columns`,
        );
        t.same(
          source(s.fields.royaltyEarnings),
          source(entry.fields.royaltyEarnings),
          `${entry.key}: royaltyEarnings (${s.reasons.royaltyEarnings})`,
        );
        t.same(
          source(s.fields.currency),
          source(entry.fields.currency),
          `${entry.key}: currency (${s.reasons.currency})`,
        );
        for (const f of checked)
          if (JSON.stringify(source(s.fields[f])) === JSON.stringify(source(entry.fields[f])))
            agree[f]!++;
        for (const f of Object.keys(entry.fields) as (keyof MappingFields)[]) {
          allFields++;
          if (JSON.stringify(source(s.fields[f])) === JSON.stringify(source(entry.fields[f])))
            allAgree++;
        }
        t.equal(
          s.distributor,
          entry.distributor,
          `${entry.key}: recognised as ${entry.distributor}`,
        );
        for (const f of Object.keys(s.fields) as (keyof MappingFields)[]) {
          t.ok(
            s.confidence[f]! >= 0 && s.confidence[f]! <= 1 && typeof s.reasons[f] === 'string',
            `${entry.key}.${f} has a confidence and a reason`,
          );
        }
      }
      const n = library.length;
      const rates = checked.map((f) => `${f} ${agree[f]}/${n}`).join(', ');
      t.comment(
        `agreement with the library (${withSamples ? 'with samples' : 'headers only'}): ${rates}; all fields ${allAgree}/${allFields} (${((100 * allAgree) / allFields).toFixed(1)}%)`,
      );
      t.equal(agree.royaltyEarnings, n, 'royaltyEarnings on every format');
      t.equal(agree.currency, n, 'currency on every format');
      t.equal(agree.stmtYear, n, 'the statement period on every format');
      t.equal(agree.stmtPeriod, n);
      t.equal(agree.units, n, 'units on every format');
      if (withSamples)
        t.equal(agree.stmtCadence, n, 'the cadence on every format, once values are seen');
      t.ok(allAgree / allFields >= 0.9, 'at least 90% of all library fields');
    },
  );
}

t.test("whole words beat substrings: The Orchard's TRACK ARTIST is not the title", async (t) => {
  const s = suggestMapping(
    [
      'STATEMENT PERIOD',
      'SALE COUNTRY',
      'STORE',
      'PRODUCT ARTIST',
      'PRODUCT',
      'TRACK ARTIST',
      'TRACK',
      'TRACK VERSION',
      'TRANSACTION TYPE',
      'TRANSACTION SUBTYPE',
      'QUANTITY',
      'NET SHARE ACCOUNT CURRENCY',
    ],
    [],
    'orchard.csv',
  );
  t.same(s.fields.rawTitle, { column: 'TRACK' });
  t.same(s.fields.rawArtist, { column: 'TRACK ARTIST' });
  t.same(s.fields.rawReleaseArtist, { column: 'PRODUCT ARTIST' });
  t.same(s.fields.rawReleaseTitle, { column: 'PRODUCT' });
  t.same(s.fields.royaltyEarnings, { column: 'NET SHARE ACCOUNT CURRENCY' });
});

t.test('the net amount in the payout currency: TuneCore Total Earned, not Net Sales', async (t) => {
  const tunecore = library.find((e) => e.key === 'tunecore')!;
  const s = suggestMapping(tunecore.headers, [], 'x.csv');
  t.same(s.fields.royaltyEarnings, { column: 'Total Earned' });
  t.same(s.fields.currency, { column: 'Currency' });
  // without Total Earned, Net Sales is what there is, with its own currency column
  const reduced = tunecore.headers.filter((h) => h !== 'Total Earned' && h !== 'Currency');
  const r = suggestMapping(reduced, [], 'x.csv');
  t.same(r.fields.royaltyEarnings, { column: 'Net Sales' });
  t.same(r.fields.currency, { column: 'Net Sales Currency' });
  // gross beside net: net wins, gross goes to grossRoyaltyEarnings
  const g = suggestMapping(['Month', 'Gross Revenue', 'Net Revenue', 'Currency'], [], 'x.csv');
  t.same(
    [g.fields.royaltyEarnings, g.fields.grossRoyaltyEarnings],
    [{ column: 'Net Revenue' }, { column: 'Gross Revenue' }],
  );
});

t.test(
  'currency from the money header, from values, from the file name, else a variable',
  async (t) => {
    t.same(suggestMapping(['Date', 'Earnings (USD)'], [], 'a.csv').fields.currency, {
      constant: 'USD',
    });
    t.same(suggestMapping(['Date', 'Net Revenue in EUR'], [], 'a.csv').fields.currency, {
      constant: 'EUR',
    });
    t.same(suggestMapping(['Date', '$ Amount'], [], 'a.csv').fields.currency, { constant: 'USD' });
    const payout = suggestMapping(['Month', 'Payout (EUR)'], [], 'a.csv');
    t.same(
      [payout.fields.royaltyEarnings, payout.fields.currency],
      [{ column: 'Payout (EUR)' }, { constant: 'EUR' }],
    );
    t.same(
      suggestMapping(
        ['Date', 'Amount', 'Code'],
        [
          ['2024-01-01', '1.00', 'SEK'],
          ['2024-01-02', '2.00', 'NOK'],
        ],
        'a.csv',
      ).fields.currency,
      { column: 'Code' },
    );
    t.same(suggestMapping(['Date', 'Amount'], [['2024-01-01', '£1.00']], 'a.csv').fields.currency, {
      constant: 'GBP',
    });
    t.same(suggestMapping(['Date', 'Amount'], [], 'royalties_2024-03_CHF.csv').fields.currency, {
      fromFileName: 'currency',
    });
    const none = suggestMapping(['Date', 'Amount'], [], 'royalties.csv');
    t.same(none.fields.currency, { variable: 'currency' });
    t.ok(none.confidence.currency! < 0.5);
  },
);

t.test('sampled values: ISRCs, countries and periods under headers that say nothing', async (t) => {
  const s = suggestMapping(
    ['Col A', 'Col B', 'Col C', 'Period', 'Revenue'],
    [
      ['USRC12400001', 'DE', 'x', '2024Q1', '1.5'],
      ['GBAAA2400003', 'FR', 'y', '2024Q1', '2.5'],
      ['FRXYZ2400002', 'US', 'z', '2024Q1', '0.5'],
    ],
    'a.csv',
  );
  t.same(s.fields.isrc, { column: 'Col A' });
  t.same(s.fields.country, { column: 'Col B' });
  t.same([s.fields.stmtYear, s.fields.stmtCadence], [{ column: 'Period' }, { constant: 'Q' }]);
  t.match(s.reasons.isrc, /3\/3 sampled values are ISRCs/);
  // values veto a name: a "Date" column of text is no period
  const veto = suggestMapping(
    ['Date', 'Report Month', 'Amount'],
    [
      ['n/a', '2024-03', '1'],
      ['none', '2024-04', '2'],
    ],
    'a.csv',
  );
  t.same(veto.fields.stmtYear, { column: 'Report Month' });
});

t.test(
  'a year column with a quarter column (ASCAP) and quarterly families with dates',
  async (t) => {
    const s = suggestMapping(
      ['DistributionYear', 'Distribution Quarter', 'Work Title', 'Dollars'],
      [['2024', '2', 'Song', '1.00']],
      'a.csv',
    );
    t.same(
      [s.fields.stmtYear, s.fields.stmtPeriod, s.fields.stmtCadence],
      [{ column: 'DistributionYear' }, { column: 'Distribution Quarter' }, { constant: 'Q' }],
    );
    const b = library.find((e) => e.key === 'ascap-b')!;
    const q = suggestMapping(b.headers, samples(b), 'ascap.csv');
    t.same(
      [q.fields.stmtYear, q.fields.stmtCadence],
      [{ column: 'Distribution Date', format: 'quarter' }, { constant: 'Q' }],
      'as the library reads it',
    );
  },
);

t.test('variants of a known layout still map: reordered, extra and renamed columns', async (t) => {
  const dk = library.find((e) => e.key === 'distrokid')!;
  const shuffled = [...dk.headers].reverse().concat(['Some New Column']);
  const s = suggestMapping(shuffled, [], 'dk.tsv');
  t.same(
    [s.fields.royaltyEarnings, s.fields.currency, s.fields.stmtYear, s.fields.units],
    [
      { column: 'Earnings (USD)' },
      { constant: 'USD' },
      { column: 'Reporting Date' },
      { column: 'Quantity' },
    ],
  );
  const believe = [
    'Reporting Month',
    'Sales Month',
    'Platform',
    'Country/Region',
    'Artist Name',
    'Track title',
    'UPC/EAN',
    'ISRC',
    'Release Type',
    'Sales Type',
    'Quantity',
    'Currency',
    'Gross Revenue',
    'Net Revenue',
  ];
  const b = suggestMapping(believe, [], 'believe.csv');
  t.same(
    [b.fields.royaltyEarnings, b.fields.currency, b.fields.country, b.fields.upc],
    [
      { column: 'Net Revenue' },
      { column: 'Currency' },
      { column: 'Country/Region' },
      { column: 'UPC/EAN' },
    ],
  );
});

t.test('hostile headers and rows are harmless', async (t) => {
  const headers = [
    '__proto__',
    'constructor',
    'toString',
    "'; DROP TABLE x; --",
    '',
    'x'.repeat(5_000),
    'Amount',
    'Amount',
    'Period',
  ];
  const rows = [
    ['a', 'b', 'c', 'd', 'e', 'f', '1', '2', '2024-01'],
    null as unknown as string[],
    [1, 2] as unknown as string[],
    [],
  ];
  const s = suggestMapping(headers, rows, '../../etc/passwd');
  t.ok(mappingFieldsSchema.safeParse(s.fields).success);
  t.equal(Object.getPrototypeOf(s.fields), Object.prototype);
  t.same(s.fields.royaltyEarnings, { column: 'Amount' });
  t.notOk(
    referencedColumns(s.fields).some((c) => c.length > 300),
    'over-long cells are never named',
  );
  const many = Array.from({ length: 20_000 }, (_, i) => `Column ${i}`);
  const started = Date.now();
  t.ok(mappingFieldsSchema.safeParse(suggestMapping(many, [], 'a.csv').fields).success);
  t.ok(
    Date.now() - started < 60_000,
    'a very wide header is bounded (a quadratic blow-up would take minutes)',
  );
  t.same(suggestMapping([], [], '').fields.currency, { variable: 'currency' });
});
