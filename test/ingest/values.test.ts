// The readers of statement values: exact results for the formats real statements use.
import t from 'tap';
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
import {
  COUNTRY_NAME_LOCALES,
  MULTI_TERRITORY,
  MULTI_TERRITORY_MARKERS,
  excelSerialToIso,
  fromFileName,
  normalizeIsrc,
  normalizeIswc,
  normalizeUpc,
  parseCadence,
  parseCountry,
  parseCurrency,
  parseDate,
  parsePeriod,
  periodOfRange,
} from '../../src/ingest/values.ts';
import { repoRoot } from '../setup/paths.ts';

t.test('periods in every real format', async (t) => {
  const cases: [string, string | null][] = [
    ['2024-03', '2024 M 3'],
    ['2024/03', '2024 M 3'],
    ['03/2024', '2024 M 3'],
    ['Mar 2024', '2024 M 3'],
    ['March 2024', '2024 M 3'],
    ['Octubre 2024', '2024 M 10'],
    ['2024M3', '2024 M 3'],
    ['2017M10', '2017 M 10'],
    ['202403', '2024 M 3'],
    ['Q1 2024', '2024 Q 1'],
    ['2024Q1', '2024 Q 1'],
    ['2Q2026', '2026 Q 2'],
    ['20241', '2024 Q 1'],
    ['2024 1st Quarter', '2024 Q 1'],
    ['H2 2024', '2024 H 2'],
    ['2024', '2024 Y 1'],
    ['2024-03-15', '2024 M 3'],
    ['10/15/2023 12:00:00 AM', '2023 M 10'],
    ['13/2024', null],
    ['2024Q5', null],
    ['hello', null],
  ];
  for (const [raw, want] of cases) {
    const p = parsePeriod(raw);
    t.equal(p ? `${p.year} ${p.cadence} ${p.period}` : null, want, raw);
  }
  t.same(parsePeriod('2024Q1'), {
    year: 2024,
    period: 1,
    cadence: 'Q',
    start: '2024-01-01',
    end: '2024-03-31',
  });
  t.same(parsePeriod('2024-02'), {
    year: 2024,
    period: 2,
    cadence: 'M',
    start: '2024-02-01',
    end: '2024-02-29',
  });
  t.equal(parseCadence('quarterly'), 'Q');
});

t.test(
  'dates: ISO, US and European orders, serials, date-times without time-zone shifts',
  async (t) => {
    t.equal(parseDate('2024-03-15'), '2024-03-15');
    t.equal(parseDate('03/04/2024', 'MDY'), '2024-03-04');
    t.equal(parseDate('03/04/2024', 'DMY'), '2024-04-03');
    t.equal(parseDate('31/01/2024', 'MDY'), '2024-01-31', 'a day above 12 decides');
    t.equal(parseDate('7/31/2023 12:00:00 AM', 'MDY'), '2023-07-31');
    t.equal(parseDate('2024-03-31T23:30:00Z'), '2024-03-31');
    t.equal(parseDate('20240315'), '2024-03-15');
    t.equal(parseDate('45352'), '2024-03-01', 'Excel serial');
    t.equal(parseDate('15 March 2024'), '2024-03-15');
    t.equal(parseDate('2024-02-30'), null);
  },
);

t.test('territories, currencies and identifiers', async (t) => {
  t.same(
    ['US', 'UK', 'DEU', 'Germany', 'United Kingdom', '276', 'OU', 'WW', 'Narnia'].map(parseCountry),
    ['US', 'GB', 'DE', 'DE', 'GB', 'DE', 'ZZ', 'ZZ', null],
  );
  t.same(
    ['usd', '€', 'Earnings (USD)', 'XYZ', 'Net Revenue in EUR', 'All Revenue (USD)'].map(
      parseCurrency,
    ),
    ['USD', 'EUR', 'USD', null, 'EUR', 'USD'],
  );
  t.equal(normalizeIsrc('us-rc1-76-07839'), 'USRC17607839');
  t.equal(normalizeIsrc(' usx123000001 '), 'USX123000001');
  t.equal(normalizeIsrc('US-RC1-76'), null);
  t.equal(normalizeUpc('="0602537518357"'), '0602537518357');
  t.equal(normalizeUpc('"880000000001"'), null, 'a wrong check digit is not a UPC');
  t.equal(normalizeUpc('60253751835'), null);
  t.equal(normalizeUpc('1.91774E+11'), null, 'scientific notation lost digits: never guessed');
  t.equal(normalizeUpc('036000291452'), '0036000291452', 'a UPC-A is its GTIN-13');
  t.equal(
    normalizeUpc('36000291452'),
    '0036000291452',
    'a lost leading zero comes back when the check digit agrees',
  );
  t.equal(normalizeIswc('T-034.524.680-1'), 'T0345246801');
  t.equal(normalizeIswc('T-034.524.680-2'), null);
  t.equal(fromFileName('YouTube_Label_M_20240301_asset_raw_v1-1.csv', 'period'), '2024M03');
  t.equal(fromFileName('statement_2024-05_abc.csv', 'period'), '2024M05');
  t.equal(fromFileName('Apple_EUR_0324.txt', 'currency'), 'EUR');
  // Apple's `{vendor}_{MMYY}_{region}`: the fiscal month of the report
  t.equal(fromFileName('80012345_0125_US.txt', 'period'), '2025M01');
  t.equal(fromFileName('45545510_0914_EU.txt', 'period'), '2014M09');
  t.equal(fromFileName('apple-80012345_0324_EU.txt.gz', 'period'), '2024M03');
  t.equal(fromFileName('80012345_1324_US.txt', 'period'), null, 'no month 13');
  t.equal(fromFileName('mix_0612.csv', 'period'), null, 'four digits alone are no period');
});

t.test(
  'period ranges: the period the span covers; start and end are its first and last day',
  async (t) => {
    const P = (year: number, period: number, cadence: string, start: string, end: string) => ({
      year,
      period,
      cadence,
      start,
      end,
    });
    const cases: [string, 'YMD' | 'MDY' | 'DMY', ReturnType<typeof P> | null][] = [
      // BMG yyyymmyyyymm
      ['202307202312', 'YMD', P(2023, 2, 'H', '2023-07-01', '2023-12-31')],
      ['201510201512', 'YMD', P(2015, 4, 'Q', '2015-10-01', '2015-12-31')],
      ['202403202403', 'YMD', P(2024, 3, 'M', '2024-03-01', '2024-03-31')],
      ['202301202312', 'YMD', P(2023, 1, 'Y', '2023-01-01', '2023-12-31')],
      ['202313202412', 'YMD', null],
      // yyyymmdd-yyyymmdd, with or without the dash
      ['20240301-20240331', 'YMD', P(2024, 3, 'M', '2024-03-01', '2024-03-31')],
      ['2024030120240331', 'YMD', P(2024, 3, 'M', '2024-03-01', '2024-03-31')],
      ['20240101 - 20240630', 'YMD', P(2024, 1, 'H', '2024-01-01', '2024-06-30')],
      // dates around a dash or a word, day order from the values or the column
      ['01/07/2023 - 31/12/2023', 'YMD', P(2023, 2, 'H', '2023-07-01', '2023-12-31')],
      ['01/07/2023 - 31/12/2023', 'DMY', P(2023, 2, 'H', '2023-07-01', '2023-12-31')],
      ['01/07/2023 - 30/09/2023', 'MDY', P(2023, 3, 'Q', '2023-07-01', '2023-09-30')],
      ['07/01/2023 - 12/31/2023', 'DMY', P(2023, 2, 'H', '2023-07-01', '2023-12-31')],
      ['01/03/2024 - 31/03/2024', 'DMY', P(2024, 3, 'M', '2024-03-01', '2024-03-31')],
      ['01/03/2024 - 01/04/2024', 'DMY', P(2024, 4, 'M', '2024-03-01', '2024-04-01')],
      ['01/03/2024 - 01/04/2024', 'MDY', P(2024, 1, 'M', '2024-01-03', '2024-01-04')],
      ['2024-01-01 - 2024-03-31', 'YMD', P(2024, 1, 'Q', '2024-01-01', '2024-03-31')],
      ['2024-01-01 – 2024-12-31', 'YMD', P(2024, 1, 'Y', '2024-01-01', '2024-12-31')],
      ['2024-03-01/2024-03-31', 'YMD', P(2024, 3, 'M', '2024-03-01', '2024-03-31')],
      ['2024-03-01 to 2024-03-31', 'YMD', P(2024, 3, 'M', '2024-03-01', '2024-03-31')],
      ['01.04.2024 bis 30.06.2024', 'DMY', P(2024, 2, 'Q', '2024-04-01', '2024-06-30')],
      ['Jul 2023 to Dec 2023', 'YMD', P(2023, 2, 'H', '2023-07-01', '2023-12-31')],
      ['Q1 2024 - Q2 2024', 'YMD', P(2024, 1, 'H', '2024-01-01', '2024-06-30')],
      ['2024-03 - 2024-05', 'YMD', P(2024, 2, 'Q', '2024-03-01', '2024-05-31')],
      // no calendar period: cadence from the length, the period of the last day, the range's own days
      ['03/03/2024–03/30/2024', 'MDY', P(2024, 3, 'M', '2024-03-03', '2024-03-30')],
      ['2024-02-25 - 2024-03-30', 'YMD', P(2024, 3, 'M', '2024-02-25', '2024-03-30')],
      ['2024-03-15 - 2024-03-15', 'YMD', P(2024, 3, 'M', '2024-03-15', '2024-03-15')],
      ['2023-12-31 - 2024-03-30', 'YMD', P(2024, 1, 'Q', '2023-12-31', '2024-03-30')],
      ['2024-01-01 - 2024-02-29', 'YMD', P(2024, 1, 'Q', '2024-01-01', '2024-02-29')],
      ['2024-02-01 - 2024-07-31', 'YMD', P(2024, 2, 'H', '2024-02-01', '2024-07-31')],
      ['2023-07-01 - 2024-06-30', 'YMD', P(2024, 1, 'Y', '2023-07-01', '2024-06-30')],
      ['2020-2021', 'YMD', P(2021, 1, 'Y', '2020-01-01', '2021-12-31')],
      // not ranges, or unreadable ones
      ['2024-03-31 - 2024-03-01', 'YMD', null],
      ['202312202307', 'YMD', null],
      ['2024-03-01 - someday', 'YMD', P(2024, 3, 'M', '2024-03-01', '2024-03-31')],
      ['2024-03-31T23:30:00-05:00', 'YMD', P(2024, 3, 'M', '2024-03-01', '2024-03-31')],
    ];
    for (const [raw, order, want] of cases)
      t.same(parsePeriod(raw, order), want, `${raw} (${order})`);
    // a range is no single date: the sales-period readers then take its first and last day
    for (const raw of [
      '01/07/2023 - 31/12/2023',
      '20240301-20240331',
      '2024-03-01/2024-03-31',
      '2024-03-31 - 2024-03-01',
      '2020-2021',
    ])
      t.equal(parseDate(raw, 'DMY'), null, `parseDate ${raw}`);
    t.equal(parseDate('2024-03-31T23:30:00-05:00'), '2024-03-31', 'a time-zone offset is no range');
    t.equal(
      parseDate('2024-03-01 - someday'),
      '2024-03-01',
      'text after a date that is no date stays a tail',
    );
    t.same(periodOfRange('2024-04-01', '2024-06-30'), P(2024, 2, 'Q', '2024-04-01', '2024-06-30'));
    t.equal(periodOfRange('2024-06-30', '2024-04-01'), null);
  },
);

t.test(
  'five-digit numbers in a period column: year + quarter when the year is plausible, else an Excel serial',
  async (t) => {
    const cases: [string, string | null][] = [
      ['20241', '2024 Q 1 2024-01-01 2024-03-31'],
      ['20244', '2024 Q 4 2024-10-01 2024-12-31'],
      ['19001', '1900 Q 1 1900-01-01 1900-03-31'],
      ['22004', '2200 Q 4 2200-10-01 2200-12-31'],
      ['45352', '2024 M 3 2024-03-01 2024-03-31'],
      ['45351', '2024 M 2 2024-02-01 2024-02-29'],
      ['45354', '2024 M 3 2024-03-01 2024-03-31'],
      ['45357', '2024 M 3 2024-03-01 2024-03-31'],
      ['18991', '1951 M 12 1951-12-01 1951-12-31'],
      ['22011', '1960 M 4 1960-04-01 1960-04-30'],
      ['20245', '1955 M 6 1955-06-01 1955-06-30'],
      ['45352.5', '2024 M 3 2024-03-01 2024-03-31'],
    ];
    for (const [raw, want] of cases) {
      const p = parsePeriod(raw);
      t.equal(p ? `${p.year} ${p.cadence} ${p.period} ${p.start} ${p.end}` : null, want, raw);
    }
  },
);

t.test(
  'Excel serials in a 1904 workbook: 1462 days after the same serial in the 1900 system',
  async (t) => {
    const d1904 = { dateSystem: 1904 } as const;
    t.equal(excelSerialToIso(43904), '2020-03-14', '1900 by default');
    t.equal(excelSerialToIso(43904, 1900), '2020-03-14');
    t.equal(excelSerialToIso(43904, 1904), '2024-03-15');
    t.equal(excelSerialToIso(43904.75, 1904), '2024-03-15', 'the time of day is dropped');
    t.equal(excelSerialToIso(0, 1904), '1904-01-01', 'serial 0 is the 1904 epoch');
    t.equal(excelSerialToIso(1462), '1904-01-01', 'the same day in the 1900 system');
    t.equal(excelSerialToIso(0), null, 'no serial 0 in the 1900 system');
    t.equal(excelSerialToIso(2_957_003, 1904), '9999-12-31');
    t.equal(excelSerialToIso(2_957_004, 1904), null, 'after 9999-12-31');
    t.equal(excelSerialToIso(-1, 1904), null);

    t.equal(parseDate('43904'), '2020-03-14', 'a text file: 1900');
    t.equal(parseDate('43904', 'YMD', { dateSystem: 1900 }), '2020-03-14');
    t.equal(parseDate('43904', 'YMD', d1904), '2024-03-15');
    t.equal(parseDate('43904.5', 'DMY', d1904), '2024-03-15');
    t.equal(parseDate(' "43904" ', 'MDY', d1904), '2024-03-15', 'quoted and padded');
    // only bare serials move: dates written as dates are the same in either system
    for (const raw of ['2024-03-15', '03/15/2024', '15/03/2024', '20240315', '15 March 2024']) {
      t.equal(parseDate(raw, raw.startsWith('15/') ? 'DMY' : 'MDY', d1904), '2024-03-15', raw);
    }
    t.equal(parseDate('43890 - 43920', 'YMD', d1904), null, 'a range of serials is no date');

    const period = (raw: string, options = {}) => {
      const p = parsePeriod(raw, 'YMD', options);
      return p ? `${p.year} ${p.cadence} ${p.period} ${p.start} ${p.end}` : null;
    };
    t.equal(period('43890'), '2020 M 2 2020-02-01 2020-02-29', '1900 by default');
    t.equal(
      period('43890', d1904),
      '2024 M 3 2024-03-01 2024-03-31',
      '43890 is 2024-03-01 in the 1904 system',
    );
    t.equal(period('43890.25', d1904), '2024 M 3 2024-03-01 2024-03-31');
    t.equal(
      period('20241', d1904),
      '2024 Q 1 2024-01-01 2024-03-31',
      'year + quarter is no serial in either system',
    );
    t.equal(
      period('2024-03', d1904),
      '2024 M 3 2024-03-01 2024-03-31',
      'a period as written is unchanged',
    );
    // a range of serials: both ends in the workbook's system
    t.equal(
      period('43890 - 43920', d1904),
      '2024 M 3 2024-03-01 2024-03-31',
      '2024-03-01 to 2024-03-31',
    );
    t.equal(
      period('43890 - 43980', d1904),
      '2024 Q 2 2024-03-01 2024-05-30',
      'a span of 91 days ending in May',
    );
    t.equal(
      period('43890 - 43920'),
      '2020 M 3 2020-02-29 2020-03-30',
      'the same range in the 1900 system: 2020-02-29 to 2020-03-30',
    );
  },
);

t.test(
  'territories: localised names, and one bucket for multi-territory and unknown markers',
  async (t) => {
    t.equal(MULTI_TERRITORY, 'ZZ');
    const cases: [string, string | null][] = [
      // codes and English names as before
      ['US', 'US'],
      ['us', 'US'],
      ['UK', 'GB'],
      ['EL', 'GR'],
      ['DEU', 'DE'],
      ['FRA', 'FR'],
      ['276', 'DE'],
      ['76', 'BR'],
      ['Germany', 'DE'],
      ['GERMANY', 'DE'],
      ['United Kingdom', 'GB'],
      ['United States of America', 'US'],
      ["Cote d'Ivoire", 'CI'],
      ['Côte d’Ivoire', 'CI'],
      ['Congo', 'CG'],
      ['QQ', null],
      ['QQQ', null],
      ['999', null],
      ['Narnia', null],
      ['', null],
      // localised
      ['Deutschland', 'DE'],
      ['DEUTSCHLAND', 'DE'],
      ['España', 'ES'],
      ['Espana', 'ES'],
      ['ESPAÑA', 'ES'],
      ['Allemagne', 'DE'],
      ['Россия', 'RU'],
      ['россия', 'RU'],
      ['Österreich', 'AT'],
      ['Oesterreich', null],
      ['Schweiz', 'CH'],
      ['Suisse', 'CH'],
      ['Svizzera', 'CH'],
      ['Italia', 'IT'],
      ['Brasil', 'BR'],
      ['Nederland', 'NL'],
      ['Sverige', 'SE'],
      ['Danmark', 'DK'],
      ['Norge', 'NO'],
      ['Suomi', 'FI'],
      ['Polska', 'PL'],
      ['Česká republika', 'CZ'],
      ['Magyarország', 'HU'],
      ['Türkiye', 'TR'],
      ['Ελλάδα', 'GR'],
      ['Україна', 'UA'],
      ['ドイツ', 'DE'],
      ['日本', 'JP'],
      ['德国', 'DE'],
      ['中国', 'CN'],
      ['대한민국', 'KR'],
      ['Royaume-Uni', 'GB'],
      ['Estados Unidos', 'US'],
      ['Vereinigte Staaten', 'US'],
      ['Kongo', 'CD'],
      ['UAE', 'AE'],
      // multi-territory and unknown markers
      ['OU', 'ZZ'],
      ['ou', 'ZZ'],
      ['WW', 'ZZ'],
      ['XX', 'ZZ'],
      ['ZZ', 'ZZ'],
      ['EU', 'ZZ'],
      ['ROW', 'ZZ'],
      ['World', 'ZZ'],
      ['WORLD', 'ZZ'],
      ['Worldwide', 'ZZ'],
      ['World-wide', 'ZZ'],
      ['Rest of World', 'ZZ'],
      ['Rest of the World', 'ZZ'],
      ['rest_of_world', 'ZZ'],
      ['Other', 'ZZ'],
      ['Others', 'ZZ'],
      ['Unknown', 'ZZ'],
      ['Global', 'ZZ'],
      ['Europe', 'ZZ'],
      ['Weltweit', 'ZZ'],
      ['Reste du monde', 'ZZ'],
      ['Resto del mundo', 'ZZ'],
      ['Monde', 'ZZ'],
    ];
    for (const [raw, want] of cases) t.equal(parseCountry(raw), want, raw);
    for (const marker of MULTI_TERRITORY_MARKERS)
      t.equal(parseCountry(marker), 'ZZ', `marker ${marker}`);
    t.same(
      [...COUNTRY_NAME_LOCALES],
      [
        'en',
        'de',
        'fr',
        'es',
        'it',
        'pt',
        'nl',
        'sv',
        'da',
        'nb',
        'fi',
        'pl',
        'cs',
        'hu',
        'ro',
        'tr',
        'el',
        'ru',
        'uk',
        'ja',
        'ko',
        'zh',
      ],
    );
  },
);

t.test('UPC wrappers are stripped before the check digit is validated', async (t) => {
  const cases: [string, string | null][] = [
    ['empty:036000291452', '0036000291452'],
    ['Empty:036000291452', '0036000291452'],
    ['EMPTY: 036000291452', '0036000291452'],
    ['empty:"036000291452"', '0036000291452'],
    ['empty:36000291452', '0036000291452'],
    ['empty:0602537518357', '0602537518357'],
    ['="0602537518357"', '0602537518357'],
    ['=0602537518357', '0602537518357'],
    ['"036000291452"', '0036000291452'],
    ["'036000291452", '0036000291452'],
    ["'036000291452'", '0036000291452'],
    ['“036000291452”', '0036000291452'],
    [' 036000291452 ', '0036000291452'],
    ['0-36000-29145-2', '0036000291452'],
    ['empty:', null],
    ['empty:036000291453', null],
    ['empty:1.91774E+11', null],
    ['notempty:036000291452', null],
    ['1.91774E+11', null],
    ['', null],
  ];
  for (const [raw, want] of cases) t.equal(normalizeUpc(raw), want, raw);
});

t.test('amounts in DuckDB: exact decimals from every real notation', async (t) => {
  const connection = await (await DuckDBInstance.create(':memory:')).connect();
  const macro = readFileSync(`${repoRoot}/workers/normalize/amountMacro.ts`, 'utf8')
    .match(/const AMOUNT_MACRO = `([\s\S]*?)`;/)![1]!
    .replace(/\\\\/g, '\\');
  await connection.run(macro);
  const cases: [string, boolean, string | null][] = [
    ['900', false, '900.000000000000'],
    ['0.007483664425', false, '0.007483664425'],
    ['1,234.56', false, '1234.560000000000'],
    ['(1.23)', false, '-1.230000000000'],
    ['1.23-', false, '-1.230000000000'],
    ['−1.23', false, '-1.230000000000'],
    ['$4523.45', false, '4523.450000000000'],
    ['€ 12,50', true, '12.500000000000'],
    ['12.50 EUR', false, '12.500000000000'],
    ['US$ 1.234,56', true, '1234.560000000000'],
    ['1 234,56', true, '1234.560000000000'],
    ["1'234.56", false, '1234.560000000000'],
    ['1.2E-05', false, '0.000012000000'],
    ['0,258066', true, '0.258066000000'],
    ['1.234', true, '1234.000000000000'],
    ['N/A', false, null],
    ['#VALUE!', false, null],
    ['-', false, null],
  ];
  for (const [raw, decimalComma, want] of cases) {
    const r = await connection.runAndReadAll(
      `SELECT parse_amount($1, ${decimalComma})::VARCHAR`.replace(
        '$1',
        `'${raw.replace(/'/g, "''")}'`,
      ),
    );
    t.equal(
      r.getRows()[0]![0],
      want,
      `${raw} (${decimalComma ? 'decimal comma' : 'decimal point'})`,
    );
  }
});

t.test(
  "cells that name Object.prototype's members are no month, currency or country",
  async (t) => {
    for (const word of ['constructor', 'toString', 'valueOf', '__proto__', 'hasOwnProperty']) {
      t.equal(parseCurrency(word), null, word);
      t.equal(parseCountry(word), null, word);
      t.equal(parsePeriod(`${word} 2024`), null, `${word} 2024`);
      t.equal(parseDate(`1 ${word} 2024`), null, `1 ${word} 2024`);
      t.equal(parseDate(`${word} 1, 2024`), null, `${word} 1, 2024`);
    }
  },
);

t.test(
  'more currency signs, and the names statements give the UK nations, the SARs and the Koreas',
  async (t) => {
    t.same(['₽', '₺', '₴', '₪', '₦', '₱', '฿', '₫', 'zł'].map(parseCurrency), [
      'RUB',
      'TRY',
      'UAH',
      'ILS',
      'NGN',
      'PHP',
      'THB',
      'VND',
      'PLN',
    ]);
    const cases: [string, string][] = [
      ['U.K.', 'GB'],
      ['England', 'GB'],
      ['SCOTLAND', 'GB'],
      ['Wales', 'GB'],
      ['Northern Ireland', 'GB'],
      ['Hong Kong SAR', 'HK'],
      ['Hong Kong SAR, China', 'HK'],
      ['Macao SAR', 'MO'],
      ['Korea, South', 'KR'],
      ['KOREA, NORTH', 'KP'],
      ['Macedonia', 'MK'],
      ['Vatican', 'VA'],
    ];
    for (const [raw, want] of cases) t.equal(parseCountry(raw), want, raw);
  },
);
