// Values of real statements, through the unit reader and through the file reader and normalizer
// (with the library mapping where one reads them): BMI's year + quarter as a sales period (no
// Excel serial), a quarter from a file name, negatives in parentheses with a currency outside
// them, and ISO 3166's own English country names.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { readAmount } from '../../src/ingest/amounts.ts';
import { fieldSpecSchema } from '../../src/ingest/mappingFields.ts';
import { libraryDir } from '../../src/ingest/library.ts';
import { fromFileName, parseCountry, parseDate } from '../../src/ingest/values.ts';
import { normalizeFile, parquetRows } from '../helpers/normalize.ts';
import { fields, HEADER } from '../helpers/sampleMapping.ts';

const library = (key: string) =>
  JSON.parse(readFileSync(path.join(libraryDir, `${key}.json`), 'utf8')) as {
    headers: string[];
    fields: Record<string, unknown>;
  };

t.test(
  "BMI's PERF PERIOD (`20233`: year + quarter) is that quarter as a sales period, not a 1955 Excel serial",
  async (t) => {
    t.equal(parseDate('20241'), null, 'a year and a quarter is no day');
    t.equal(parseDate('20233'), null);
    t.equal(parseDate('45352'), '2024-03-01', 'other five-digit numbers stay Excel serials');
    t.equal(parseDate('45352', 'YMD', { dateSystem: 1904 }), '2028-03-02');

    const bmi = library('bmi');
    const cells = (period: string, perfPeriod: string, amount: string): string =>
      bmi.headers
        .map(
          (h) =>
            ({
              PERIOD: period,
              'PERF PERIOD': perfPeriod,
              'ROYALTY AMOUNT': amount,
              'TITLE NAME': 'EMBER',
              'COUNTRY OF PERFORMANCE': 'UNITED STATES',
              'PERF COUNT': '12',
            })[h] ?? '',
        )
        .join(',');
    const csv = `${[bmi.headers.join(','), cells('20241', '20233', '12.50'), cells('20241', '20234', '1.25')].join('\n')}\n`;
    const { out, outPath } = await normalizeFile(t, csv, bmi.fields, {
      fileName: 'bmi-statement.csv',
    });
    t.same(out.stmt, { year: 2024, period: 1, cadence: 'Q' });
    t.equal(out.salesPeriodStart, '2023-07-01');
    t.equal(out.salesPeriodEnd, '2023-12-31');
    t.equal(out.net, '13.750000000000');
    t.same(
      await parquetRows(outPath, `sales_period_start::VARCHAR, sales_period_end::VARCHAR, country`),
      [
        ['2023-07-01', '2023-09-30', 'US'],
        ['2023-10-01', '2023-12-31', 'US'],
      ],
    );
  },
);

t.test(
  'a quarter in the file name gives the statement period (PRS: period from the file name)',
  async (t) => {
    t.equal(fromFileName('prs_2024Q1.csv', 'period'), '2024Q1');
    t.equal(fromFileName('Q32023_prs.csv', 'period'), '2023Q3');
    t.equal(fromFileName('statement_2024-05_abc.csv', 'period'), '2024M05', 'months as before');

    const prs = library('prs');
    const csv =
      'Record Number,CAE Number,Work Title,Amount (performance revenue),IP1\n1,00012345678,EMBER,12.50,FINN ORLA\n2,00012345678,SLOW RIVER,0.75,FINN ORLA\n';
    const quarter = await normalizeFile(t, csv, prs.fields, { fileName: 'prs_2024Q1.csv' });
    t.same(quarter.out.stmt, { year: 2024, period: 1, cadence: 'Q' });
    t.equal(quarter.out.issues.missingStmtPeriod, 0);
    t.equal(quarter.out.net, '13.250000000000');
    t.same(await parquetRows(quarter.outPath, 'stmt_year, stmt_period, stmt_cadence, currency'), [
      [2024, 1, 'Q', 'GBP'],
      [2024, 1, 'Q', 'GBP'],
    ]);
    const month = await normalizeFile(t, csv, prs.fields, { fileName: 'prs_2024-03.csv' });
    t.same(month.out.stmt, { year: 2024, period: 3, cadence: 'M' });
  },
);

/** A mapping of March 2024 in US dollars with the amount in column `Amount`, plus `extra`. */
const marchInDollars = (extra: Record<string, { column: string }>) => ({
  stmtYear: { constant: '2024' },
  stmtPeriod: { constant: '3' },
  stmtCadence: { constant: 'M' },
  currency: { constant: 'USD' },
  royaltyEarnings: { column: 'Amount' },
  ...extra,
});

t.test('negatives in parentheses with a currency symbol or code outside them', async (t) => {
  const cases: [string, boolean, string][] = [
    ['$ (1,234.56)', false, '-1234.560000000000'],
    ['$(3.00)', false, '-3.000000000000'],
    ['(12.50) EUR', false, '-12.500000000000'],
    ['€ (12,50)', true, '-12.500000000000'],
    ['USD (0.75)', false, '-0.750000000000'],
    ['($4.00)', false, '-4.000000000000'],
    ['12.50 (USD)', false, '12.500000000000'],
    ['(USD) 12.50', false, '12.500000000000'],
  ];
  for (const [raw, decimalComma, want] of cases) t.equal(readAmount(raw, decimalComma), want, raw);

  const fields = marchInDollars({ rawTitle: { column: 'Title' } });
  const csv =
    'Title\tAmount\nA\t$ 1,300.00\nB\t$ (1,234.56)\nC\t(12.50) USD\nD\t$(3.00)\nE\t12.50 (USD)\n';
  const { out, outPath } = await normalizeFile(t, csv, fields);
  t.same(await parquetRows(outPath, 'raw_title, royalty_earnings::VARCHAR'), [
    ['A', '1300.000000000000'],
    ['B', '-1234.560000000000'],
    ['C', '-12.500000000000'],
    ['D', '-3.000000000000'],
    ['E', '12.500000000000'],
  ]);
  t.equal(out.net, '62.440000000000');
  t.equal(out.issues.invalidAmounts, 0);
});

t.test("territories by ISO 3166's own English short names, in both of its forms", async (t) => {
  const cases: [string, string][] = [
    ['Viet Nam', 'VN'],
    ['Iran, Islamic Republic of', 'IR'],
    ['Iran (Islamic Republic of)', 'IR'],
    ['Bolivia, Plurinational State of', 'BO'],
    ['Bolivia (Plurinational State of)', 'BO'],
    ['Venezuela, Bolivarian Republic of', 'VE'],
    ['Tanzania, United Republic of', 'TZ'],
    ['Tanzania, the United Republic of', 'TZ'],
    ['Congo, The Democratic Republic of the', 'CD'],
    ['Congo (the Democratic Republic of the)', 'CD'],
    ['Congo (the)', 'CG'],
    ['Congo', 'CG'],
    ["Korea, Democratic People's Republic of", 'KP'],
    ['Korea (the Republic of)', 'KR'],
    ['Palestine, State of', 'PS'],
    ['Macedonia, the Former Yugoslav Republic of', 'MK'],
    ['United Kingdom of Great Britain and Northern Ireland (the)', 'GB'],
    ['Netherlands (Kingdom of the)', 'NL'],
    ['Trinidad & Tobago', 'TT'],
    ['St Kitts and Nevis', 'KN'],
    ['VIET NAM', 'VN'],
    ['Niger', 'NE'],
    ['Nigeria', 'NG'],
    ['Narnia', ''],
  ];
  for (const [raw, want] of cases) t.equal(parseCountry(raw), want || null, raw);

  const fields = marchInDollars({ country: { column: 'Territory' } });
  const csv =
    'Territory\tAmount\nViet Nam\t1.00\n"Iran, Islamic Republic of"\t2.00\n"Congo, The Democratic Republic of the"\t3.00\nNarnia\t4.00\n';
  const { out, outPath } = await normalizeFile(t, csv, fields);
  t.same(await parquetRows(outPath, 'country_raw, country'), [
    ['Viet Nam', 'VN'],
    ['Iran, Islamic Republic of', 'IR'],
    ['Congo, The Democratic Republic of the', 'CD'],
    ['Narnia', null],
  ]);
  t.same(out.issues.unknownCountries, ['Narnia']);
});

t.test(
  "YouTube's statement month from its report's file name, else from the days (a renamed file)",
  async (t) => {
    const youtube = library('youtube-asset-raw');
    const cells = (day: string, revenue: string): string =>
      youtube.headers
        .map(
          (h) =>
            ({
              'Adjustment Type': 'Adjustment',
              Day: day,
              Country: 'US',
              'Asset Title': 'Ember',
              'Partner Revenue': revenue,
            })[h] ?? '',
        )
        .join(',');
    // an adjustment report of March 2024 whose rows are days of January and February
    const csv = `${[youtube.headers.join(','), cells('20240115', '1.25'), cells('20240203', '-0.50')].join('\n')}\n`;
    const adjustment = await normalizeFile(t, csv, youtube.fields, {
      fileName: 'YouTube_HarbourRecords_M_20240301_ADJ_asset_raw_v1-1.csv',
    });
    t.same(adjustment.out.stmt, { year: 2024, period: 3, cadence: 'M' });
    t.equal(adjustment.out.stmtPeriods, 1);
    t.equal(adjustment.out.net, '0.750000000000');
    t.same(
      await parquetRows(adjustment.outPath, 'stmt_year, stmt_period, sales_period_start::VARCHAR'),
      [
        [2024, 3, '2024-01-15'],
        [2024, 3, '2024-02-03'],
      ],
    );
    const renamed = await normalizeFile(t, csv, youtube.fields, {
      fileName: 'harbour youtube adjustments.csv',
    });
    t.same(await parquetRows(renamed.outPath, 'stmt_year, stmt_period'), [
      [2024, 1],
      [2024, 2],
    ]);
    t.equal(renamed.out.issues.missingStmtPeriod, 0);

    // fromFileName is the one source that may name a column besides
    t.ok(fieldSpecSchema.safeParse({ fromFileName: 'period', column: 'Day' }).success);
    for (const spec of [
      { column: 'Day', constant: '2024' },
      { fromFileName: 'period', constant: '2024' },
      { column: 'Day', columns: ['Day'] },
    ]) {
      t.notOk(fieldSpecSchema.safeParse(spec).success, JSON.stringify(spec));
    }
  },
);

t.test(
  'one product is one UPC: a UPC-A, its EAN-13, its GTIN-14 and the UPC that lost its zero are the same GTIN-13',
  async (t) => {
    const mapping = { ...fields, upc: { column: 'UPC' } };
    // 036000291452 (UPC-A) is the product of EAN-13 0036000291452; 0602537518357 is an EAN-13 whose UPC-A is 602537518357
    const upcs = [
      '036000291452',
      '0036000291452',
      '00036000291452',
      '36000291452',
      '="036000291452"',
      '602537518357',
      '0602537518357',
      '96385074',
      '10036000291459',
      '036000291453',
      '1.91774E+11',
    ];
    const csv = `${[[...HEADER, 'UPC'].join(','), ...upcs.map((u, i) => `2024-03,Track ${i + 1},EUR,1,1.00,"${u.replace(/"/g, '""')}"`)].join('\n')}\n`;
    const { out, outPath } = await normalizeFile(t, csv, mapping, { fileName: 'upcs.csv' });
    t.equal(out.keptRows, upcs.length);
    t.equal(out.issues.invalidUpc, 2, 'a wrong check digit and scientific notation');
    t.same(await parquetRows(outPath, 'upc_raw, upc'), [
      ['036000291452', '0036000291452'],
      ['0036000291452', '0036000291452'],
      ['00036000291452', '0036000291452'],
      ['36000291452', '0036000291452'],
      ['="036000291452"', '0036000291452'],
      ['602537518357', '0602537518357'],
      ['0602537518357', '0602537518357'],
      ['96385074', '96385074'],
      ['10036000291459', '10036000291459'],
      ['036000291453', null],
      ['1.91774E+11', null],
    ]);
  },
);
