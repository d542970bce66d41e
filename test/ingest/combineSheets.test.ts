// A workbook with a sheet per month (or store) holding one table: the sheets with the detail
// table's header are read as one, in workbook order, their totals checked as one, their top rows
// accounted for; sheets of another layout, summary and hidden sheets are never joined.
import { readFile } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import t from 'tap';
import { HEADER, readJoined } from '../helpers/joinedTable.ts';

type Cell = string | number | null;
interface SheetSpec {
  rows: Cell[][];
  state?: 'hidden';
}

async function workbook(sheets: Record<string, SheetSpec>): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  for (const [name, spec] of Object.entries(sheets))
    wb.addWorksheet(name, spec.state ? { state: spec.state } : {}).addRows(spec.rows);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** a month's sheet: a title row, the header, its rows and, unless `total` is false, a Total row (stated, or the true sums) */
function month(
  m: string,
  titles: string[],
  net: number[],
  total: boolean | [number, number] = true,
): SheetSpec {
  const rows: Cell[][] = [
    [`Sales report 2024-${m}`],
    HEADER,
    ...titles.map((title, i) => [`2024-${m}`, title, 'USD', 10 + i, net[i]!]),
  ];
  if (total !== false) {
    const [units, sum] =
      total === true
        ? [titles.reduce((a, _, i) => a + 10 + i, 0), net.reduce((a, b) => a + b, 0)]
        : total;
    rows.push(['Total', null, null, units, Number(sum.toFixed(2))]);
  }
  return { rows };
}

async function ingest(t: { teardown(fn: () => unknown): void }, sheets: Record<string, SheetSpec>) {
  return readJoined(t, await workbook(sheets), 'statement.xlsx');
}
t.test(
  'month sheets are one table in workbook order, whichever sheet scores best; each row points at its line of the joined file',
  async (t) => {
    const { located, out, flags, rows } = await ingest(t, {
      Summary: {
        rows: [
          ['Month', 'Net'],
          ['2024-01', 3],
          ['2024-02', 9],
        ],
      },
      Jan: month('01', ['A', 'B'], [1, 2]),
      Feb: month('02', ['C', 'D', 'E', 'F'], [1.5, 2.5, 3, 2]),
    });
    t.same(located.sheet?.combined, ['Jan', 'Feb']);
    t.equal(located.sheet?.name, 'Jan', 'the first sheet gives the header and preamble');
    t.same(
      located.sheet?.candidates.map((c) => [c.name, c.skipped ?? null]),
      [
        ['Summary', 'summary sheet'],
        ['Jan', null],
        ['Feb', null],
      ],
    );
    t.equal(out.keptRows, 6);
    t.equal(out.net, '12.000000000000');
    t.equal(out.units, '67.000000000000', 'units 10 + 11 and 10 + 11 + 12 + 13');
    t.same(
      rows.map(([, title]) => title),
      ['A', 'B', 'C', 'D', 'E', 'F'],
    );
    t.same(
      rows.map(([r]) => r),
      [1, 2, 3, 4, 5, 6],
    );
    // source_row n is the n-th data record under the header of the joined file (the statement's csv variant)
    const lines = (await readFile(located.csvPath, 'utf8')).trimEnd().split('\n');
    t.equal(lines[located.headerLine], HEADER.join(','));
    const data = lines.slice(located.headerLine + 1).filter((l) => !l.startsWith('Total'));
    t.same(
      data.map((l) => l.split(',')[1]),
      ['A', 'B', 'C', 'D', 'E', 'F'],
    );
    t.equal(located.footerRecords, 2, "each sheet's Total row is a footer row of the joined table");
    // Feb's title and header are not in the joined file: listed as removed rows of no line
    t.same(
      located.removed.map((r) => [r.line, r.reason, r.cells[0]]),
      [
        [0, 'preamble', 'Sales report 2024-01'],
        [lines.length - 2, 'footer', 'Total'],
        [lines.length - 1, 'footer', 'Total'],
        [-1, 'preamble', 'Sales report 2024-02'],
        [-1, 'repeated_header', 'Period'],
      ],
    );
    t.equal(located.removedTotal, 5);
    // the totals agree: their sum is checked against the joined rows, no mismatch
    t.same(flags, [
      { kind: 'several_statement_periods', message: 'The rows span 2 statement periods.' },
      {
        kind: 'sheets_combined',
        message:
          'The sheets "Jan", "Feb" have the same columns and were read as one table, in workbook order.',
      },
    ]);
  },
);

t.test("the sheets' totals are added up and checked against all the rows", async (t) => {
  const wrong = await ingest(t, {
    Jan: month('01', ['A', 'B'], [1, 2]),
    Feb: month('02', ['C'], [4], [10, 4.5]),
  });
  t.same(wrong.located.footerTotals, [
    { label: 'Total', values: { Units: '31.000000000000', Net: '7.500000000000' }, kind: 'total' },
  ]);
  t.same(
    wrong.flags.filter((f) => f.kind === 'footer_total_mismatch').map((f) => f.message),
    ["The file's total (7.500000000000) differs from the sum of its rows (7.000000000000)."],
  );

  // a total on one sheet only says nothing of the others' rows: not checked rather than flagged wrongly
  const partial = await ingest(t, {
    Jan: month('01', ['A', 'B'], [1, 2]),
    Feb: month('02', ['C'], [4], false),
  });
  t.equal(partial.out.keptRows, 3);
  t.same(partial.located.footerTotals, []);
  t.same(
    partial.flags.filter((f) => f.kind === 'footer_total_mismatch'),
    [],
  );
});

t.test('only sheets with the same header join; summary and hidden sheets never do', async (t) => {
  const { located, out, flags } = await ingest(t, {
    Jan: month('01', ['A', 'B'], [1, 2]),
    Stores: {
      rows: [
        ['Store', 'Streams'],
        ['S1', 1],
        ['S2', 2],
        ['S3', 3],
      ],
    },
    'Feb totals': month('02', ['X'], [100]),
    Hidden: { ...month('03', ['Y'], [200]), state: 'hidden' },
    Feb: month('02', ['C'], [4]),
    Mar: {
      rows: [
        ['Sales report 2024-03'],
        ['Period', 'Title', 'Currency', 'Net'],
        ['2024-03', 'Z', 'USD', 300],
      ],
    },
  });
  t.same(located.sheet?.combined, ['Jan', 'Feb']);
  t.equal(out.keptRows, 3);
  t.equal(out.net, '7.000000000000');
  t.same(
    located.sheet?.candidates.map((c) => [c.name, c.skipped ?? null]),
    [
      ['Jan', null],
      ['Stores', 'another table scored higher'],
      ['Feb totals', 'summary sheet'],
      ['Hidden', 'hidden sheet'],
      ['Feb', null],
      ['Mar', 'another table scored higher'],
    ],
  );
  t.same(
    flags.find((f) => f.kind === 'other_tables_not_read'),
    {
      kind: 'other_tables_not_read',
      message:
        'Only the sheets "Jan", "Feb" were read; "Stores", "Mar" also hold tables: upload each as its own statement.',
    },
  );
});

t.test(
  'cells with line breaks, commas and quotes keep their rows whole across the join',
  async (t) => {
    const { out, rows } = await ingest(t, {
      Jan: month('01', ['Line\nbreak', 'Comma, "quoted"'], [1.25, 2]),
      Feb: month('02', ['Two\nlines\nhere', 'Plain'], [3, 0.75]),
    });
    t.equal(out.keptRows, 4);
    t.same(rows, [
      [1, 'Line\nbreak', '1.250000000000'],
      [2, 'Comma, "quoted"', '2.000000000000'],
      [3, 'Two\nlines\nhere', '3.000000000000'],
      [4, 'Plain', '0.750000000000'],
    ]);
  },
);
