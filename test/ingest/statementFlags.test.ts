// The flags a statement gets from its file and its normalization, from real files through the
// file reader and the normalizer: several currencies (never added up), a negative total per
// currency, and rows without an amount.
import ExcelJS from 'exceljs';
import t from 'tap';
import { statementFlags } from '../../src/ingest/pipeline.ts';
import { normalizeFile } from '../helpers/normalize.ts';

const fields = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { column: 'Currency' },
  royaltyEarnings: { column: 'Net' },
  rawTitle: { column: 'Title' },
};

const HEADER = ['Period', 'Title', 'Currency', 'Net'];

async function flagsOf(
  t: { teardown(fn: () => unknown): void },
  rows: string[][],
  sheets?: Record<string, string[][]>,
) {
  let content: Buffer;
  if (sheets) {
    // a workbook: each sheet's rows with their header
    const wb = new ExcelJS.Workbook();
    for (const [name, sheetRows] of Object.entries(sheets))
      wb.addWorksheet(name).addRows(sheetRows);
    content = Buffer.from(await wb.xlsx.writeBuffer());
  } else {
    content = Buffer.from(`${[HEADER, ...rows].map((r) => r.join(',')).join('\n')}\n`);
  }
  const { located, out } = await normalizeFile(t, content, fields, {
    fileName: sheets ? 'statement.xlsx' : 'statement.csv',
  });
  const flags = statementFlags(located, out, fields).map(({ kind, severity, message }) => ({
    kind,
    severity,
    message,
  }));
  return { out, flags };
}

t.test(
  'several currencies: totals per currency, a negative one named, never a sum across them',
  async (t) => {
    const { out, flags } = await flagsOf(t, [
      ['2024-03', 'A', 'USD', '10.00'],
      ['2024-03', 'B', 'EUR', '-4.50'],
      ['2024-03', 'C', 'EUR', '1.25'],
      ['2024-03', 'D', 'GBP', '0.10'],
    ]);
    t.equal(out.net, null);
    t.same(
      out.perCurrency.map((c) => [c.currency, c.rows, c.net]),
      [
        ['EUR', 2, '-3.250000000000'],
        ['GBP', 1, '0.100000000000'],
        ['USD', 1, '10.000000000000'],
      ],
    );
    t.same(flags, [
      {
        kind: 'several_currencies',
        severity: 'info',
        message:
          "The rows are in 3 currencies (EUR, GBP, USD): the statement's totals are per currency.",
      },
      {
        kind: 'negative_total',
        severity: 'warning',
        message: "The statement's net total is negative in EUR (-3.250000000000).",
      },
    ]);
  },
);

t.test('one currency: one net, and a negative one flagged as before', async (t) => {
  const { out, flags } = await flagsOf(t, [
    ['2024-03', 'A', 'USD', '1.00'],
    ['2024-03', 'B', 'USD', '-3.00'],
  ]);
  t.equal(out.net, '-2.000000000000');
  t.same(flags, [
    {
      kind: 'negative_total',
      severity: 'warning',
      message: "The statement's net total is negative (-2.000000000000).",
    },
  ]);
});

t.test('rows without an amount: some is information, all of them is an error', async (t) => {
  const some = await flagsOf(t, [
    ['2024-03', 'A', 'USD', '1.00'],
    ['2024-03', 'B', 'USD', 'N/A'],
    ['2024-03', 'C', 'USD', ''],
  ]);
  t.same(some.flags, [
    { kind: 'missing_amounts', severity: 'info', message: '2 rows have no amount.' },
  ]);
  const none = await flagsOf(t, [
    ['2024-03', 'A', 'USD', ''],
    ['2024-03', 'B', 'USD', '-'],
  ]);
  t.equal(none.out.net, null);
  t.same(none.flags, [
    {
      kind: 'missing_amounts',
      severity: 'error',
      message:
        'No row has an amount: the money column is empty (a workbook saved without the values of its formulas, or the wrong column).',
    },
  ]);
});

t.test(
  'a workbook with a table per month and another table: the months are one table, the other is named in a warning',
  async (t) => {
    const month = (m: string, n: number) => [
      HEADER,
      ...Array.from({ length: n }, (_, i) => [`2024-${m}`, `T${i}`, 'USD', '1.50']),
    ];
    const stores = [
      ['Store', 'Streams'],
      ...Array.from({ length: 20 }, (_, i) => [`S${i}`, String(i)]),
    ];
    const { out, flags } = await flagsOf(t, [], {
      'Jan 2024': month('01', 3),
      Stores: stores,
      'Feb 2024': month('02', 4),
      'Mar 2024': month('03', 5),
    });
    t.equal(out.keptRows, 12);
    t.equal(out.net, '18.000000000000');
    t.same(flags, [
      {
        kind: 'several_statement_periods',
        severity: 'info',
        message: 'The rows span 3 statement periods.',
      },
      {
        kind: 'sheets_combined',
        severity: 'info',
        message:
          'The sheets "Jan 2024", "Feb 2024", "Mar 2024" have the same columns and were read as one table, in workbook order.',
      },
      {
        kind: 'other_tables_not_read',
        severity: 'warning',
        message:
          'Only the sheets "Jan 2024", "Feb 2024", "Mar 2024" were read; "Stores" also holds a table: upload it as its own statement.',
      },
    ]);
  },
);

t.test(
  'a cell beyond the header is never dropped silently: the rows are counted and flagged',
  async (t) => {
    const { out, flags } = await flagsOf(t, [
      ['2024-03', 'A', 'USD', '1.00'],
      ['2024-03', 'B', 'USD', '2.10', '9.99'],
      ['2024-03', 'C', 'USD', '0.50', ''],
      ['2024-03', 'D', 'USD', '0.25', 'x', 'y'],
    ]);
    t.equal(out.keptRows, 4);
    t.equal(out.net, '3.850000000000', 'the rows are kept with their mapped cells');
    t.equal(out.issues.extraCells, 2, 'an empty extra cell is no cell');
    t.same(flags, [
      {
        kind: 'extra_cells',
        severity: 'warning',
        message: "2 rows have a cell beyond the header's last column; those cells are not read.",
      },
    ]);
  },
);
