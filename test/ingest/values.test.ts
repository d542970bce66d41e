// The readers of statement values: exact results for the formats real statements use.
import t from 'tap';
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
import {
  fromFileName,
  normalizeIsrc,
  normalizeIswc,
  normalizeUpc,
  parseCadence,
  parseCountry,
  parseCurrency,
  parseDate,
  parsePeriod,
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
  t.same(parsePeriod('2024Q1'), { year: 2024, period: 1, cadence: 'Q', start: '2024-01-01', end: '2024-03-31' });
  t.same(parsePeriod('2024-02'), { year: 2024, period: 2, cadence: 'M', start: '2024-02-01', end: '2024-02-29' });
  t.equal(parseCadence('quarterly'), 'Q');
});

t.test('dates: ISO, US and European orders, serials, date-times without time-zone shifts', async (t) => {
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
});

t.test('territories, currencies and identifiers', async (t) => {
  t.same(['US', 'UK', 'DEU', 'Germany', 'United Kingdom', '276', 'OU', 'WW', 'Narnia'].map(parseCountry), ['US', 'GB', 'DE', 'DE', 'GB', 'DE', null, null, null]);
  t.same(['usd', '€', 'Earnings (USD)', 'XYZ', 'Net Revenue in EUR', 'All Revenue (USD)'].map(parseCurrency), ['USD', 'EUR', 'USD', null, 'EUR', 'USD']);
  t.equal(normalizeIsrc('us-rc1-76-07839'), 'USRC17607839');
  t.equal(normalizeIsrc(' usx123000001 '), 'USX123000001');
  t.equal(normalizeIsrc('US-RC1-76'), null);
  t.equal(normalizeUpc('="0602537518357"'), '0602537518357');
  t.equal(normalizeUpc('"880000000001"'), null, 'a wrong check digit is not a UPC');
  t.equal(normalizeUpc('60253751835'), null);
  t.equal(normalizeUpc('1.91774E+11'), null, 'scientific notation lost digits: never guessed');
  t.equal(normalizeUpc('036000291452'), '036000291452');
  t.equal(normalizeUpc('36000291452'), '036000291452', 'a lost leading zero comes back when the check digit agrees');
  t.equal(normalizeIswc('T-034.524.680-1'), 'T0345246801');
  t.equal(normalizeIswc('T-034.524.680-2'), null);
  t.equal(fromFileName('YouTube_Label_M_20240301_asset_raw_v1-1.csv', 'period'), '2024M03');
  t.equal(fromFileName('statement_2024-05_abc.csv', 'period'), '2024M05');
  t.equal(fromFileName('Apple_EUR_0324.txt', 'currency'), 'EUR');
});

t.test('amounts in DuckDB: exact decimals from every real notation', async (t) => {
  const connection = await (await DuckDBInstance.create(':memory:')).connect();
  const macro = readFileSync(`${repoRoot}/workers/normalize.ts`, 'utf8').match(/const AMOUNT_MACRO = `([\s\S]*?)`;/)![1]!.replace(/\\\\/g, '\\');
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
    const r = await connection.runAndReadAll(`SELECT parse_amount($1, ${decimalComma})::VARCHAR`.replace('$1', `'${raw.replace(/'/g, "''")}'`));
    t.equal(r.getRows()[0]![0], want, `${raw} (${decimalComma ? 'decimal comma' : 'decimal point'})`);
  }
});
