// Files that are no royalty statements (checklist L): a catalogue or metadata export, a usage
// report without amounts (SoundExchange's Report of Use), a bank statement; refused with
// FILE_NOT_A_STATEMENT by the file reader and, uploaded as a client does, failed with that
// errorCode. Statements whose earnings column is empty, unnamed or named in another language are
// still read, and a workbook's metadata sheet next to its detail sheet is simply not chosen.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import t from 'tap';
import { locateTable } from '../../workers/statementFile.ts';
import { createRightsholder, putFile, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';

let root = '';
t.before(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reader-classify-'));
});
t.teardown(() => rm(root, { recursive: true, force: true }));

async function locateBytes(bytes: Buffer, fileName: string) {
  const dir = await mkdtemp(path.join(root, 'w-'));
  const file = path.join(dir, 'original');
  await writeFile(file, bytes);
  return locateTable({ sourcePath: file, fileName, workDir: dir });
}

const csv = (lines: string[]) => Buffer.from(`${lines.join('\n')}\n`);

const CATALOGUE = csv([
  'Title,Artist,ISRC,UPC,Release Date,Label,Genre,Track Number,Duration',
  'Autumn,Orla Finn,USRC17607839,036000291452,2024-03-01,Harbour Records,Folk,1,3:45',
  'Ember,Orla Finn,USRC17607840,036000291452,2024-03-01,Harbour Records,Folk,2,4:02',
]);
const REPORT_OF_USE = csv([
  'NAME_OF_SERVICE,TRANSMISSION_CATEGORY,FEATURED_ARTIST,SOUND_RECORDING_TITLE,ISRC,ALBUM_TITLE,MARKETING_LABEL,ACTUAL_TOTAL_PERFORMANCES',
  'Harbour Radio,B,Orla Finn,Autumn,USRC17607839,Seasons,Harbour Records,1520',
  'Harbour Radio,B,Orla Finn,Ember,USRC17607840,Seasons,Harbour Records,310',
]);
const BANK = csv([
  'Date,Description,Reference,Debit,Credit,Balance',
  '2024-03-01,DISTROKID PAYOUT,REF 1234,,125.40,1125.40',
  '2024-03-04,CARD PAYMENT,REF 1235,20.00,,1105.40',
]);

t.test(
  'a catalogue export, a report of use and a bank statement are refused with FILE_NOT_A_STATEMENT',
  async (t) => {
    const catalogue = await locateBytes(CATALOGUE, 'catalogue.csv');
    t.same(catalogue, {
      ok: false,
      errorCode: 'FILE_NOT_A_STATEMENT',
      message:
        'No earnings column found: no column names an amount of money and no column of numbers can be one (the columns are Title, Artist, ISRC, UPC, Release Date, Label, Genre, Track Number, Duration). This looks like a catalogue or metadata export or a usage report, not a royalty statement.',
    });
    const rou = await locateBytes(REPORT_OF_USE, 'report-of-use.csv');
    t.equal(rou.ok ? 'read' : rou.errorCode, 'FILE_NOT_A_STATEMENT');
    t.match(rou.ok ? '' : rou.message, /^No earnings column found/);
    const bank = await locateBytes(BANK, 'bank.csv');
    t.same(bank, {
      ok: false,
      errorCode: 'FILE_NOT_A_STATEMENT',
      message:
        'It looks like a bank statement (Date, Description, Reference, Debit, Credit, Balance), not a royalty statement: upload the statement from the distributor or society.',
    });

    // a workbook holding only the catalogue
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('Catalogue');
    for (const line of CATALOGUE.toString().trim().split('\n')) sheet.addRow(line.split(','));
    const xlsx = await locateBytes(Buffer.from(await wb.xlsx.writeBuffer()), 'catalogue.xlsx');
    t.equal(xlsx.ok ? 'read' : xlsx.errorCode, 'FILE_NOT_A_STATEMENT');
  },
);

t.test(
  'statements are still read: an empty, unnamed or foreign earnings column, a metadata sheet beside the detail',
  async (t) => {
    const cases: [string, Buffer, number][] = [
      // a workbook saved without its formulas' values: the Net column is empty (missing_amounts decides)
      [
        'empty net',
        csv(['Period,Title,Currency,Units,Net', '2024-03,Autumn,EUR,3,', '2024-03,Ember,EUR,1,']),
        2,
      ],
      // a number column whose name says nothing: the mapping may read it as the earnings
      ['unnamed figures', csv(['Period,Title,Q1 2024', '2024-03,Autumn,12', '2024-03,Ember,4']), 2],
      [
        'Japanese amount in yen',
        csv(['期間,曲名,金額', '2024-03,夜に駆ける,1200', '2024-03,群青,800']),
        2,
      ],
      ['a count and a money word', csv(['Title,Streams,Payout', 'Autumn,1200,', 'Ember,800,']), 2],
    ];
    for (const [name, bytes, rows] of cases) {
      const r = await locateBytes(bytes, `${name}.csv`);
      t.equal(r.ok ? r.dataRecords : r.errorCode, rows, name);
    }
    const wb = new ExcelJS.Workbook();
    const meta = wb.addWorksheet('Catalogue');
    for (const line of CATALOGUE.toString().trim().split('\n')) meta.addRow(line.split(','));
    const detail = wb.addWorksheet('Sales');
    detail.addRow(['Period', 'Title', 'ISRC', 'Currency', 'Units', 'Net']);
    for (let i = 0; i < 12; i++)
      detail.addRow(['2024-03', `Track ${i}`, 'USRC17607839', 'EUR', i + 1, (i + 1) / 4]);
    const r = await locateBytes(Buffer.from(await wb.xlsx.writeBuffer()), 'label.xlsx');
    t.equal(r.ok ? r.sheet?.name : r.errorCode, 'Sales');
    t.equal(r.ok ? r.dataRecords : 0, 12);
  },
);

t.test(
  'uploaded as a client does: the statement fails with FILE_NOT_A_STATEMENT, nothing read',
  async (t) => {
    const srv = await startTestServer(t, { role: 'serve' });
    const owner = await newOrganization(srv, 'Classify Label');
    const org = owner.organizationId;
    const artist = await createRightsholder(owner.client, org, 'Classify Artist');
    for (const [name, bytes, start] of [
      ['catalogue.csv', CATALOGUE, 'No earnings column found'],
      ['report-of-use.csv', REPORT_OF_USE, 'No earnings column found'],
      ['bank-march.csv', BANK, 'It looks like a bank statement'],
    ] as const) {
      const up = await putFile(owner.client, org, artist, name, bytes);
      const s = await waitForStatement(owner.client, org, up.statementId);
      t.equal(s.status, 'failed', name);
      t.equal(s.failureReason?.errorCode, 'FILE_NOT_A_STATEMENT', name);
      t.ok(String(s.failureReason?.message).startsWith(start), name);
      t.equal(s.rowCount, null, `${name}: nothing read`);
    }
  },
);
