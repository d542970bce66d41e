// Legacy Excel (.xls, BIFF5/8) to one CSV per sheet, with SheetJS. The npm registry's `xlsx`
// (0.18.5) carries unfixed advisories (prototype pollution on crafted files, a ReDoS); this is
// `@e965/xlsx`, SheetJS CE 0.20.3 republished unchanged, where both are fixed. A BIFF file is
// read whole into memory, so its size is capped before parsing, and it runs, like every reader
// here, inside a worker thread with its own heap limit and time budget.
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as XLSX from '@e965/xlsx';
import { excelSerialToIso } from '../values.ts';
import { type Deadline, FileError, type Limits, formatBytes } from './limits.ts';
import { csvField } from './csvField.ts';
import type { SheetCsv } from './workbook.ts';
import { plainNumber } from '../../decimal.ts';

/** BIFF files are not compressed: this is their size on disk. */
export const MAX_LEGACY_WORKBOOK_BYTES = 100 * 1024 * 1024;

function cellText(cell: XLSX.CellObject | undefined, date1904: boolean): string {
  if (!cell || cell.v === undefined || cell.v === null) return '';
  if (cell.t === 'n' && typeof cell.v === 'number') {
    // a number formatted as a date is a date serial in the workbook's date system
    if (cell.z !== undefined && XLSX.SSF.is_date(cell.z))
      return excelSerialToIso(cell.v + (date1904 ? 1462 : 0)) ?? plainNumber(cell.v);
    return plainNumber(cell.v);
  }
  if (cell.t === 'b') return cell.v ? 'TRUE' : 'FALSE';
  if (cell.t === 'e') return '';
  // NUL, which a BIFF string may hold, is removed as a text file's is (PostgreSQL stores none), and
  // so is U+FEFF, which Excel shows as nothing
  return String(cell.v).replaceAll('\0', '').replaceAll('\uFEFF', '');
}

export async function legacyWorkbookToCsv(
  file: string,
  workDir: string,
  limits: Limits,
  deadline: Deadline,
): Promise<SheetCsv[]> {
  await refuseOversized(file, limits);
  const workbook = await readWorkbook(file);
  deadline.check();
  const sheets: SheetCsv[] = [];
  for (const [index, name] of workbook.SheetNames.entries()) {
    sheets.push(await writeSheetCsv(workbook, index, name, workDir, limits));
    deadline.check();
  }
  return sheets;
}

/** A BIFF file is read whole into memory: one larger than the cap is refused before parsing. */
async function refuseOversized(file: string, limits: Limits): Promise<void> {
  const size = (await stat(file)).size;
  if (size > Math.min(MAX_LEGACY_WORKBOOK_BYTES, limits.maxDecompressedBytes)) {
    throw new FileError(
      'FILE_TOO_LARGE_DECOMPRESSED',
      `The .xls workbook is ${formatBytes(size)}; at most ${formatBytes(MAX_LEGACY_WORKBOOK_BYTES)} are read. Save it as .xlsx or .csv.`,
    );
  }
}

async function readWorkbook(file: string): Promise<XLSX.WorkBook> {
  try {
    // formulas as their cached values, number formats kept to recognise dates, no HTML or rich text
    return XLSX.read(await readFile(file), {
      type: 'buffer',
      dense: true,
      cellFormula: false,
      cellHTML: false,
      cellNF: true,
      cellDates: false,
      cellStyles: false,
      bookVBA: false,
    });
  } catch (error) {
    throw new FileError(
      'FILE_DAMAGED',
      `The workbook is damaged or not a valid .xls file (${String((error as Error)?.message ?? error).slice(0, 120)}).`,
    );
  }
}

/** One sheet written as CSV into the work directory. */
async function writeSheetCsv(
  workbook: XLSX.WorkBook,
  index: number,
  name: string,
  workDir: string,
  limits: Limits,
): Promise<SheetCsv> {
  const date1904 = Boolean(workbook.Workbook?.WBProps?.date1904);
  const sheet = workbook.Sheets[name];
  const dense =
    (sheet as unknown as { '!data'?: (XLSX.CellObject | undefined)[][] })?.['!data'] ?? [];
  const lines: string[] = [];
  let written = 0;
  for (const row of dense) {
    const cells = Array.from(row ?? [], (c) => cellText(c, date1904));
    refuseLongCells(cells, name, limits.maxFieldBytes);
    const line = csvLine(cells);
    lines.push(line ?? '');
    if (line !== null) written++;
  }
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const csvPath = path.join(workDir, `xls-sheet-${index}.csv`);
  await writeFile(csvPath, lines.length > 0 ? `${lines.join('\n')}\n` : '');
  const hidden = (workbook.Workbook?.Sheets?.[index]?.Hidden ?? 0) !== 0;
  // (in a sheet's name NUL becomes U+FFFD: removed, it could name another sheet)
  return {
    name: name.replaceAll('\0', '\uFFFD'),
    index,
    hidden,
    csvPath,
    rows: written,
    dateSystem: date1904 ? 1904 : 1900,
  };
}

function refuseLongCells(cells: readonly string[], sheet: string, maxFieldBytes: number): void {
  for (const text of cells) {
    if (Buffer.byteLength(text) > maxFieldBytes)
      throw new FileError(
        'FIELD_TOO_LARGE',
        `A cell of sheet "${sheet}" is longer than ${formatBytes(maxFieldBytes)}.`,
      );
  }
}

/**
 * A row's cells as one CSV line, its empty trailing cells dropped; null for a row with nothing in
 * it (rows keep their numbers, as with .xlsx: an empty row becomes a blank line).
 */
function csvLine(cells: readonly string[]): string | null {
  let last = cells.length - 1;
  while (last >= 0 && (cells[last] ?? '').trim() === '') last--;
  if (last < 0) return null;
  return cells
    .slice(0, last + 1)
    .map((c) => csvField(c ?? ''))
    .join(',');
}
