// Sheets of one workbook, or files of one archive, that hold one table between them (a sheet or
// file per month, per store, per territory, each with the same header) are read as one table: the
// first part's preamble and header, then every part's data rows in order, then every part's
// trailer (totals, notes), as one delimited file, located again like any other. The combined file
// is the table's `single` variant, so every row's source_row still points at a line one can read.
import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { stat } from 'node:fs/promises';
import { type FooterTotal, REMOVED_CAP, type RemovedRow } from '../fileTypes.ts';
import { readAmount } from '../amounts.ts';
import { addDecimals } from '../../decimal.ts';
import { type DelimitedTable, locateDelimited } from './delimited.ts';
import type { Deadline, Limits } from './limits.ts';
import { RecordScanner } from './scan.ts';
import type { Delimiter } from './text.ts';

/** What joining needs of a part's located table. */
type PartTable = Pick<
  DelimitedTable,
  'header' | 'headerLine' | 'dataRecords' | 'removed' | 'removedTotal' | 'footerTotals'
>;

export interface TablePart {
  /** the sheet's or archive member's name */
  name: string;
  /** the part as clean UTF-8 text in the delimiter and quoting every part shares */
  csvPath: string;
  table: PartTable;
  /** its line break when it is not the dialect's: a clean text's CRs all end lines (text.ts), so CRLF becomes LF by dropping them */
  newline?: Dialect['newline'];
}

/** How every part is written: a workbook reader's sheets are comma-delimited, `"`-quoted, LF. */
export interface Dialect {
  delimiter: Delimiter;
  quote: '"' | '';
  newline: '\n' | '\r\n';
}

export const SHEET_DIALECT: Dialect = { delimiter: ',', quote: '"', newline: '\n' };

/** Where a part's header record ends and its trailer (first footer or summary row) starts. */
interface Cuts {
  afterHeader: number;
  trailer: number;
  size: number;
}

async function cutsOf(
  part: TablePart,
  dialect: Dialect,
  limits: Limits,
  deadline: Deadline,
): Promise<Cuts | null> {
  const { table } = part;
  // the trailer's first row is in the removed list unless the list was capped before it
  if (table.removed.length < table.removedTotal) return null;
  const trailerRows = table.removed
    .filter((r) => r.line > table.headerLine && (r.reason === 'footer' || r.reason === 'summary'))
    .map((r) => r.line);
  const trailerLine = trailerRows.length > 0 ? Math.min(...trailerRows) : -1;
  const size = (await stat(part.csvPath)).size;
  let afterHeader = -1;
  let trailer = size;
  const scanner = new RecordScanner({
    delimiter: dialect.delimiter.charCodeAt(0),
    quote: dialect.quote === '"',
    maxRecordBytes: limits.maxFieldBytes,
    onRecord: (r) => {
      if (r.line === table.headerLine) afterHeader = r.end;
      if (r.line === trailerLine) trailer = r.start;
    },
  });
  for await (const chunk of createReadStream(part.csvPath, { highWaterMark: 4 * 1024 * 1024 })) {
    deadline.check();
    scanner.push(chunk as Buffer);
  }
  scanner.finish();
  if (afterHeader < 0 || (trailerLine >= 0 && trailer === size)) return null;
  return { afterHeader, trailer, size };
}

/** The bytes without their CRs (a clean text's CRs are all those of CRLF line breaks). */
function withoutCR(buf: Buffer): Buffer {
  let cr = buf.indexOf(0x0d);
  if (cr < 0) return buf;
  const pieces: Buffer[] = [];
  let from = 0;
  for (; cr >= 0; cr = buf.indexOf(0x0d, from)) {
    pieces.push(buf.subarray(from, cr));
    from = cr + 1;
  }
  pieces.push(buf.subarray(from));
  return Buffer.concat(pieces);
}

async function copyRange(
  out: NodeJS.WritableStream,
  part: TablePart,
  start: number,
  end: number,
  newline: Dialect['newline'],
  deadline: Deadline,
): Promise<void> {
  if (end <= start) return;
  const dropCR = part.newline === '\r\n' && newline === '\n';
  let last = 0x0a;
  for await (const chunk of createReadStream(part.csvPath, {
    start,
    end: end - 1,
    highWaterMark: 4 * 1024 * 1024,
  })) {
    deadline.check();
    const buf = dropCR ? withoutCR(chunk as Buffer) : (chunk as Buffer);
    if (buf.length === 0) continue;
    last = buf[buf.length - 1]!;
    if (!out.write(buf)) await once(out, 'drain');
  }
  // each piece ends a line: the next part's rows never run into this one's last
  if (last !== 0x0a) out.write(newline);
}

/**
 * The parts' own totals as one: when each part has one total row (and no labelled measure), the
 * total of the whole is their sum, column by column; otherwise no total is checked rather than a
 * part's total against every part's rows. Balance lines are kept as they are.
 */
function mergeTotals(
  parts: readonly TablePart[],
  decimalComma: Record<string, boolean>,
): FooterTotal[] {
  const balances = parts.flatMap((p) => p.table.footerTotals.filter((t) => t.kind === 'balance'));
  const totals = parts.map((p) => p.table.footerTotals.filter((t) => t.kind === 'total'));
  if (!totals.every((t) => t.length === 1 && t[0]!.measure === undefined)) return balances;
  const values: Record<string, string> = {};
  for (const column of Object.keys(totals[0]![0]!.values)) {
    const dc = decimalComma[column] === true;
    const read = totals.map((t) => readAmount(t[0]!.values[column], dc));
    if (read.some((v) => v === null)) continue;
    const sum = read.reduce((a, b) => addDecimals(a!, b!), '0')!;
    values[column] = dc ? sum.replace('.', ',') : sum;
  }
  return [{ label: totals[0]![0]!.label, values, kind: 'total' }, ...balances];
}

/**
 * One table from parts with the same header (sheets in workbook order, archive members in archive
 * order; two or more), written to `out`; null when they cannot be joined safely (a trailer the
 * reader could not place, or a joined table whose rows or header are not the parts'), and the
 * best part is then read alone.
 */
export async function combineTables(
  parts: readonly TablePart[],
  out: string,
  dialect: Dialect,
  limits: Limits,
  deadline: Deadline,
): Promise<{ path: string; table: DelimitedTable } | null> {
  const cuts: Cuts[] = [];
  for (const s of parts) {
    const c = await cutsOf(s, dialect, limits, deadline);
    if (!c) return null;
    cuts.push(c);
  }
  const stream = createWriteStream(out);
  const done = once(stream, 'close');
  try {
    const { newline } = dialect;
    await copyRange(stream, parts[0]!, 0, cuts[0]!.trailer, newline, deadline);
    for (let i = 1; i < parts.length; i++)
      await copyRange(stream, parts[i]!, cuts[i]!.afterHeader, cuts[i]!.trailer, newline, deadline);
    for (let i = 0; i < parts.length; i++)
      await copyRange(stream, parts[i]!, cuts[i]!.trailer, cuts[i]!.size, newline, deadline);
  } finally {
    stream.end();
    await done;
  }
  const table = await locateDelimited(
    { path: out, encoding: 'utf-8', sepDelimiter: null, newline: dialect.newline },
    limits,
    deadline,
    dialect.delimiter,
  );
  const rows = parts.reduce((n, s) => n + s.table.dataRecords, 0);
  if (
    table.dataRecords !== rows ||
    table.quote !== dialect.quote ||
    table.header.join('\u0000') !== parts[0]!.table.header.join('\u0000')
  )
    return null;
  // the later parts' rows above their data (title, month, blank rows, their header) are not in
  // the joined file: listed as removed rows of no line, so nothing read goes unaccounted
  const above: RemovedRow[] = parts
    .slice(1)
    .flatMap((s) => [
      ...s.table.removed
        .filter((r) => r.line < s.table.headerLine)
        .map((r) => ({ ...r, line: -1 })),
      { line: -1, reason: 'repeated_header' as const, cells: s.table.header },
    ]);
  return {
    path: out,
    table: {
      ...table,
      removed: [...table.removed, ...above].slice(0, REMOVED_CAP),
      removedTotal: table.removedTotal + above.length,
      footerTotals: mergeTotals(parts, table.decimalComma),
    },
  };
}
