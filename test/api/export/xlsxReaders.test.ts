// An XLSX export opens in the spreadsheet readers people use (exceljs, the reader ingestion itself
// uses, streaming and whole; SheetJS) with every text exactly as the data holds it, carriage
// returns included, and every formula lead neutralised, also behind U+FFFE/U+FFFF, which XML
// cannot hold. The files come through export.downloadFile's presigned URL, as a client gets them.
import { Readable } from 'node:stream';
import t from 'tap';
import ExcelJS from 'exceljs';
import XLSX from '@e965/xlsx';
import { seedRightsholder, seedStatement } from '../../analytics/helpers.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { downloadAll, readTable, records, runExport } from './helpers.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'XLSX Readers Org');
const org = owner.organizationId;
const rightsholderId = await seedRightsholder(srv, org, 'Readers');
const TITLES = [
  'cr\rx',
  'crlf\r\ny',
  'lf\nz',
  'Ünïcødé 日本 🎵',
  'a,b "q"',
  '\uFFFF=HYPERLINK("http://evil.example/x")',
  '\uFFFE\u0001@SUM(1)',
];
// as a spreadsheet shows them: U+FFFE/U+FFFF and the control character dropped, the apostrophe first
const SHOWN = [
  'cr\rx',
  'crlf\r\ny',
  'lf\nz',
  'Ünïcødé 日本 🎵',
  'a,b "q"',
  '\'=HYPERLINK("http://evil.example/x")',
  "'@SUM(1)",
];
await seedStatement(srv, {
  organizationId: org,
  rightsholderId,
  fileName: 'readers.csv',
  stmt: { year: 2024, period: 5, cadence: 'M' },
  rows: TITLES.map((title, i) => ({
    raw_title: title,
    royalty_earnings: `-${i}.25`,
    units: String(i),
  })),
});

const done = await runExport(owner.client, org, {
  type: 'royalty_lines',
  format: 'xlsx',
  rightsholderIds: [rightsholderId],
});
const [file] = await downloadAll(owner.client, org, done.id);
const header = (await readTable('xlsx', file!.bytes)).columns;
const titleColumn = header.indexOf('track_title_raw') + 1;
const amountColumn = header.indexOf('royalty_earnings') + 1;

t.test('the export completed with one part of every row', async (t) => {
  t.match(done, { status: 'completed', rowCount: TITLES.length, fileCount: 1 });
  t.equal(file!.file.rowCount, TITLES.length);
});

t.test(
  'exceljs reads it, streaming (as ingestion does) and whole: exact texts, numeric amounts',
  async (t) => {
    const streamed: { row: number; title: unknown; amount: unknown }[] = [];
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(Readable.from([file!.bytes]), {});
    for await (const sheet of reader) {
      for await (const row of sheet)
        streamed.push({
          row: row.number,
          title: row.getCell(titleColumn).value,
          amount: row.getCell(amountColumn).value,
        });
    }
    t.same(
      streamed.map((r) => r.row),
      Array.from({ length: TITLES.length + 1 }, (_, i) => i + 1),
    );
    t.same(streamed[0], { row: 1, title: 'track_title_raw', amount: 'royalty_earnings' });
    t.same(
      streamed.slice(1).map((r) => r.title),
      SHOWN,
    );
    t.same(
      streamed.slice(1).map((r) => r.amount),
      TITLES.map((_, i) => -(i + 0.25)),
    );

    const book = new ExcelJS.Workbook();
    await book.xlsx.load(file!.bytes as unknown as ArrayBuffer);
    const sheet = book.worksheets[0]!;
    t.equal(sheet.name, 'royalty_lines');
    t.equal(sheet.rowCount, TITLES.length + 1);
    t.same(
      TITLES.map((_, i) => sheet.getRow(i + 2).getCell(titleColumn).value),
      SHOWN,
    );
  },
);

t.test('SheetJS reads the same cells', async (t) => {
  const book = XLSX.read(file!.bytes, { type: 'buffer' });
  const rows = XLSX.utils.sheet_to_json<Record<string, unknown>>(book.Sheets[book.SheetNames[0]!]!);
  // SheetJS itself turns a CR LF it has read into LF (a lone CR it keeps)
  t.same(
    rows.map((r) => r.track_title_raw),
    SHOWN.map((s) => s.replace(/\r\n/g, '\n')),
  );
  t.same(
    rows.map((r) => r.royalty_earnings),
    TITLES.map((_, i) => -(i + 0.25)),
  );
});

t.test('CSV: the same formula leads behind U+FFFE/U+FFFF get the apostrophe first', async (t) => {
  const csv = await runExport(owner.client, org, {
    type: 'royalty_lines',
    format: 'csv',
    rightsholderIds: [rightsholderId],
  });
  const rows = records(
    await Promise.all(
      (await downloadAll(owner.client, org, csv.id)).map((d) => readTable('csv', d.bytes)),
    ),
  );
  t.same(
    rows.map((r) => r.track_title_raw),
    [...TITLES.slice(0, 5), '\'\uFFFF=HYPERLINK("http://evil.example/x")', "'\uFFFE\u0001@SUM(1)"],
  );
});
