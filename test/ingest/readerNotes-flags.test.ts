// What the file reader notices about the file itself reaches the statement's flags: a sheet (or a
// text file) that ends exactly at Excel's last row, 1,048,576, was probably cut off there
// (possibly_truncated, a warning); rows the workbook hides are read like the others (hidden_rows,
// information). Real workbooks written by exceljs and real text files, through the file reader and
// the normalizer.
import ExcelJS from 'exceljs';
import t from 'tap';
import { statementFlags } from '../../src/ingest/pipeline.ts';
import { zipFiles } from '../../fixtures/statements/kit.ts';
import { normalizeFile } from '../helpers/normalize.ts';

// two cases write and read sheets of Excel's full 1,048,576 rows: minutes on a busy 2-core machine
t.setTimeout(600_000);

const fields = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { constant: 'USD' },
  royaltyEarnings: { column: 'Net' },
  rawTitle: { column: 'Title' },
};
const HEADER = ['Period', 'Title', 'Net'];

const readerFlags = (
  flags: { kind: string; severity: string; message: string; details?: unknown }[],
) =>
  flags
    .filter((f) => f.kind === 'possibly_truncated' || f.kind === 'hidden_rows')
    .map(({ kind, severity, message, details }) => ({ kind, severity, message, details }));

async function workbook(build: (wb: ExcelJS.Workbook) => void): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  build(wb);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

t.test(
  'rows hidden in the sheet read are counted and flagged as information; the rows are read all the same',
  async (t) => {
    const bytes = await workbook((wb) => {
      const ws = wb.addWorksheet('Sales');
      ws.addRows([
        HEADER,
        ['2024-03', 'A', '1.00'],
        ['2024-03', 'B', '2.00'],
        ['2024-03', 'C', '3.00'],
        ['2024-03', 'D', '4.00'],
      ]);
      ws.getRow(3).hidden = true;
      ws.getRow(5).hidden = true;
    });
    const { located, out } = await normalizeFile(t, bytes, fields, { fileName: 'hidden.xlsx' });
    t.same(located.readerNotes, { hiddenRows: 2 });
    t.equal(out.keptRows, 4);
    t.equal(out.net, '10.000000000000');
    t.same(readerFlags(statementFlags(located, out, fields)), [
      {
        kind: 'hidden_rows',
        severity: 'info',
        message: '2 rows hidden in the workbook were read like the others.',
        details: { rows: 2 },
      },
    ]);
  },
);

t.test(
  'hidden rows are summed over the sheets read as one table; a hidden row of a sheet not read is not counted',
  async (t) => {
    const bytes = await workbook((wb) => {
      const jan = wb.addWorksheet('Jan');
      jan.addRows([HEADER, ['2024-01', 'A', '1.00'], ['2024-01', 'B', '2.00']]);
      jan.getRow(2).hidden = true;
      const feb = wb.addWorksheet('Feb');
      feb.addRows([HEADER, ['2024-02', 'C', '3.00'], ['2024-02', 'D', '4.00']]);
      feb.getRow(3).hidden = true;
      const notes = wb.addWorksheet('Notes');
      notes.addRows([['Remarks'], ['nothing to see'], ['hidden remark']]);
      notes.getRow(3).hidden = true;
    });
    const { located, out } = await normalizeFile(t, bytes, fields, { fileName: 'months.xlsx' });
    t.same(located.sheet?.combined, ['Jan', 'Feb']);
    t.same(located.readerNotes, { hiddenRows: 2 });
    t.equal(out.keptRows, 4);
    t.same(readerFlags(statementFlags(located, out, fields)), [
      {
        kind: 'hidden_rows',
        severity: 'info',
        message: '2 rows hidden in the workbook were read like the others.',
        details: { rows: 2 },
      },
    ]);
  },
);

t.test(
  "a sheet whose last row is Excel's last (1,048,576) is flagged as probably cut off",
  async (t) => {
    // the export filled the sheet: its last data row is on row 1,048,576 (the rows between are empty)
    const bytes = await workbook((wb) => {
      const ws = wb.addWorksheet('Detail');
      ws.addRows([HEADER, ['2024-03', 'A', '1.00'], ['2024-03', 'B', '2.00']]);
      ws.getRow(1_048_576).values = ['2024-03', 'Z', '5.00'];
    });
    const { located, out } = await normalizeFile(t, bytes, fields, { fileName: 'cut.xlsx' });
    t.same(located.readerNotes, { rowLimitSheets: ['Detail'] });
    t.equal(out.keptRows, 3);
    t.equal(out.net, '8.000000000000');
    t.same(readerFlags(statementFlags(located, out, fields)), [
      {
        kind: 'possibly_truncated',
        severity: 'warning',
        message: `The sheet "Detail" fills Excel's last row (1,048,576): the export was probably cut off there.`,
        details: { sheets: ['Detail'], rowLimit: 1_048_576 },
      },
    ]);
  },
);

t.test("a sheet ending one row before Excel's last is not flagged", async (t) => {
  const bytes = await workbook((wb) => {
    const ws = wb.addWorksheet('Detail');
    ws.addRows([HEADER, ['2024-03', 'A', '1.00']]);
    ws.getRow(1_048_575).values = ['2024-03', 'Z', '5.00'];
  });
  const { located, out } = await normalizeFile(t, bytes, fields, { fileName: 'whole.xlsx' });
  t.equal(located.readerNotes, undefined);
  t.equal(out.keptRows, 2);
  t.same(readerFlags(statementFlags(located, out, fields)), []);
});

/** A CSV of `lines` lines: the header and data rows (the last line ending with a line break or not). */
function csvOfLines(lines: number, finalNewline: boolean): Buffer {
  const rows = [HEADER.join(',')];
  for (let i = 1; i < lines; i++) rows.push(`2024-03,T${i},0.01`);
  return Buffer.from(rows.join('\n') + (finalNewline ? '\n' : ''));
}

t.test(
  "a text file of exactly 1,048,576 lines (Excel's last row) is flagged; one line fewer or more is not",
  async (t) => {
    for (const [lines, finalNewline, flagged] of [
      [1_048_576, true, true],
      [1_048_576, false, true],
      [1_048_575, true, false],
      [1_048_577, true, false],
    ] as const) {
      const { located, out } = await normalizeFile(t, csvOfLines(lines, finalNewline), fields, {
        fileName: 'export.csv',
      });
      t.equal(out.keptRows, lines - 1, `${lines} lines: ${lines - 1} data rows`);
      t.equal(located.readerNotes?.rowLimitSheets?.length ?? 0, flagged ? 1 : 0);
      t.same(
        readerFlags(statementFlags(located, out, fields)),
        flagged
          ? [
              {
                kind: 'possibly_truncated',
                severity: 'warning',
                message: `The file "export.csv" has exactly 1,048,576 lines, Excel's last row: the export was probably cut off there.`,
                details: { sheets: ['export.csv'], rowLimit: 1_048_576 },
              },
            ]
          : [],
        `${lines} lines${finalNewline ? '' : ' (no final line break)'}: ${flagged ? 'flagged' : 'not flagged'}`,
      );
    }
  },
);

t.test(
  'lines, not records: quoted line breaks and CRLF count as the lines Excel wrote',
  async (t) => {
    // 1,048,574 records, one of them a title over three lines: 1,048,576 lines (CRLF line breaks)
    const rows = [HEADER.join(',')];
    for (let i = 1; i < 1_048_574; i++)
      rows.push(
        i === 500_000 ? '2024-03,"A title\r\nover\r\nthree lines",0.01' : `2024-03,T${i},0.01`,
      );
    const { located, out } = await normalizeFile(
      t,
      Buffer.from(`${rows.join('\r\n')}\r\n`),
      fields,
      { fileName: 'quoted.csv' },
    );
    t.equal(out.keptRows, 1_048_573);
    t.same(located.readerNotes?.rowLimitSheets, ['quoted.csv'], 'flagged by its lines');
    // the same records without the quoted line breaks: 1,048,574 lines, not flagged
    const plain = rows.map((r) => r.replace('A title\r\nover\r\nthree lines', 'A title'));
    const again = await normalizeFile(t, Buffer.from(`${plain.join('\r\n')}\r\n`), fields, {
      fileName: 'plain.csv',
    });
    t.equal(again.located.readerNotes, undefined);
  },
);

t.test(
  "files of an archive read as one table keep each file's notes: hidden rows summed, every file cut off at Excel's last row named",
  async (t) => {
    // two month workbooks of one layout, each hiding a row: the second's was not counted
    const month = (m: string, hide: number[]) =>
      workbook((wb) => {
        const ws = wb.addWorksheet('Sales');
        ws.addRows([
          HEADER,
          [`2024-${m}`, 'A', '1.00'],
          [`2024-${m}`, 'B', '2.00'],
          [`2024-${m}`, 'C', '3.00'],
        ]);
        for (const r of hide) ws.getRow(r).hidden = true;
      });
    const books = zipFiles([
      { name: 'jan.xlsx', data: await month('01', []) },
      { name: 'feb.xlsx', data: await month('02', [2, 4]) },
      { name: 'mar.xlsx', data: await month('03', [3]) },
    ]);
    const read = await normalizeFile(t, books, fields, { fileName: 'months.zip' });
    t.same(read.located.archiveEntry?.combined, ['jan.xlsx', 'feb.xlsx', 'mar.xlsx']);
    t.same(read.located.readerNotes, { hiddenRows: 3 });
    t.equal(read.out.keptRows, 9);
    t.same(readerFlags(statementFlags(read.located, read.out, fields)), [
      {
        kind: 'hidden_rows',
        severity: 'info',
        message: '3 rows hidden in the workbooks were read like the others.',
        details: { rows: 3 },
      },
    ]);

    // a month file of exactly 1,048,576 lines after one that is whole: the second is named
    const texts = zipFiles([
      { name: 'reports/2024-01.csv', data: csvOfLines(3, true) },
      { name: 'reports/2024-02.csv', data: csvOfLines(1_048_576, true) },
    ]);
    const cut = await normalizeFile(t, texts, fields, { fileName: 'reports.zip' });
    t.same(cut.located.archiveEntry?.combined, ['reports/2024-01.csv', 'reports/2024-02.csv']);
    t.same(cut.located.readerNotes, { rowLimitSheets: ['reports/2024-02.csv'] });
    t.equal(cut.out.keptRows, 2 + 1_048_575);
    t.same(readerFlags(statementFlags(cut.located, cut.out, fields)), [
      {
        kind: 'possibly_truncated',
        severity: 'warning',
        message: `The file "reports/2024-02.csv" has exactly 1,048,576 lines, Excel's last row: the export was probably cut off there.`,
        details: { sheets: ['reports/2024-02.csv'], rowLimit: 1_048_576 },
      },
    ]);
  },
);
