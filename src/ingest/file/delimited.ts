// A clean UTF-8 delimited file to its located table. Only a head sample (and for a large file a
// tail sample) is split into cells, with csv-parse; the records in between are counted by the
// byte scanner, so a 1,000,000-row statement costs one pass of byte comparisons.
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import {
  REMOVED_CAP,
  SAMPLE_ROWS,
  type FooterTotal,
  type LocatedTable,
  type RemovedRow,
} from '../fileTypes.ts';
import { decideDateOrders, decideDecimalComma } from './cells.ts';
import { type Deadline, FileError, type Limits, formatBytes } from './limits.ts';
import { RecordScanner, type ScannedRecord } from './scan.ts';
import {
  buildHeader,
  filled,
  findHeader,
  footerTotal,
  type Header,
  type HeaderChoice,
  headerScoreForChoice,
  interleavedTotal,
  type Kind,
  kindOf,
  preambleValues,
  type Profile,
  profileBelow,
  type Rec,
  removedReason,
  trailerStart,
} from './table.ts';
import type { CleanText, Delimiter } from './text.ts';

export type DelimitedTable = Omit<
  LocatedTable,
  'container' | 'format' | 'encoding' | 'sheet' | 'archiveEntry' | 'csvPath' | 'headerHash'
> & {
  /** how good a table this is, to choose among sheets and archive members */
  score: number;
  /** records in the file */
  records: number;
  /** the file's lines (a last one without its line break included), when the whole file was scanned */
  lines?: number;
};

const DELIMITERS: readonly Delimiter[] = [',', ';', '\t', '|'];
const SNIFF_LINES = 300;
const PROFILE_ROWS = 1000;
/** the least head sample split into cells for a file larger than `headBytes` (it also holds a record of `maxFieldBytes`) */
const HEAD_SAMPLE_BYTES = 512 * 1024;

function countOutsideQuotes(line: string, d: string): number {
  const delimiter = d.charCodeAt(0);
  let n = 0;
  let inQuotes = false;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x22) inQuotes = !inQuotes;
    else if (c === delimiter && !inQuotes) n++;
  }
  return n;
}

/** The delimiter giving the same number of fields on the most lines (then the most fields). */
export function sniffDelimiter(text: string): Delimiter {
  const lines: string[] = [];
  let from = 0;
  while (lines.length < SNIFF_LINES && from < text.length) {
    let nl = text.indexOf('\n', from);
    if (nl < 0) nl = text.length;
    const line = text.slice(from, nl);
    if (line.trim() !== '') lines.push(line);
    from = nl + 1;
  }
  let best: { d: Delimiter; score: number } = { d: ',', score: 0 };
  for (const d of DELIMITERS) {
    const freq = new Map<number, number>();
    for (const line of lines) {
      const c = countOutsideQuotes(line, d);
      if (c > 0) freq.set(c, (freq.get(c) ?? 0) + 1);
    }
    let score = 0;
    for (const [count, f] of freq) score = Math.max(score, f + Math.min(count, 999) / 1000);
    if (score > best.score) best = { d, score };
  }
  return best.d;
}

/**
 * Tab files often carry quotes as literal text (CD Baby wraps barcodes in them; titles hold 12"
 * or "Live"): quoting stays on only while every quote in the sample wraps a whole field.
 */
export function quoteFor(text: string, delimiter: Delimiter): '"' | '' {
  if (delimiter !== '\t') return '"';
  let from = 0;
  let lines = 0;
  while (lines < SNIFF_LINES && from < text.length) {
    let nl = text.indexOf('\n', from);
    if (nl < 0) nl = text.length;
    const line = text.slice(from, nl).replace(/\r$/, '');
    from = nl + 1;
    lines++;
    if (!line.includes('"')) continue;
    for (const field of line.split('\t')) {
      if (!field.includes('"')) continue;
      if (field.length < 2 || !field.startsWith('"') || !field.endsWith('"')) return '';
      if (
        field
          .slice(1, -1)
          .split('""')
          .some((part) => part.includes('"'))
      )
        return '';
    }
  }
  return '"';
}

/** The clean text's bytes from `start` to `end`: those read already (a small file), else read. */
async function readRange(clean: CleanText, start: number, end: number): Promise<Buffer> {
  if (clean.bytes) return clean.bytes.subarray(start, end);
  const fh = await open(clean.path, 'r');
  try {
    const buf = Buffer.alloc(end - start);
    let done = 0;
    while (done < buf.length) {
      const { bytesRead } = await fh.read(buf, done, buf.length - done, start + done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return buf.subarray(0, done);
  } finally {
    await fh.close();
  }
}

function parseSegment(
  buf: Buffer,
  baseLine: number,
  delimiter: Delimiter,
  quote: '"' | '',
  newline: '\n' | '\r\n',
  maxFieldBytes: number,
): Rec[] {
  const options = csvOptions(delimiter, quote, newline, maxFieldBytes);
  let records: string[][];
  try {
    records = parse(buf, options) as string[][];
  } catch (error) {
    throw segmentError(error, baseLine, maxFieldBytes);
  }
  // each record's line comes from the byte scanner, which splits records as csv-parse does
  // (csv-parse's own `info` doubles its time); where the two disagree, csv-parse says
  const lines = scannedRecordLines(buf, baseLine, delimiter, quote, maxFieldBytes);
  if (lines.length === records.length)
    return records.map((cells, i) => ({ cells, line: lines[i]! }));
  return recordsWithParsedLines(buf, options, baseLine, maxFieldBytes);
}

/** How csv-parse splits a segment into records of cells, as they are. */
function csvOptions(
  delimiter: Delimiter,
  quote: '"' | '',
  newline: '\n' | '\r\n',
  maxFieldBytes: number,
) {
  return {
    delimiter,
    quote: quote === '"' ? '"' : false,
    escape: '"',
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: false,
    bom: false,
    record_delimiter: newline,
    max_record_size: maxFieldBytes,
  } as const;
}

/** csv-parse's error as the file's: a field too long, a quote never closed, or else damage. */
function segmentError(error: unknown, baseLine: number, maxFieldBytes: number): FileError {
  const e = error as { code?: string; lines?: number; message: string };
  const at = e.lines !== undefined ? ` near line ${baseLine + e.lines}` : '';
  if (e.code === 'CSV_MAX_RECORD_SIZE')
    return new FileError(
      'FIELD_TOO_LARGE',
      `A field${at} is longer than ${formatBytes(maxFieldBytes)}; it is not a statement table.`,
    );
  if (e.code === 'CSV_QUOTE_NOT_CLOSED')
    return new FileError(
      'FILE_DAMAGED',
      `A quoted field${at} is never closed: the file is damaged or cut short.`,
    );
  return new FileError(
    'FILE_DAMAGED',
    `The file cannot be read as delimited text${at}: ${e.message.slice(0, 200)}`,
  );
}

/** The line each record of the segment starts on, by the byte scanner; none when it fails. */
function scannedRecordLines(
  buf: Buffer,
  baseLine: number,
  delimiter: Delimiter,
  quote: '"' | '',
  maxFieldBytes: number,
): number[] {
  const lines: number[] = [];
  try {
    const scanner = new RecordScanner({
      delimiter: delimiter.charCodeAt(0),
      quote: quote === '"',
      maxRecordBytes: maxFieldBytes,
      baseLine,
      onRecord: (r) => lines.push(r.line),
    });
    scanner.push(buf);
    scanner.finish();
  } catch {
    lines.length = 0;
  }
  return lines;
}

/** The segment's records parsed again with csv-parse's `info`, each line counted from its bytes. */
function recordsWithParsedLines(
  buf: Buffer,
  options: ReturnType<typeof csvOptions>,
  baseLine: number,
  maxFieldBytes: number,
): Rec[] {
  let rows: { record: string[]; info: { bytes: number } }[];
  try {
    rows = parse(buf, { ...options, info: true }) as unknown as {
      record: string[];
      info: { bytes: number };
    }[];
  } catch (error) {
    throw segmentError(error, baseLine, maxFieldBytes);
  }
  const out: Rec[] = [];
  let line = baseLine;
  let prevEnd = 0;
  for (const row of rows) {
    out.push({ cells: row.record, line });
    const end = row.info.bytes;
    for (let i = buf.indexOf(0x0a, prevEnd); i >= 0 && i < end; i = buf.indexOf(0x0a, i + 1))
      line++;
    prevEnd = end;
  }
  return out;
}

interface Counts {
  data: number;
  footer: number;
  removed: RemovedRow[];
  removedTotal: number;
  footerTotals: FooterTotal[];
}

function remove(c: Counts, row: RemovedRow): void {
  c.removedTotal++;
  if (c.removed.length < REMOVED_CAP) c.removed.push(row);
}

/** The head sample: its bytes, where its last whole record ends, and how its records are split. */
interface HeadSample {
  head: Buffer;
  whole: boolean;
  sampleBytes: number;
  delimiter: Delimiter;
  quote: '"' | '';
  headEnd: number;
  headLines: number;
}

/** The records accounted so far: the counts, and the data rows sampled for the columns' shapes. */
class Tally {
  readonly counts: Counts = {
    data: 0,
    footer: 0,
    removed: [],
    removedTotal: 0,
    footerTotals: [],
  };
  readonly dataSample: Rec[] = [];

  constructor(private readonly names: readonly string[]) {}

  take(r: Rec): void {
    if (this.dataSample.length < PROFILE_ROWS) this.dataSample.push(r);
  }

  /** Counts each record as data, or removes it with its reason (`start`: where the trailer starts). */
  account(recs: readonly Rec[], kinds: readonly Kind[], start: number): void {
    const counts = this.counts;
    for (let i = 0; i < recs.length; i++) {
      const inTrailer = i >= start;
      const reason = removedReason(kinds[i]!, inTrailer);
      if (reason === null) {
        counts.data++;
        this.take(recs[i]!);
        continue;
      }
      remove(counts, { line: recs[i]!.line, reason, cells: recs[i]!.cells });
      if (inTrailer && reason !== 'blank' && reason !== 'repeated_header') counts.footer++;
      if (kinds[i] === 'total' || kinds[i] === 'number_only')
        counts.footerTotals.push(footerTotal(recs[i]!.cells, kinds[i]!, this.names));
    }
  }
}

/** What reading past the head sample found: the records, lines and where a second reader may start. */
interface BeyondHead {
  records: number;
  lines: number;
  splitOffset: number | undefined;
}

/** The head sample's table: everything the part of the file beyond it is read against. */
interface HeadTable {
  clean: CleanText;
  limits: Limits;
  size: number;
  sample: HeadSample;
  headRecs: Rec[];
  choice: HeaderChoice;
  header: Header;
  profile: Profile;
  afterHeader: Rec[];
  headKinds: Kind[];
  tally: Tally;
}

export async function locateDelimited(
  clean: CleanText,
  limits: Limits,
  deadline: Deadline,
  forced?: Delimiter,
): Promise<DelimitedTable> {
  const size = clean.bytes ? clean.bytes.length : (await stat(clean.path)).size;
  const sample = await readHeadSample(clean, limits, size, forced);
  deadline.check();
  const { delimiter, quote } = sample;
  const headRecs = parseSegment(
    sample.head.subarray(0, sample.headEnd),
    0,
    delimiter,
    quote,
    clean.newline,
    limits.maxFieldBytes,
  );
  const choice = chooseHeader(headRecs);
  const headerRec = headRecs[choice.index]!;
  const header = buildHeader(headerRec.cells);
  const afterHeader = headRecs.slice(choice.index + 1);
  // the table's shape comes from the rows right under the header, up to the first blank line,
  // so a summary block further down does not blur it (the same shape `findHeader` read the
  // summary block against when it chose this header over the summary's own)
  const profile = profileBelow(headRecs, choice.index);
  const tally = new Tally(header.names);
  for (const r of headRecs.slice(0, choice.index)) {
    remove(tally.counts, {
      line: r.line,
      reason: filled(r.cells).length === 0 ? 'blank' : 'preamble',
      cells: r.cells,
    });
  }
  const headKinds = afterHeader.map((r) => kindOf(r.cells, profile));
  const table: HeadTable = {
    ...{ clean, limits, size, sample, headRecs, choice, header, profile },
    ...{ afterHeader, headKinds, tally },
  };
  let beyond: BeyondHead | undefined;
  if (sample.whole) {
    const start = trailerStart(headKinds);
    interleavedTotal(afterHeader, headKinds, start);
    tally.account(afterHeader, headKinds, start);
  } else beyond = await accountBeyondHead(table, deadline);
  const { counts, dataSample } = tally;
  return {
    delimiter,
    quote,
    headerLine: headerRec.line,
    header: header.names,
    dataRecords: counts.data,
    footerRecords: counts.footer,
    removed: counts.removed,
    removedTotal: counts.removedTotal,
    preambleValues: preambleValues(headRecs.slice(0, choice.index)),
    footerTotals: counts.footerTotals,
    ...numberShapes(header.names, dataSample, delimiter),
    sampleRows: dataSample.slice(0, SAMPLE_ROWS).map((r) => r.cells),
    score: headerScoreForChoice(choice, counts.data, header.raw.length),
    records: headRecs.length + (beyond?.records ?? 0),
    ...(beyond?.lines !== undefined ? { lines: beyond.lines } : {}),
    ...(beyond?.splitOffset !== undefined ? { splitOffset: beyond.splitOffset } : {}),
  };
}

/**
 * The head sample: the whole file when it is small; a larger file is read from a head sample that
 * holds at least one record of the longest allowed size (splitting a sample into cells is the
 * costly part of locating a table), cut at its last record boundary: never inside a quoted field.
 */
async function readHeadSample(
  clean: CleanText,
  limits: Limits,
  size: number,
  forced: Delimiter | undefined,
): Promise<HeadSample> {
  const whole = size <= limits.headBytes;
  const sampleBytes = whole
    ? size
    : Math.min(limits.headBytes, Math.max(HEAD_SAMPLE_BYTES, limits.maxFieldBytes + 65536));
  let head = await readRange(clean, 0, sampleBytes);
  if (!whole) {
    const lastLf = head.lastIndexOf(0x0a);
    if (lastLf < 0)
      throw new FileError(
        'FIELD_TOO_LARGE',
        `The first line of the file is longer than ${formatBytes(sampleBytes)}; it is not a statement table.`,
      );
    head = head.subarray(0, lastLf + 1);
  }
  const headText = head.toString('utf8');
  const delimiter = clean.sepDelimiter ?? forced ?? sniffDelimiter(headText);
  const quote = quoteFor(headText, delimiter);
  const sample = { head, whole, sampleBytes, delimiter, quote, headEnd: head.length, headLines: 0 };
  const scanner = new RecordScanner({
    delimiter: delimiter.charCodeAt(0),
    quote: quote === '"',
    maxRecordBytes: limits.maxFieldBytes,
    onRecord: () => {},
  });
  scanner.push(head);
  if (whole) scanner.finish();
  else {
    sample.headEnd = scanner.boundary;
    sample.headLines = scanner.boundaryLine;
    if (sample.headEnd === 0)
      throw new FileError(
        'FIELD_TOO_LARGE',
        `The first record of the file is longer than ${formatBytes(sampleBytes)}; it is not a statement table.`,
      );
  }
  return sample;
}

/** The header row the head sample's records name their columns with, else why there is none. */
function chooseHeader(headRecs: readonly Rec[]): HeaderChoice {
  const choice = findHeader(headRecs);
  if (choice) return choice;
  if (headRecs.every((r) => filled(r.cells).length === 0))
    throw new FileError('FILE_NO_DATA', 'The file holds no data: only blank lines or empty cells.');
  throw new FileError(
    'HEADER_NOT_FOUND',
    'No header row was found: no row near the top names the columns (a file without a header, or records of several kinds, needs a format-specific reader).',
  );
}

/**
 * A file larger than its head sample: a summary table already in the head sample ends the data
 * there, otherwise the head is all data; the middle is counted by the scanner, and the tail sample
 * is parsed for the trailer.
 */
async function accountBeyondHead(table: HeadTable, deadline: Deadline): Promise<BeyondHead> {
  const { headKinds, afterHeader, tally, header } = table;
  const summaryAt = headKinds.indexOf('summary_header');
  const headTrailer =
    summaryAt >= 0 ? trailerStart(headKinds.slice(0, summaryAt + 1)) : headKinds.length;
  interleavedTotal(afterHeader, headKinds, headTrailer);
  tally.account(afterHeader, headKinds, headTrailer);
  const scan = await scanBeyondHead(table, deadline);
  const tailRecs = await readTail(table, scan);
  const counts = tally.counts;
  if (summaryAt >= 0) {
    // everything after a summary table's header is the summary
    // the summary rows of the middle are counted, not listed: their cells were never parsed
    for (const r of scan.middle)
      remove(counts, {
        line: r.line,
        reason: r.blank ? 'blank' : 'repeated_header',
        cells: r.blank ? [] : header.raw,
      });
    counts.footer += scan.middleCount - scan.middle.length;
    counts.removedTotal += scan.middleCount - scan.middle.length;
    tally.account(
      tailRecs,
      tailRecs.map(() => 'data' as Kind),
      0,
    );
  } else {
    for (const r of scan.middle) {
      const cells = r.blank ? [] : header.raw;
      remove(counts, { line: r.line, reason: r.blank ? 'blank' : 'repeated_header', cells });
    }
    counts.data += scan.middleCount - scan.middle.length;
    const tailKinds = tailRecs.map((r) => kindOf(r.cells, table.profile));
    const start = trailerStart(tailKinds);
    interleavedTotal(tailRecs, tailKinds, start);
    tally.account(tailRecs, tailKinds, start);
  }
  return { records: scan.records, lines: scan.lines, splitOffset: scan.splitOffset };
}

/** What the byte scanner found between the head sample and the tail sample. */
interface MiddleScan extends BeyondHead {
  /** the middle's blank and repeated-header records (the only ones it keeps) */
  middle: ScannedRecord[];
  middleCount: number;
  tailStart: number;
  tailLine: number;
}

/** Scans the file from the head sample's end: the middle counted, where the tail sample starts. */
async function scanBeyondHead(table: HeadTable, deadline: Deadline): Promise<MiddleScan> {
  const { clean, limits, size, sample, headRecs, choice } = table;
  const headerLine = readLineBytes(sample.head, headRecs, choice.index, sample.headEnd);
  const tailFrom = Math.max(sample.headEnd, size - limits.tailBytes);
  const scan: MiddleScan = {
    ...{ records: 0, lines: 0, splitOffset: undefined },
    ...{ middle: [], middleCount: 0, tailStart: -1, tailLine: 0 },
  };
  // where a second reader may start: the first record in the file's second half
  const half = size / 2;
  const scanner = new RecordScanner({
    delimiter: sample.delimiter.charCodeAt(0),
    quote: sample.quote === '"',
    maxRecordBytes: limits.maxFieldBytes,
    header: headerLine,
    baseOffset: sample.headEnd,
    baseLine: sample.headLines,
    onRecord: (r) => {
      if (scan.splitOffset === undefined && r.start >= half) scan.splitOffset = r.start;
      if (scan.tailStart >= 0) return;
      if (r.start >= tailFrom) {
        scan.tailStart = r.start;
        scan.tailLine = r.line;
        return;
      }
      scan.middleCount++;
      if (r.blank || r.headerEqual) scan.middle.push(r);
    },
  });
  if (clean.bytes) scanner.push(clean.bytes.subarray(sample.headEnd));
  else {
    for await (const chunk of createReadStream(clean.path, {
      start: sample.headEnd,
      highWaterMark: 4 * 1024 * 1024,
    })) {
      deadline.check();
      scanner.push(chunk as Buffer);
    }
  }
  scanner.finish();
  scan.records = scanner.records;
  scan.lines = scanner.lines;
  return scan;
}

/** The tail sample's records, split into cells (none when the scan reached no tail). */
async function readTail(table: HeadTable, scan: MiddleScan): Promise<Rec[]> {
  if (scan.tailStart < 0) return [];
  const { clean, limits, size, sample } = table;
  return parseSegment(
    await readRange(clean, scan.tailStart, size),
    scan.tailLine,
    sample.delimiter,
    sample.quote,
    clean.newline,
    limits.maxFieldBytes,
  );
}

/** Each column's decimal comma and date order, decided from the sampled data rows. */
function numberShapes(
  names: readonly string[],
  dataSample: readonly Rec[],
  delimiter: Delimiter,
): Pick<DelimitedTable, 'decimalComma' | 'dateOrder'> {
  const columns = names.map((_, j) => dataSample.map((r) => r.cells[j] ?? ''));
  const decimal = decideDecimalComma(columns, delimiter);
  const decimalComma: Record<string, boolean> = Object.create(null);
  decimal.forEach((v, j) => {
    if (v !== null && names[j]) decimalComma[names[j]!] = v;
  });
  const europeanLean = decimal.some((v) => v === true) || delimiter === ';';
  const orders = decideDateOrders(columns, names, europeanLean);
  const dateOrder: Record<string, 'MDY' | 'DMY' | 'YMD'> = Object.create(null);
  orders.forEach((v, j) => {
    if (v !== null && names[j]) dateOrder[names[j]!] = v;
  });
  return { decimalComma, dateOrder };
}

/** The header record's bytes without its line break, to find repeated header lines by byte equality. */
function readLineBytes(head: Buffer, recs: readonly Rec[], index: number, headEnd: number): Buffer {
  // records are contiguous: find the header's byte range from the physical lines
  const startLine = recs[index]!.line;
  const endLine = index + 1 < recs.length ? recs[index + 1]!.line : -1;
  let pos = 0;
  let line = 0;
  while (line < startLine) {
    pos = head.indexOf(0x0a, pos) + 1;
    line++;
  }
  let end = headEnd;
  if (endLine >= 0) {
    end = pos;
    while (line < endLine) {
      end = head.indexOf(0x0a, end) + 1;
      line++;
    }
  }
  let stop = end;
  if (head[stop - 1] === 0x0a) stop--;
  if (head[stop - 1] === 0x0d) stop--;
  return head.subarray(pos, stop);
}
