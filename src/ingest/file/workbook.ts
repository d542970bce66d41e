// XLSX to one CSV per sheet, with exceljs's streaming WorkbookReader (rows are never all in
// memory). Before exceljs sees the file, every part is inflated once under the limits, DTDs are
// refused (Excel never writes one; they carry XXE and entity-expansion payloads) and the
// archive's layout is checked, because exceljs's own unzip has no limits. Cell values become
// text the way the statement means them: cached results of formulas, dates as ISO
// yyyy-mm-dd in the workbook's date system, numbers as plain decimals. A date stored as a number
// formatted General stays a number: each sheet carries the date system it is to be read in.
import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { type Deadline, FileError, type InflateBudget, type Limits, formatBytes } from './limits.ts';
import { assertContiguous, openZip, type OpenZip } from './containers.ts';
import { SUPPORTED } from './sniff.ts';

export interface SheetCsv {
  name: string;
  /** 0-based position in the workbook */
  index: number;
  hidden: boolean;
  csvPath: string;
  rows: number;
  /** the workbook's date system, which bare serials (numbers not formatted as dates) in csvPath are in; absent: 1900 */
  dateSystem?: 1900 | 1904;
}

interface WorkbookFacts {
  /** the workbook uses the 1904 date system */
  date1904: boolean;
  /** exceljs recognises it (it only reads date1904="1", Excel for Mac may write "true") */
  exceljs1904: boolean;
  /** the sheets in workbook order, as exceljs models them (name, sheetId, state, relationship id) */
  sheets: { name: string; id: number; state: string; rId: string }[];
}

export type ZipKind = 'xlsx' | 'archive';

/** What a zip is: a workbook, something else Office-like we refuse, or an archive of files. */
export function zipKind(zip: OpenZip): ZipKind {
  const names = new Set(zip.entries.map((e) => e.name));
  if (names.has('xl/workbook.xml')) return 'xlsx';
  if (names.has('xl/workbook.bin')) throw new FileError('FILE_UNSUPPORTED_FORMAT', `This is a binary Excel workbook (.xlsb), which is not read: save it as .xlsx or .csv. ${SUPPORTED}`);
  if (names.has('mimetype') && names.has('content.xml')) {
    throw new FileError('FILE_UNSUPPORTED_FORMAT', `This is an OpenDocument file (.ods), which is not read: save it as .xlsx or .csv. ${SUPPORTED}`);
  }
  if ([...names].some((n) => n.startsWith('Index/') && n.endsWith('.iwa'))) {
    throw new FileError('FILE_UNSUPPORTED_FORMAT', `This is an Apple Numbers file, which is not read: export it as .xlsx or .csv. ${SUPPORTED}`);
  }
  if (names.has('word/document.xml') || names.has('ppt/presentation.xml')) {
    throw new FileError('FILE_UNSUPPORTED_FORMAT', `This is a Word or PowerPoint document, not a statement table. ${SUPPORTED}`);
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
      throw new FileError('FILE_DAMAGED', `The workbook part "${e.name}" declares a document type, which Excel never writes; the file is refused as unsafe.`);
    }
  }
  const pr = /<(?:\w+:)?workbookPr\b[^>]{0,2000}>/.exec(workbookXml)?.[0] ?? '';
  const flag = /\bdate1904="([^"]{0,10})"/.exec(pr)?.[1];
  const sheets: WorkbookFacts['sheets'] = [];
  for (const tag of workbookXml.match(/<(?:\w+:)?sheet\b[^>]{0,2000}>/g) ?? []) {
    const attr = (name: string) => new RegExp(`\\s${name}="([^"]{0,200})"`).exec(tag)?.[1];
    const name = attr('name');
    if (name === undefined) continue;
    sheets.push({ name: decodeXml(name), id: Number.parseInt(attr('sheetId') ?? '0', 10), state: attr('state') ?? 'visible', rId: attr('r:id') ?? '' });
  }
  return { date1904: flag === '1' || flag === 'true', exceljs1904: flag === '1', sheets };
}

function decodeXml(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|apos);/g, (_, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e] ?? '');
}

/** A number as plain decimal text: never exponent notation. */
export function plainNumber(n: number): string {
  if (!Number.isFinite(n)) return '';
  const s = String(n);
  const e = s.search(/e/i);
  if (e < 0) return s;
  const negative = s.startsWith('-');
  const mantissa = s.slice(negative ? 1 : 0, e);
  const exponent = Number(s.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  const point = (dot < 0 ? mantissa.length : dot) + exponent;
  let out: string;
  if (point <= 0) out = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (negative ? '-' : '') + out.replace(/^0+(?=\d)/, '');
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

type CellLike = { value: unknown; numFmt?: string };

function cellText(cell: CellLike, facts: WorkbookFacts): string {
  const v = cell.value;
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return isDateFormat(cell.numFmt) ? serialToIso(v, facts.date1904) : plainNumber(v);
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (v instanceof Date) {
    // exceljs converted with its own reading of the date system
    const shift = facts.date1904 && !facts.exceljs1904 ? 1462 * DAY_MS : 0;
    return isoDate(new Date(v.getTime() + shift));
  }
  if (typeof v === 'object') {
    const o = v as { richText?: { text?: string }[]; result?: unknown; formula?: string; sharedFormula?: string; error?: string; text?: unknown };
    if (Array.isArray(o.richText)) return o.richText.map((r) => r.text ?? '').join('');
    if ('formula' in o || 'sharedFormula' in o) {
      // the cached result; a formula without one stays empty (formulas are never evaluated)
      const r = o.result;
      if (r === undefined || r === null) return '';
      if (typeof r === 'object' && r !== null && 'error' in r) return String((r as { error: unknown }).error);
      return cellText({ value: r, numFmt: cell.numFmt }, facts);
    }
    if (typeof o.error === 'string') return o.error;
    if (o.text !== undefined) return cellText({ value: o.text, numFmt: cell.numFmt }, facts);
  }
  return String(v);
}

export function csvField(s: string): string {
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The parts of exceljs's streaming WorkbookReader this module drives (exceljs 4.4.0, pinned). */
interface ReaderParts {
  model: { sheets: WorkbookFacts['sheets'] };
  properties: { model: { date1904: boolean } };
  _parseRels(stream: Readable): Promise<void>;
  _parseSharedStrings(stream: Readable): AsyncGenerator<unknown>;
  _parseStyles(stream: Readable): Promise<void>;
  _parseWorksheet(stream: Readable, sheetNo: string): Generator<{ eventType: string; value: unknown }>;
}

/**
 * exceljs's own walk of the archive (one streaming pass in stored order) is unreliable: when the
 * worksheets are stored before the shared strings and styles, as Excel and exceljs's own writer
 * often store them, it parks them in temporary files and, from run to run, loses the parts after
 * them (exceljs issues #683 and #3064): cells then read as `{ sharedString: n }`, dates as plain
 * numbers, sheets go missing. So the parts are handed to its readers from our own reading of the
 * archive (yauzl, through the central directory, already inflated once under the limits by
 * inspectWorkbook) in the order they need: relationships, shared strings, styles, then each
 * worksheet. The sheet list and date system are ours too: exceljs fails on some workbook.xml parts.
 */
async function* worksheetReaders(reader: ExcelJS.stream.xlsx.WorkbookReader, zip: OpenZip, facts: WorkbookFacts): AsyncGenerator<unknown> {
  const r = reader as unknown as ReaderParts;
  const part = (name: string) => zip.entries.find((e) => e.name === name);
  r.model = { sheets: facts.sheets };
  r.properties = { model: { date1904: facts.exceljs1904 } };
  const rels = part('xl/_rels/workbook.xml.rels');
  if (rels) await r._parseRels(await zip.reread(rels));
  const strings = part('xl/sharedStrings.xml');
  if (strings) for await (const _ of r._parseSharedStrings(await zip.reread(strings)));
  const styles = part('xl/styles.xml');
  if (styles) await r._parseStyles(await zip.reread(styles));
  for (const entry of zip.entries) {
    const sheetNo = /^xl\/worksheets\/sheet(\d+)\.xml$/.exec(entry.name)?.[1];
    if (sheetNo === undefined) continue;
    for (const event of r._parseWorksheet(await zip.reread(entry), sheetNo)) if (event.eventType === 'worksheet') yield event.value;
  }
}

/** Every sheet of the workbook written as CSV into workDir. */
export async function workbookToCsv(file: string, workDir: string, limits: Limits, budget: InflateBudget, deadline: Deadline): Promise<SheetCsv[]> {
  const zip = await openZip(file, limits, budget, deadline);
  let facts: WorkbookFacts;
  try {
    if (zipKind(zip) !== 'xlsx') throw new FileError('FILE_DAMAGED', 'The workbook is damaged: it has no workbook part.');
    facts = await inspectWorkbook(file, zip);
  } catch (error) {
    zip.close();
    throw error;
  }
  const sheets: SheetCsv[] = [];
  // never iterated itself: worksheetReaders hands it the parts (its own walk of `file` is the unreliable one)
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'cache',
    entries: 'ignore',
  });
  try {
    let emitted = 0;
    for await (const sheetReader of worksheetReaders(reader, zip, facts)) {
      const sr = sheetReader as unknown as { name?: string; state?: string } & AsyncIterable<ExcelJS.Row>;
      const name = sr.name ?? `Sheet${emitted + 1}`;
      const position = facts.sheets.findIndex((s) => s.name === name);
      const csvPath = path.join(workDir, `sheet-${emitted}.csv`);
      emitted++;
      const out = createWriteStream(csvPath);
      let written = 0;
      let nextRow = 1;
      let buffered: string[] = [];
      const flush = async () => {
        if (buffered.length === 0) return;
        const ok = out.write(buffered.join(''));
        buffered = [];
        if (!ok) await new Promise<void>((r) => out.once('drain', () => r()));
      };
      try {
        for await (const row of sr) {
          const cells: string[] = [];
          row.eachCell({ includeEmpty: false }, (cell, col) => {
            const text = cellText(cell as unknown as CellLike, facts);
            if (Buffer.byteLength(text) > limits.maxFieldBytes) {
              throw new FileError('FIELD_TOO_LARGE', `A cell of sheet "${name}" (row ${row.number}) is longer than ${formatBytes(limits.maxFieldBytes)}.`);
            }
            cells[col - 1] = text;
          });
          let last = cells.length - 1;
          while (last >= 0 && (cells[last] ?? '').trim() === '') last--;
          if (last < 0) continue;
          // rows keep their numbers: sheet row n is CSV line n - 1 (empty rows become blank lines)
          if (row.number > nextRow) buffered.push('\n'.repeat(Math.min(row.number - nextRow, 1_048_576)));
          const line: string[] = [];
          for (let i = 0; i <= last; i++) line.push(csvField(cells[i] ?? ''));
          buffered.push(`${line.join(',')}\n`);
          nextRow = row.number + 1;
          written++;
          if (buffered.length >= 500) {
            deadline.check();
            await flush();
          }
        }
        await flush();
      } finally {
        await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      }
      sheets.push({
        name,
        index: position >= 0 ? position : emitted - 1,
        hidden: sr.state === 'hidden' || sr.state === 'veryHidden',
        csvPath,
        rows: written,
        dateSystem: facts.date1904 ? 1904 : 1900,
      });
    }
  } catch (error) {
    if (error instanceof FileError) throw error;
    throw new FileError('FILE_DAMAGED', `The workbook is damaged or not a valid .xlsx file (${String((error as Error)?.message ?? error).slice(0, 120)}).`);
  } finally {
    zip.close();
  }
  return sheets.sort((a, b) => a.index - b.index);
}
