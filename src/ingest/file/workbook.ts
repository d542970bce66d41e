// XLSX to one CSV per sheet, streaming (rows are never all in memory): shared strings and
// worksheets and the styles' number formats through our streaming XML reader (sheetXml.ts). Before
// any part is parsed, every part is inflated once under the limits, DTDs are refused (Excel never
// writes one; they carry XXE and entity-expansion payloads) and the archive's layout is checked. Cell values become
// text the way the statement means them: cached results of formulas, dates as ISO
// yyyy-mm-dd in the workbook's date system, numbers as plain decimals. A date stored as a number
// formatted General stays a number: each sheet carries the date system it is to be read in.
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import {
  type Deadline,
  FileError,
  type InflateBudget,
  type Limits,
  formatBytes,
} from './limits.ts';
import { assertContiguous, openZip, type OpenZip } from './containers.ts';
import {
  MAX_ROWS,
  type RawCell,
  type RawRow,
  readNumberFormats,
  readSharedStrings,
  readWorksheet,
  type SheetExtras,
} from './sheetXml.ts';
import { SUPPORTED } from './sniff.ts';
import { csvField } from './csvField.ts';
import { plainNumber, shortestDecimal } from '../../decimal.ts';

export interface SheetCsv {
  name: string;
  /** 0-based position in the workbook */
  index: number;
  hidden: boolean;
  csvPath: string;
  rows: number;
  /** rows with content that the sheet hides (they are read all the same) */
  hiddenRows?: number;
  /** the number of the sheet's last row with content (Excel's last is 1,048,576) */
  lastRow?: number;
  /** merged ranges (`A1:C1`) */
  merges?: string[];
  /** the workbook's date system, which bare serials (numbers not formatted as dates) in csvPath are in; absent: 1900 */
  dateSystem?: 1900 | 1904;
}

interface WorkbookFacts {
  /** the workbook uses the 1904 date system */
  date1904: boolean;
  /** the sheets in workbook order (name, sheetId, state, relationship id) */
  sheets: { name: string; id: number; state: string; rId: string }[];
}

export type ZipKind = 'xlsx' | 'archive';

/** What a zip is: a workbook, something else Office-like we refuse, or an archive of files. */
export function zipKind(zip: OpenZip): ZipKind {
  const names = new Set(zip.entries.map((e) => e.name));
  if (names.has('xl/workbook.xml')) return 'xlsx';
  if (names.has('xl/workbook.bin'))
    throw new FileError(
      'FILE_UNSUPPORTED_FORMAT',
      `This is a binary Excel workbook (.xlsb), which is not read: save it as .xlsx or .csv. ${SUPPORTED}`,
    );
  if (names.has('mimetype') && names.has('content.xml')) {
    throw new FileError(
      'FILE_UNSUPPORTED_FORMAT',
      `This is an OpenDocument file (.ods), which is not read: save it as .xlsx or .csv. ${SUPPORTED}`,
    );
  }
  if ([...names].some((n) => n.startsWith('Index/') && n.endsWith('.iwa'))) {
    throw new FileError(
      'FILE_UNSUPPORTED_FORMAT',
      `This is an Apple Numbers file, which is not read: export it as .xlsx or .csv. ${SUPPORTED}`,
    );
  }
  if (names.has('word/document.xml') || names.has('ppt/presentation.xml')) {
    throw new FileError(
      'FILE_UNSUPPORTED_FORMAT',
      `This is a Word or PowerPoint document, not a statement table. ${SUPPORTED}`,
    );
  }
  return 'archive';
}

async function inspectWorkbook(file: string, zip: OpenZip): Promise<WorkbookFacts> {
  await assertContiguous(file, zip.entries);
  let workbookXml = '';
  for (const e of zip.entries) {
    if (e.name.endsWith('/')) continue;
    const xml = e.name.endsWith('.xml') || e.name.endsWith('.rels');
    const keep = e.name === 'xl/workbook.xml';
    let tail = '';
    let declared = false;
    await zip.read(e, (chunk) => {
      if (xml && !declared) {
        // a DTD may follow any amount of prolog, so every chunk is searched (with the last bytes of the one before)
        const text = tail + chunk.toString('latin1');
        if (text.includes('<!DOCTYPE') || text.includes('<!ENTITY')) declared = true;
        tail = text.slice(-16);
      }
      if (keep && workbookXml.length < 1024 * 1024) workbookXml += chunk.toString('utf8');
    });
    if (declared) {
      throw new FileError(
        'FILE_DAMAGED',
        `The workbook part "${e.name}" declares a document type, which Excel never writes; the file is refused as unsafe.`,
      );
    }
  }
  const pr = /<(?:\w+:)?workbookPr\b[^>]{0,2000}>/.exec(workbookXml)?.[0] ?? '';
  const flag = /\bdate1904="([^"]{0,10})"/.exec(pr)?.[1];
  const sheets: WorkbookFacts['sheets'] = [];
  for (const tag of workbookXml.match(/<(?:\w+:)?sheet\b[^>]{0,2000}>/g) ?? []) {
    const attr = (name: string) => new RegExp(`\\s${name}="([^"]{0,200})"`).exec(tag)?.[1];
    const name = attr('name');
    if (name === undefined) continue;
    sheets.push({
      name: decodeXml(name),
      id: Number.parseInt(attr('sheetId') ?? '0', 10),
      state: attr('state') ?? 'visible',
      rId: attr('r:id') ?? '',
    });
  }
  return { date1904: flag === '1' || flag === 'true', sheets };
}

function decodeXml(s: string): string {
  return s.replace(
    /&(lt|gt|amp|quot|apos);/g,
    (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e] ?? '',
  );
}

const DAY_MS = 86_400_000;

function isoDate(d: Date): string {
  if (Number.isNaN(d.getTime())) return '';
  const iso = d.toISOString();
  const time = iso.slice(11, 19);
  return time === '00:00:00' ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${time}`;
}

function serialToIso(serial: number, date1904: boolean): string {
  return isoDate(new Date(Math.round((serial - 25569 + (date1904 ? 1462 : 0)) * DAY_MS)));
}

function isDateFormat(fmt: string | undefined): boolean {
  if (!fmt) return false;
  const bare = fmt.replace(/\[[^\]]{0,50}\]/g, '').replace(/"[^"]{0,200}"/g, '');
  return /[ymdhsb]/i.test(bare) && !/^[#0.,%E+\-\s]*$/.test(bare);
}

/** A cell's value as the text the statement means (see the module comment). */
function cellText(
  cell: RawCell,
  sharedStrings: readonly string[],
  numFmtOf: (style: number) => string | undefined,
  date1904: boolean,
): string {
  const v = cell.value;
  switch (cell.type) {
    case 's': {
      if (v === null) return '';
      return sharedStrings[Number.parseInt(v, 10)] ?? '';
    }
    case 'inlineStr':
      return cell.inline ?? v ?? '';
    case 'str':
    case 'e':
      // a formula's cached text or error value (`#N/A`), as written
      return v ?? cell.inline ?? '';
    case 'b':
      if (v === null) return '';
      return v.trim() === '1' || v.trim().toLowerCase() === 'true' ? 'TRUE' : 'FALSE';
    case 'd': {
      // an ISO 8601 date and time (strict Open XML), which the cell's format shows
      if (v === null) return '';
      const m = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}:\d{2}))?/.exec(v.trim());
      if (!m) return v.trim();
      return m[2] === undefined || m[2] === '00:00:00' ? m[1]! : `${m[1]} ${m[2]}`;
    }
    default: {
      // a number; a formula without a cached result stays empty (formulas are never evaluated)
      if (v === null || v.trim() === '') return cell.inline ?? '';
      const n = Number(v.trim());
      if (!Number.isFinite(n)) return v.trim();
      if (isDateFormat(numFmtOf(cell.style))) return serialToIso(n, date1904);
      // a plain decimal keeps every digit the file wrote (an 18-digit asset ID is no double)
      return shortestDecimal(v.trim()) ?? plainNumber(n);
    }
  }
}

/** The worksheet part of each sheet, from the workbook's relationships (`worksheets/sheet1.xml` is `xl/worksheets/sheet1.xml`). */
async function worksheetParts(zip: OpenZip): Promise<Map<string, string>> {
  const rels = zip.entries.find((e) => e.name === 'xl/_rels/workbook.xml.rels');
  const out = new Map<string, string>();
  if (!rels) return out;
  let xml = '';
  for await (const chunk of await zip.reread(rels)) {
    if (xml.length < 4 * 1024 * 1024) xml += (chunk as Buffer).toString('utf8');
  }
  for (const tag of xml.match(/<(?:\w+:)?Relationship\b[^>]{0,2000}>/g) ?? []) {
    const id = /\sId="([^"]{0,200})"/.exec(tag)?.[1];
    const target = /\sTarget="([^"]{0,500})"/.exec(tag)?.[1];
    if (id === undefined || target === undefined) continue;
    const decoded = decodeXml(target);
    const resolved = decoded.startsWith('/')
      ? decoded.slice(1)
      : path.posix.normalize(`xl/${decoded}`);
    out.set(id, resolved);
  }
  return out;
}

/** What every sheet of one workbook is written with. */
interface SheetWriting {
  zip: OpenZip;
  sharedStrings: Parameters<typeof cellText>[1];
  numFmtOf: Parameters<typeof cellText>[2];
  date1904: boolean;
  limits: Limits;
  deadline: Deadline;
}

/** Every sheet of the workbook written as CSV into workDir, in workbook order. */
export async function workbookToCsv(
  file: string,
  workDir: string,
  limits: Limits,
  budget: InflateBudget,
  deadline: Deadline,
): Promise<SheetCsv[]> {
  const zip = await openZip(file, limits, budget, deadline);
  let facts: WorkbookFacts;
  try {
    if (zipKind(zip) !== 'xlsx')
      throw new FileError('FILE_DAMAGED', 'The workbook is damaged: it has no workbook part.');
    facts = await inspectWorkbook(file, zip);
  } catch (error) {
    zip.close();
    throw error;
  }
  const sheets: SheetCsv[] = [];
  try {
    const part = (name: string) => zip.entries.find((e) => e.name === name);
    // the parts read from our own reading of the archive (yauzl, through the central directory,
    // already inflated once under the limits by inspectWorkbook), in the order they are needed
    const strings = part('xl/sharedStrings.xml');
    const sharedStrings = strings
      ? await readSharedStrings(await zip.reread(strings), limits.maxFieldBytes)
      : [];
    const styles = part('xl/styles.xml');
    const numFmtOf = styles ? await readNumberFormats(await zip.reread(styles)) : () => undefined;
    const parts = await worksheetParts(zip);
    const { date1904 } = facts;
    const writing: SheetWriting = { zip, sharedStrings, numFmtOf, date1904, limits, deadline };
    for (const [position, sheet] of facts.sheets.entries()) {
      const entry = part(parts.get(sheet.rId) ?? '');
      // a chart sheet or a dialog sheet, or a sheet whose part is missing: no table
      if (!entry || !/^xl\/worksheets\/[^/]+\.xml$/.test(entry.name)) continue;
      const csvPath = path.join(workDir, `sheet-${sheets.length}.csv`);
      const written = await writeSheetCsv(writing, entry, sheet.name, csvPath);
      sheets.push({
        name: sheet.name,
        index: position,
        hidden: sheet.state === 'hidden' || sheet.state === 'veryHidden',
        csvPath,
        ...written,
        dateSystem: facts.date1904 ? 1904 : 1900,
      });
    }
  } catch (error) {
    if (error instanceof FileError) throw error;
    throw new FileError(
      'FILE_DAMAGED',
      `The workbook is damaged or not a valid .xlsx file (${String((error as Error)?.message ?? error).slice(0, 120)}).`,
    );
  } finally {
    zip.close();
  }
  return sheets;
}

/**
 * One worksheet written as CSV: rows keep their numbers (sheet row n is CSV line n - 1, empty rows
 * become blank lines).
 */
async function writeSheetCsv(
  writing: SheetWriting,
  entry: OpenZip['entries'][number],
  sheetName: string,
  csvPath: string,
): Promise<Pick<SheetCsv, 'rows' | 'hiddenRows' | 'lastRow' | 'merges'>> {
  const extras: SheetExtras = { merges: [] };
  const out = createWriteStream(csvPath);
  let written = 0;
  let hiddenRows = 0;
  let lastRow = 0;
  let nextRow = 1;
  let buffered: string[] = [];
  const flush = async () => {
    if (buffered.length === 0) return;
    const ok = out.write(buffered.join(''));
    buffered = [];
    if (!ok) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  try {
    const rows = readWorksheet(await writing.zip.reread(entry), entry.name, extras);
    for await (const batch of rows) {
      for (const row of batch) {
        const line = csvLine(writing, row, sheetName);
        if (line === null) continue;
        if (row.number > nextRow)
          buffered.push('\n'.repeat(Math.min(row.number - nextRow, MAX_ROWS)));
        buffered.push(line);
        nextRow = row.number + 1;
        lastRow = Math.max(lastRow, row.number);
        written++;
        if (row.hidden) hiddenRows++;
        if (buffered.length >= 500) {
          writing.deadline.check();
          await flush();
        }
      }
    }
    await flush();
  } finally {
    await new Promise<void>((resolve, reject) =>
      out.end((err?: Error | null) => (err ? reject(err) : resolve())),
    );
  }
  return { rows: written, hiddenRows, lastRow, merges: extras.merges };
}

/** A row's CSV line, its trailing empty cells left out; null for a row with no text. */
function csvLine(writing: SheetWriting, row: RawRow, sheetName: string): string | null {
  const { limits } = writing;
  const cells: string[] = [];
  for (const cell of row.cells) {
    const text = cellText(cell, writing.sharedStrings, writing.numFmtOf, writing.date1904);
    if (Buffer.byteLength(text) > limits.maxFieldBytes) {
      throw new FileError(
        'FIELD_TOO_LARGE',
        `A cell of sheet "${sheetName}" (row ${row.number}) is longer than ${formatBytes(limits.maxFieldBytes)}.`,
      );
    }
    cells[cell.column] = text;
  }
  let last = cells.length - 1;
  while (last >= 0 && (cells[last] ?? '').trim() === '') last--;
  if (last < 0) return null;
  const line: string[] = [];
  for (let i = 0; i <= last; i++) line.push(csvField(cells[i] ?? ''));
  return `${line.join(',')}\n`;
}
