// What the library's mappings read, against the semantic traps of the statement notes
// (statement-edge-cases.md, section L): the amount owed to the account holder, in the account's
// currency; shares already applied not applied again; deductions already taken kept as
// information; the statement period where the format states it. Through the file reader and the
// normalizer, to the cent.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { matchColumns } from '../../src/ingest/mappingFields.ts';
import { loadMappingLibrary } from '../../src/ingest/library.ts';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { normalizeFile, parquetRows } from '../helpers/normalize.ts';
import { repoRoot } from '../setup/paths.ts';

const library = new Map((await loadMappingLibrary()).map((e) => [e.key, e]));
const entry = (key: string) => library.get(key)!;
const statements = path.join(repoRoot, 'fixtures', 'statements');

/** A delimited file of the library entry's headers, with the given cells (the rest empty). */
function file(headers: string[], rows: Record<string, string>[], delimiter = ','): string {
  for (const row of rows)
    for (const k of Object.keys(row)) if (!headers.includes(k)) throw new Error(`no column ${k}`);
  return `${[headers.join(delimiter), ...rows.map((r) => headers.map((h) => r[h] ?? '').join(delimiter))].join('\n')}\n`;
}

t.test(
  "Cargo: the statement is the run's quarter (Statement Run Name), not the quarter its sales ended in",
  async (t) => {
    const lines = readFileSync(path.join(statements, 'cargo-royalty_extended.csv'), 'utf8')
      .trimEnd()
      .split('\n');
    // sales of the third quarter reported late, in the run of the fourth
    const late = lines.map((l, i) =>
      i === 0 ? l : l.replace(',2023-10-01,2023-12-31,', ',2023-07-01,2023-09-30,'),
    );
    t.equal(late.filter((l) => l.includes(',2023-07-01,2023-09-30,')).length, 20);
    const { out, outPath } = await normalizeFile(
      t,
      `${late.join('\n')}\n`,
      entry('cargo-digital-runs').fields,
      { fileName: 'Harbour_Records-royalty_extended.csv' },
    );
    t.same(out.stmt, { year: 2023, period: 4, cadence: 'Q' }, 'the run 2023Q4 Digital');
    t.equal(out.issues.missingStmtPeriod, 0);
    t.same(
      [out.salesPeriodStart, out.salesPeriodEnd],
      ['2023-07-01', '2023-09-30'],
      'the sales keep their own dates',
    );
    t.equal(out.net, '223.014277475000');
    t.same(await parquetRows(outPath, 'DISTINCT stmt_year, stmt_period, stmt_cadence'), [
      [2023, 4, 'Q'],
    ]);
  },
);

t.test(
  'The MLC and SoundExchange: the fixtures (their published column names) hash like the library layouts and read to the cent',
  async (t) => {
    for (const [fixture, key, period] of [
      ['mlc-royalty-detail.csv', 'mlc', { year: 2024, period: 2, cadence: 'M' }],
      ['soundexchange-statement.csv', 'soundexchange', { year: 2024, period: 1, cadence: 'Q' }],
    ] as const) {
      const expected = JSON.parse(
        readFileSync(path.join(statements, `${fixture}.expected.json`), 'utf8'),
      );
      t.equal(
        computeHeaderHash(expected.header),
        entry(key).headerHash,
        `${fixture}: the library's header hash`,
      );
      const { out } = await normalizeFile(
        t,
        readFileSync(path.join(statements, fixture)),
        entry(key).fields,
        { fileName: fixture },
      );
      t.equal(out.keptRows, expected.dataRecords, `${fixture}: rows`);
      t.equal(
        canonicalDecimal(out.net!),
        canonicalDecimal(expected.netEarningsSum),
        `${fixture}: net to the last decimal`,
      );
      t.equal(
        canonicalDecimal(out.units!),
        canonicalDecimal(expected.unitsSum),
        `${fixture}: units`,
      );
      t.same(out.stmt, period, `${fixture}: statement period`);
    }
  },
);

t.test(
  'TuneCore: Total Earned in the account currency; the per-unit price (in the sale currency) is no rate of it',
  async (t) => {
    const tc = entry('tunecore');
    const rows = [
      {
        'Sales Period': '2024-01-01',
        'Posted Date': '2024-03-01',
        'Store Name': 'Spotify',
        'Country Of Sale': 'UK',
        '# Units Sold': '1000',
        'Per Unit Price': '0.004',
        'Net Sales': '4.00',
        'Net Sales Currency': 'USD',
        'Exchange Rate': '0.79',
        'Total Earned': '3.16',
        Currency: 'GBP',
      },
      {
        'Sales Period': '2024-01-01',
        'Posted Date': '2024-03-01',
        'Store Name': 'iTunes',
        'Country Of Sale': 'US',
        '# Units Sold': '2',
        'Per Unit Price': '0.70',
        'Net Sales': '1.40',
        'Net Sales Currency': 'USD',
        'Exchange Rate': '0.79',
        'Total Earned': '1.106',
        Currency: 'GBP',
      },
    ];
    const { out, outPath } = await normalizeFile(t, file(tc.headers, rows), tc.fields, {
      fileName: 'tunecore.csv',
    });
    t.same(
      out.perCurrency.map((c) => [c.currency, c.net, c.units]),
      [['GBP', '4.266000000000', '1002.000000000000']],
    );
    t.same(
      await parquetRows(
        outPath,
        'royalty_earnings, currency, royalty_rate, gross_royalty_earnings',
      ),
      [
        ['3.160000000000', 'GBP', null, null],
        ['1.106000000000', 'GBP', null, null],
      ],
    );
  },
);

t.test(
  'DistroKid and SoundCloud: earnings already split are taken as they are; the share is information',
  async (t) => {
    const dk = entry('distrokid-legacy');
    const rows = [
      {
        'Reporting Date': '2024-03-15',
        'Sale Month': '2024-01',
        Store: 'Spotify',
        Artist: 'Mara Velde',
        Title: 'Ember',
        Quantity: '1000',
        'Team Percentage': '30',
        'Song/Album': 'Song',
        'Country of Sale': 'US',
        'Songwriter Royalties Withheld': '0.0123',
        'Earnings (USD)': '0.9',
      },
      {
        'Reporting Date': '2024-03-15',
        'Sale Month': '2024-01',
        Store: 'Apple Music',
        Artist: 'Mara Velde',
        Title: 'Ember',
        Quantity: '500',
        'Team Percentage': '100',
        'Song/Album': 'Song',
        'Country of Sale': 'OU',
        'Songwriter Royalties Withheld': '0',
        'Earnings (USD)': '2.5',
      },
    ];
    const { out, outPath } = await normalizeFile(t, file(dk.headers, rows, '\t'), dk.fields, {
      fileName: 'distrokid.tsv',
    });
    t.equal(out.net, '3.400000000000', 'Earnings (USD) summed as written: 30% is already applied');
    t.same(await parquetRows(outPath, 'royalty_earnings, royalty_rate, other_adjustments'), [
      ['0.900000000000', '30.000000000000', '0.0123'],
      ['2.500000000000', '100.000000000000', '0'],
    ]);

    const sc = entry('soundcloud');
    const scRows = [
      {
        Track: 'Ember',
        'Artist(s)': 'Mara Velde',
        Partner: 'SoundCloud',
        Country: 'DE',
        Type: 'Stream',
        Units: '300',
        'Reporting Period': '2024-02-01',
        'Accounting Period': '2024-03-01',
        'Revenue (USD)': '0.75',
        'Revenue Share (%)': '55',
        'Split Pay Share (%)': '50',
      },
      {
        Track: 'Ember',
        'Artist(s)': 'Mara Velde',
        Partner: 'SoundCloud',
        Country: 'US',
        Type: 'Stream',
        Units: '100',
        'Reporting Period': '2024-02-01',
        'Accounting Period': '2024-03-01',
        'Revenue (USD)': '0.25',
        'Revenue Share (%)': '55',
        'Split Pay Share (%)': '100',
      },
    ];
    const scOut = await normalizeFile(t, file(sc.headers, scRows), sc.fields, {
      fileName: 'lifetime_statement.csv',
    });
    t.equal(
      scOut.out.net,
      '1.000000000000',
      'Revenue (USD) as written: the split pay share is not applied again',
    );
    t.notOk(
      Object.values(sc.fields).some((s) => s.column === 'Split Pay Share (%)'),
      'the split is read by no field',
    );
  },
);

t.test(
  'The Orchard and Believe: the net in the account currency; gross kept; the mechanical deduction is information, not subtracted',
  async (t) => {
    const o = entry('orchard');
    const rows = [
      {
        'STATEMENT PERIOD': 'March 2024',
        'SALE CURRENCY': 'EUR',
        'GROSS REVENUE SALE CURRENCY': '10.00',
        'ACCOUNT CURRENCY': 'USD',
        'CURRENCY CONVERSION RATE': '1.08',
        'GROSS REVENUE ACCOUNT CURRENCY': '10.80',
        'MECHANICAL DEDUCTION': '0.50',
        'NET SHARE ACCOUNT CURRENCY': '7.56',
        QUANTITY: '2000',
        STORE: 'Spotify',
        'SALE COUNTRY': 'DE',
        'SALE START DATE': '2024-02-01',
        'SALE END DATE': '2024-02-29',
      },
      {
        'STATEMENT PERIOD': 'March 2024',
        'SALE CURRENCY': 'GBP',
        'GROSS REVENUE SALE CURRENCY': '5.00',
        'ACCOUNT CURRENCY': 'USD',
        'CURRENCY CONVERSION RATE': '1.27',
        'GROSS REVENUE ACCOUNT CURRENCY': '6.35',
        'MECHANICAL DEDUCTION': '0',
        'NET SHARE ACCOUNT CURRENCY': '4.445',
        QUANTITY: '900',
        STORE: 'Apple Music',
        'SALE COUNTRY': 'GB',
        'SALE START DATE': '2024-02-01',
        'SALE END DATE': '2024-02-29',
      },
    ];
    const { out, outPath } = await normalizeFile(t, file(o.headers, rows), o.fields, {
      fileName: 'orchard.csv',
    });
    t.same(
      out.perCurrency.map((c) => [c.currency, c.net, c.gross]),
      [['USD', '12.005000000000', '17.150000000000']],
      'one currency: the account currency',
    );
    t.same(
      await parquetRows(
        outPath,
        'royalty_earnings, gross_royalty_earnings, currency, other_adjustments',
      ),
      [
        ['7.560000000000', '10.800000000000', 'USD', '0.50'],
        ['4.445000000000', '6.350000000000', 'USD', '0'],
      ],
    );

    const b = entry('believe');
    const bRows = [
      {
        'Reporting month': '2024/03/01',
        'Sales Month': '2024/01/01',
        Platform: 'Deezer',
        'Country / Region': 'France',
        Quantity: '1200',
        'Client Payment Currency': 'EUR',
        'Unit Price': '0,004',
        'Mechanical Fee': '0,36',
        'Gross Revenue': '4,80',
        'Client share rate': '85',
        'Net Revenue': '3,774',
      },
      {
        'Reporting month': '2024/03/01',
        'Sales Month': '2024/01/01',
        Platform: 'Spotify',
        'Country / Region': 'Belgium',
        Quantity: '300',
        'Client Payment Currency': 'EUR',
        'Unit Price': '0,003',
        'Mechanical Fee': '0',
        'Gross Revenue': '0,90',
        'Client share rate': '85',
        'Net Revenue': '0,765',
      },
    ];
    const bOut = await normalizeFile(t, file(b.headers, bRows, ';'), b.fields, {
      fileName: 'believe.csv',
    });
    t.same(
      bOut.out.perCurrency.map((c) => [c.currency, c.net, c.gross]),
      [['EUR', '4.539000000000', '5.700000000000']],
      'Net Revenue as written',
    );
    t.same(await parquetRows(bOut.outPath, 'royalty_earnings, royalty_rate, other_adjustments'), [
      ['3.774000000000', '85.000000000000', '0,36'],
      ['0.765000000000', '85.000000000000', '0'],
    ]);
  },
);

t.test(
  'Sonosuite: the net in the client currency, which the upload names; not the sale-currency net',
  async (t) => {
    const s = entry('sonosuite');
    const rows = [
      {
        start_date: '2024-01-01',
        end_date: '2024-01-31',
        confirmation_report_date: '2024-03-05',
        country: 'US',
        currency: 'USD',
        type: 't',
        units: '1500',
        unit_price: '0.004',
        gross_total: '6.00',
        channel_costs: '0',
        taxes: '0',
        net_total: '5.10',
        currency_rate: '0.92',
        gross_total_client_currency: '5.52',
        taxesnet_total_client_currency: '4.692',
        channel: 'Spotify',
        display_artist: 'Mara Velde',
        track: 'Ember',
        isrc: 'USRC12400001',
      },
      {
        start_date: '2024-01-01',
        end_date: '2024-01-31',
        confirmation_report_date: '2024-03-05',
        country: 'GB',
        currency: 'GBP',
        type: 't',
        units: '200',
        unit_price: '0.005',
        gross_total: '1.00',
        channel_costs: '0',
        taxes: '0',
        net_total: '0.85',
        currency_rate: '1.17',
        gross_total_client_currency: '1.17',
        taxesnet_total_client_currency: '0.9945',
        channel: 'Deezer',
        display_artist: 'Mara Velde',
        track: 'Ember',
        isrc: 'USRC12400001',
      },
    ];
    const { out, outPath } = await normalizeFile(t, file(s.headers, rows), s.fields, {
      fileName: 'sonosuite.csv',
      extra: { variables: { currency: 'EUR' } },
    });
    t.same(
      out.perCurrency.map((c) => [c.currency, c.net, c.gross, c.units]),
      [['EUR', '5.686500000000', '6.690000000000', '1700.000000000000']],
    );
    t.same(out.stmt, { year: 2024, period: 3, cadence: 'M' });
    t.same(await parquetRows(outPath, 'sales_period_start, sales_period_end, source, country'), [
      ['2024-01-01', '2024-01-31', 'Spotify', 'US'],
      ['2024-01-01', '2024-01-31', 'Deezer', 'GB'],
    ]);
    // the column under the name the help page's typo hides (`taxes_client_currency`, `net_total_client_currency`)
    const renamed = matchColumns(
      s.headers.map((h) =>
        h === 'taxesnet_total_client_currency' ? 'net_total_client_currency' : h,
      ),
      s,
    );
    t.same('match' in renamed && [renamed.match.fields.royaltyEarnings, renamed.match.renamed], [
      { column: 'net_total_client_currency' },
      { taxesnet_total_client_currency: 'net_total_client_currency' },
    ]);
  },
);
