// Dates and months as a CSV saved from Excel holds them (its d-mmm-yy and mmm-yy formats:
// `15-Mar-24`, `Mar-24`) and month abbreviations of French, German and Spanish exports
// (`janv. 2024`, `Okt 2024`, `dic 2024`), through the file reader and the normalizer.
import { DuckDBInstance } from '@duckdb/node-api';
import t from 'tap';
import { parseDate, parsePeriod } from '../../src/ingest/values.ts';
import { normalizeFile } from '../helpers/normalize.ts';

const month = (raw: string) => {
  const p = parsePeriod(raw);
  return p && `${p.year}${p.cadence}${p.period}`;
};

t.test("Excel's d-mmm-yy and mmm-yy, and abbreviated month names", async (t) => {
  t.equal(parseDate('15-Mar-24'), '2024-03-15');
  t.equal(parseDate('5-Sep-2023'), '2023-09-05');
  t.equal(parseDate('31-Feb-24'), null, 'no such day');
  t.equal(parseDate('15-Foo-24'), null);
  t.equal(month('Mar-24'), '2024M3');
  t.equal(month('Sept-23'), '2023M9');
  t.equal(month('Dec-99'), '1999M12');
  t.equal(month('Jan-24 - Mar-24'), '2024Q1', 'a range of them');
  t.equal(month('24-Mar'), null, 'a day and a month: no year');
  t.equal(month('Foo-24'), null);
  t.equal(month('janv. 2024'), '2024M1');
  t.equal(month('févr. 2024'), '2024M2');
  t.equal(month('Okt 2024'), '2024M10');
  t.equal(month('dic 2024'), '2024M12');
});

t.test('a statement saved from Excel: its months and days read, none missing', async (t) => {
  const fields = {
    stmtYear: { column: 'Sale Month' },
    stmtPeriod: { column: 'Sale Month' },
    stmtCadence: { constant: 'M' },
    currency: { constant: 'GBP' },
    royaltyEarnings: { column: 'Net' },
    salesPeriodStart: { column: 'Sale Date' },
    salesPeriodEnd: { column: 'Sale Date' },
    rawTitle: { column: 'Title' },
  };
  const csv =
    'Sale Month,Sale Date,Title,Net\nMar-24,15-Mar-24,Ember,1.25\nMar-24,2-Mar-24,Hollow,0.50\nApr-24,1-Apr-24,Stone,2.00\n';
  const { out, outPath } = await normalizeFile(t, csv, fields, { fileName: 'export.csv' });
  t.equal(out.keptRows, 3);
  t.equal(out.issues.missingStmtPeriod, 0);
  t.same(out.stmt, { year: 2024, period: 1, cadence: 'H' }, 'the half that holds March and April');
  t.equal(out.salesPeriodStart, '2024-03-02');
  t.equal(out.salesPeriodEnd, '2024-04-01');
  t.equal(out.net, '3.750000000000');
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = (
    await duck.runAndReadAll(
      `SELECT stmt_year, stmt_period, sales_period_start::VARCHAR FROM read_parquet('${outPath}') ORDER BY source_row`,
    )
  ).getRowsJson();
  duck.closeSync();
  t.same(rows, [
    [2024, 3, '2024-03-15'],
    [2024, 3, '2024-03-02'],
    [2024, 4, '2024-04-01'],
  ]);
});
