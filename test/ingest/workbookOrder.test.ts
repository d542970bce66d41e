// exceljs's own streaming walk of a workbook loses, from run to run, the parts stored after the
// worksheets (shared strings, styles: exceljs issues #683, #3064), as exceljs's writer and Excel
// store them: the same file then read as `{ sharedString: n }` cells or with sheets missing. The
// reader hands exceljs the parts itself; the same workbook reads the same every time.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import t from 'tap';
import yauzl from 'yauzl';
import { locateTable } from '../../workers/statementFile.ts';
import { repoRoot } from '../setup/paths.ts';

async function entryNames(file: string): Promise<string[]> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true }, (e, z) => (e || !z ? reject(e) : resolve(z))),
  );
  const names: string[] = [];
  await new Promise<void>((resolve) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      names.push(entry.fileName);
      zip.readEntry();
    });
    zip.on('end', () => resolve());
    zip.readEntry();
  });
  zip.close();
  return names;
}

async function readTwenty(t: { teardown(fn: () => unknown): void }, file: string) {
  const results = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const dir = await mkdtemp(path.join(tmpdir(), 'royalty-workbook-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const r = await locateTable({ sourcePath: file, fileName: path.basename(file), workDir: dir });
    if (!r.ok) throw new Error(r.message);
    results.add(
      JSON.stringify({
        header: r.header,
        dataRecords: r.dataRecords,
        sheets: r.sheet?.combined,
        csv: await readFile(r.csvPath, 'utf8'),
      }),
    );
  }
  return [...results].map(
    (x) =>
      JSON.parse(x) as { header: string[]; dataRecords: number; sheets?: string[]; csv: string },
  );
}

t.test(
  'a workbook with its worksheets stored before the shared strings and styles reads the same twenty times',
  async (t) => {
    const file = path.join(repoRoot, 'fixtures', 'statements', 'believe-quarter-by-month.xlsx');
    const names = await entryNames(file);
    t.ok(
      names.indexOf('xl/worksheets/sheet2.xml') < names.indexOf('xl/sharedStrings.xml'),
      'stored in the order that trips exceljs',
    );
    const reads = await readTwenty(t, file);
    t.equal(reads.length, 1, 'one reading');
    t.equal(reads[0]!.dataRecords, 25);
    t.same(reads[0]!.sheets, ['January 2024', 'February 2024', 'March 2024']);
    t.notOk(reads[0]!.csv.includes('[object Object]'), 'no unresolved shared string');
    t.ok(reads[0]!.csv.includes('Sami & The Tides'));
  },
);

t.test('dates and shared strings of an exceljs-written workbook, every time', async (t) => {
  const wb = new ExcelJS.Workbook();
  const sheet = wb.addWorksheet('Sales');
  sheet.addRow(['Date', 'Title', 'Net']);
  for (let i = 0; i < 40; i++) {
    const row = sheet.addRow([new Date(Date.UTC(2024, 2, 1 + (i % 28))), `Song ${i % 7}`, i / 4]);
    row.getCell(1).numFmt = 'yyyy-mm-dd';
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'royalty-workbook-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'sales.xlsx');
  await wb.xlsx.writeFile(file);
  const reads = await readTwenty(t, file);
  t.equal(reads.length, 1, 'one reading');
  const lines = reads[0]!.csv.trimEnd().split('\n');
  t.equal(lines.length, 41);
  t.equal(lines[1], '2024-03-01,Song 0,0');
  t.equal(lines[40], '2024-03-12,Song 4,9.75');
});
