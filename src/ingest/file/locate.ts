// The reader's pipeline: sniff the bytes, open containers (gzip, tar, zip), convert workbooks
// sheet by sheet, clean the text, and locate the table; where an archive or workbook offers
// several tables, the detail table is chosen and the others are listed with why they were not.
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { computeHeaderHash } from '../headerHash.ts';
import {
  type LocateInput,
  type LocatedTable,
  REMOVED_CAP,
  type SheetCandidate,
} from '../fileTypes.ts';
import { extractTar, gunzipTo, openZip } from './containers.ts';
import { combineTables, type Dialect, SHEET_DIALECT } from './combine.ts';
import { type DelimitedTable, locateDelimited } from './delimited.ts';
import {
  Deadline,
  FileError,
  type FileErrorCode,
  InflateBudget,
  type Limits,
  resolveLimits,
} from './limits.ts';
import { readHead, refuseEncryptedOle2, sniffBytes, SUPPORTED } from './sniff.ts';
import { buildHeader, profileOf } from './table.ts';
import { decodeRef } from './sheetXml.ts';
import { prepareText, type TextSource } from './text.ts';
import { notAStatement } from './vocabulary.ts';
import type { SheetCsv } from './workbook.ts';

// the workbook readers (SheetJS for .xls above all) take time to load: a thread loads them when a
// file is a workbook or an archive, not for every delimited text file
const workbookReader = () => import('./workbook.ts');
const legacyWorkbookReader = () => import('./legacyWorkbook.ts');
// pdfjs-dist likewise: loaded for a PDF only
const pdfReader = () => import('./pdfCsv.ts');

/** A located table and how good a table it is (to choose among sheets and archive members). */
type Located = Omit<LocatedTable, 'headerHash'> & { score: number };

interface Context {
  workDir: string;
  limits: Limits;
  deadline: Deadline;
  budget: InflateBudget;
  seq: number;
  /** the text encoding the uploader named, read instead of the detected one */
  encoding?: string | undefined;
}

const MAX_NESTING = 2;
/**
 * The widest table read: DuckDB's reader runs out of memory from about 16,000 columns (Excel's
 * 16,384 included) and spent minutes on 100,000, while statements have tens of columns.
 */
export const MAX_COLUMNS = 10_000;
const MAX_MEMBERS = 50;
/** names of sheets and archive members that summarise rather than detail */
const SUMMARY_NAME = /summary|overview|recap|totals?\b|cover|readme|read me|info\b|notes?\b/i;
/** errors that disqualify one sheet or archive member without failing the whole upload */
const CANDIDATE_ERRORS: ReadonlySet<FileErrorCode> = new Set([
  'FILE_EMPTY',
  'FILE_NO_DATA',
  'HEADER_NOT_FOUND',
  'FILE_UNSUPPORTED_FORMAT',
  'FILE_IS_HTML',
  'FILE_PDF_NO_TEXT',
  'FILE_INTERLEAVED_TOTALS',
]);

export async function locate(
  input: LocateInput,
  internal: Partial<Limits> = {},
): Promise<LocatedTable> {
  const limits = resolveLimits(input.limits, internal);
  const ctx: Context = {
    workDir: input.workDir,
    limits,
    deadline: new Deadline(limits.timeBudgetMs),
    budget: new InflateBudget(limits),
    seq: 0,
    encoding: input.encoding,
  };
  const { score: _score, ...located } = await locatePath(input.sourcePath, input.fileName, ctx, 0);
  if (located.header.length > MAX_COLUMNS) {
    throw new FileError(
      'FILE_TOO_MANY_COLUMNS',
      `The table has ${located.header.length.toLocaleString('en-US')} columns; at most ${MAX_COLUMNS.toLocaleString('en-US')} are read: this is no statement table, or export it with the columns it needs.`,
    );
  }
  // the table read is a catalogue export, a usage report without amounts or a bank statement:
  // refused, never left waiting for a mapping that cannot name an earnings column
  if (located.dataRecords > 0) {
    const numeric = profileOf(
      buildHeader(located.header),
      located.sampleRows.map((cells) => ({ cells, line: 0 })),
    ).numericColumns;
    const why = notAStatement(located.header, numeric);
    if (why) throw new FileError('FILE_NOT_A_STATEMENT', why);
  }
  return { ...located, headerHash: computeHeaderHash(located.header) };
}

function fromDelimited(t: DelimitedTable): Omit<DelimitedTable, 'records' | 'lines'> {
  const { records: _records, lines: _lines, ...rest } = t;
  return rest;
}

async function locatePath(
  file: string,
  name: string,
  ctx: Context,
  depth: number,
): Promise<Located> {
  const size = statSync(file).size;
  if (size === 0) throw new FileError('FILE_EMPTY', 'The file is empty (0 bytes).');
  // a file parsed whole (up to `headBytes`) is read once, here, in this thread: each read of it
  // after (its kind, its encoding, its bytes, its cells) was a trip to the thread pool, which
  // waits there behind the other threads' DuckDB queries
  const bytes = size <= ctx.limits.headBytes ? readFileSync(file) : undefined;
  const head = bytes ? bytes.subarray(0, 65536) : await readHead(file, 65536);
  const kind = sniffBytes(head);
  const n = ctx.seq++;
  if (kind === 'ole2') return locateLegacyWorkbook(file, name, ctx);
  if ((kind === 'gzip' || kind === 'zip' || kind === 'tar') && depth >= MAX_NESTING) {
    throw new FileError(
      'FILE_ARCHIVE_TOO_DEEP',
      `The archive holds archives inside archives inside archives; upload the statement file itself (or an archive of it). ${SUPPORTED}`,
    );
  }
  if (kind === 'gzip') {
    const out = path.join(ctx.workDir, `gunzip-${n}`);
    await gunzipTo(file, out, ctx.budget, ctx.deadline);
    const inner = name.replace(/\.t?gz$/i, '');
    // a .tar.gz is one archive: its members sit at the depth of the gzip's
    if (sniffBytes(await readHead(out, 512)) === 'tar')
      return { ...(await locateTar(out, ctx, depth, n)), container: 'gzip' };
    return { ...(await locatePath(out, inner, ctx, depth + 1)), container: 'gzip' };
  }
  if (kind === 'tar') return { ...(await locateTar(file, ctx, depth, n)), container: 'tar' };
  if (kind === 'pdf') return locatePdf(file, ctx, n);
  if (kind === 'zip') return locateZip(file, name, ctx, depth, n);
  return locateText({ path: file, bytes }, name, ctx, n);
}

/** A legacy (.xls) workbook, unless it is encrypted. */
async function locateLegacyWorkbook(file: string, name: string, ctx: Context): Promise<Located> {
  await refuseEncryptedOle2(file);
  const { legacyWorkbookToCsv } = await legacyWorkbookReader();
  return {
    ...(await locateWorkbook(
      await legacyWorkbookToCsv(file, ctx.workDir, ctx.limits, ctx.deadline),
      'xls',
      ctx,
    )),
    workbook: { path: file, name },
  };
}

/** A zip: an .xlsx workbook, or an archive whose members are extracted and chosen among. */
async function locateZip(
  file: string,
  name: string,
  ctx: Context,
  depth: number,
  n: number,
): Promise<Located> {
  const { workbookToCsv, zipKind } = await workbookReader();
  const zip = await openZip(file, ctx.limits, ctx.budget, ctx.deadline);
  let members: { name: string; path: string }[];
  try {
    if (zipKind(zip) === 'xlsx') {
      zip.close();
      return {
        ...(await locateWorkbook(
          await workbookToCsv(file, ctx.workDir, ctx.limits, ctx.budget, ctx.deadline),
          'xlsx',
          ctx,
        )),
        workbook: { path: file, name },
      };
    }
    members = [];
    for (const e of zip.entries) {
      const base = e.name.split('/').pop() ?? '';
      if (
        e.name.endsWith('/') ||
        e.name.startsWith('__MACOSX/') ||
        base.startsWith('.') ||
        base === ''
      )
        continue;
      // refused rather than cut short: the files past the cap (a month or store each) would go unread and unnamed
      if (members.length >= MAX_MEMBERS) {
        throw new FileError(
          'FILE_TOO_LARGE_DECOMPRESSED',
          `The archive holds more than ${MAX_MEMBERS} files; at most ${MAX_MEMBERS} are read from one archive: upload it in parts.`,
        );
      }
      const out = path.join(ctx.workDir, `zip-${n}-${members.length}`);
      await zip.extract(e, out);
      members.push({ name: e.name, path: out });
    }
  } finally {
    zip.close();
  }
  return { ...(await chooseMember(members, ctx, depth)), container: 'zip' };
}

/** Delimited text, cleaned first (encoding, line breaks). */
async function locateText(
  file: TextSource,
  name: string,
  ctx: Context,
  n: number,
): Promise<Located> {
  const clean = await prepareText(
    file,
    ctx.workDir,
    `text-${n}.csv`,
    ctx.deadline,
    ctx.limits.maxFieldBytes,
    { encoding: ctx.encoding },
  );
  const table = await locateDelimited(clean, ctx.limits, ctx.deadline);
  const atLimit = await linesAtSheetLimit(clean.path, table);
  const notes: LocatedTable['readerNotes'] = {
    ...(atLimit ? { rowLimitSheets: [path.basename(name)] } : {}),
    ...(clean.uncertainEncoding ? { uncertainEncoding: clean.uncertainEncoding } : {}),
  };
  return {
    container: 'none',
    format: 'delimited',
    encoding: clean.encoding,
    sheet: null,
    archiveEntry: null,
    csvPath: clean.path,
    ...fromDelimited(table),
    ...(Object.keys(notes).length > 0 ? { readerNotes: notes } : {}),
  };
}

/**
 * A PDF's text layer as one table (pdfCsv.ts), located as delimited text is: its preamble, header,
 * repeated headers and footer totals found the same way. The page headers and footers and the
 * subtotals between detail rows, kept out of the CSV, are listed first among the removed rows.
 */
async function locatePdf(file: string, ctx: Context, n: number): Promise<Located> {
  const { pdfToCsv } = await pdfReader();
  const pdf = await pdfToCsv(file, path.join(ctx.workDir, `pdf-${n}.csv`), ctx.deadline);
  const table = await locateDelimited(
    { path: pdf.csvPath, encoding: 'utf-8', sepDelimiter: null, newline: '\n' },
    ctx.limits,
    ctx.deadline,
    ',',
  );
  return {
    container: 'none',
    format: 'pdf',
    encoding: 'utf-8',
    sheet: null,
    archiveEntry: null,
    csvPath: pdf.csvPath,
    ...fromDelimited(table),
    removed: [...pdf.removed, ...table.removed].slice(0, REMOVED_CAP),
    removedTotal: pdf.removed.length + table.removedTotal,
  };
}

async function locateTar(file: string, ctx: Context, depth: number, n: number): Promise<Located> {
  const members = await extractTar(
    file,
    path.join(ctx.workDir, `tar-${n}`),
    ctx.limits,
    ctx.deadline,
  );
  return chooseMember(
    members.map((m) => ({ name: m.name, path: m.path })),
    ctx,
    depth,
  );
}

/** Excel's last row: a sheet (or a sheet saved as text) that reaches it was probably cut off there. */
export const EXCEL_MAX_ROWS = 1_048_576;

/**
 * Whether delimited text has exactly Excel's number of lines: the file reader's scan counted them;
 * else (a file read whole from its head sample) counted here (one read of the file) when its
 * records come near it (a line break inside quotes makes a record of several lines).
 */
async function linesAtSheetLimit(file: string, table: DelimitedTable): Promise<boolean> {
  if (table.lines !== undefined) return table.lines === EXCEL_MAX_ROWS;
  const records =
    table.headerLine + 1 + table.dataRecords + table.footerRecords + table.removedTotal;
  if (records < EXCEL_MAX_ROWS * 0.9 || records > EXCEL_MAX_ROWS * 1.1) return false;
  let lines = 0;
  let last = 0x0a;
  for await (const chunk of createReadStream(file, {
    highWaterMark: 1 << 20,
  }) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) lines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
  }
  // a last line without its line break is a line too
  return lines + (last === 0x0a ? 0 : 1) === EXCEL_MAX_ROWS;
}

const withNotes = (readerNotes: LocatedTable['readerNotes']) =>
  readerNotes ? { readerNotes } : {};

/** The reader's notes (LocatedTable.readerNotes) of the sheets read. */
export function sheetNotes(
  read: readonly Pick<SheetCsv, 'name' | 'lastRow' | 'hiddenRows'>[],
): LocatedTable['readerNotes'] {
  const rowLimitSheets = read.filter((s) => s.lastRow === EXCEL_MAX_ROWS).map((s) => s.name);
  const hiddenRows = read.reduce((n, s) => n + (s.hiddenRows ?? 0), 0);
  if (rowLimitSheets.length === 0 && hiddenRows === 0) return undefined;
  return {
    ...(rowLimitSheets.length > 0 ? { rowLimitSheets } : {}),
    ...(hiddenRows > 0 ? { hiddenRows } : {}),
  };
}

interface Candidate<T> {
  name: string;
  rows: number;
  value: T | null;
  score: number;
  dataRecords: number;
  preferred: boolean;
  error: FileError | null;
  skipped?: string;
}

/** The detail table among several: not a summary by name, then data rows, then the table's score. */
function choose<T>(
  candidates: Candidate<T>[],
  what: string,
): { chosen: Candidate<T>; list: SheetCandidate[] } {
  const usable = candidates.filter((c) => c.value !== null);
  if (usable.length === 0) {
    const errors = candidates.map((c) => c.error).filter((e): e is FileError => e !== null);
    const headerless = errors.find(
      (e) => e.errorCode === 'HEADER_NOT_FOUND' || e.errorCode === 'FILE_INTERLEAVED_TOTALS',
    );
    if (headerless) throw headerless;
    const other = errors.find(
      (e) => e.errorCode !== 'FILE_NO_DATA' && e.errorCode !== 'FILE_EMPTY',
    );
    if (other) throw other;
    throw new FileError('FILE_NO_DATA', `No ${what} of the file holds a table.`);
  }
  const pool = usable.some((c) => c.preferred) ? usable.filter((c) => c.preferred) : usable;
  let chosen = pool[0]!;
  for (const c of pool) {
    const better =
      (c.dataRecords > 0 ? 1 : 0) - (chosen.dataRecords > 0 ? 1 : 0) ||
      c.score - chosen.score ||
      c.dataRecords - chosen.dataRecords;
    if (better > 0) chosen = c;
  }
  const list = candidates.map((c) => {
    const entry: SheetCandidate = { name: c.name, rows: c.rows, score: c.score };
    if (c !== chosen) entry.skipped = c.skipped ?? 'another table scored higher';
    return entry;
  });
  return { chosen, list };
}

async function tryLocate<T extends { score: number; dataRecords: number }>(
  name: string,
  rows: number,
  preferredFlag: boolean,
  skippedWhy: string | undefined,
  run: () => Promise<T>,
): Promise<Candidate<T>> {
  try {
    const value = await run();
    return {
      name,
      rows,
      value,
      score: value.score,
      dataRecords: value.dataRecords,
      preferred: preferredFlag,
      error: null,
      skipped: skippedWhy,
    };
  } catch (error) {
    if (error instanceof FileError && CANDIDATE_ERRORS.has(error.errorCode)) {
      return {
        name,
        rows,
        value: null,
        score: 0,
        dataRecords: 0,
        preferred: false,
        error,
        skipped: error.errorCode,
      };
    }
    throw error;
  }
}

async function locateWorkbook(
  sheets: SheetCsv[],
  format: 'xlsx' | 'xls',
  ctx: Context,
): Promise<Located> {
  const candidates: Candidate<DelimitedTable>[] = [];
  for (const s of sheets) {
    if (s.rows === 0) {
      candidates.push({
        name: s.name,
        rows: 0,
        value: null,
        score: 0,
        dataRecords: 0,
        preferred: false,
        error: new FileError('FILE_NO_DATA', `Sheet "${s.name}" is empty.`),
        skipped: 'empty',
      });
      continue;
    }
    const summary = SUMMARY_NAME.test(s.name);
    const why = summary ? 'summary sheet' : s.hidden ? 'hidden sheet' : undefined;
    candidates.push(
      await tryLocate(s.name, s.rows, !summary && !s.hidden, why, async () =>
        spreadMergedHeader(
          await locateDelimited(
            { path: s.csvPath, encoding: 'utf-8', sepDelimiter: null, newline: '\n' },
            ctx.limits,
            ctx.deadline,
            ',',
          ),
          s.merges ?? [],
        ),
      ),
    );
  }
  const { chosen, list } = choose(candidates, 'sheet');
  const joined = await joinSameLayout(candidates, chosen, list, sheets, format, ctx);
  if (joined) return joined;
  const sheet = sheets.find((s) => s.name === chosen.name)!;
  return {
    container: 'none',
    format,
    encoding: 'utf-8',
    sheet: { name: sheet.name, index: sheet.index, candidates: list },
    archiveEntry: null,
    csvPath: sheet.csvPath,
    ...fromDelimited(chosen.value!),
    dateSystem: sheet.dateSystem ?? 1900,
    ...withNotes(sheetNotes([sheet])),
  };
}

/**
 * A header cell merged across columns (`Net` over E1:F1, the currency's column under F) names
 * every column of the merge: Excel keeps the text in the top-left cell only, which left the other
 * columns without a name (and past the header's last name, unreadable). The columns after the
 * first take the name with a number, as a repeated name does (`Net (2)`).
 */
export function spreadMergedHeader(
  table: DelimitedTable,
  merges: readonly string[],
): DelimitedTable {
  const row = table.headerLine + 1;
  let names: string[] | null = null;
  for (const range of merges) {
    const [from, to] = range.split(':');
    const a = decodeRef(from ?? '');
    const b = decodeRef(to ?? '');
    if (!a || !b || a[0] !== row || b[1] <= a[1] || b[1] - a[1] > 50) continue;
    const current: string[] = names ?? [...table.header];
    const text = current[a[1]] ?? '';
    if (text === '') continue;
    for (let j = a[1] + 1; j <= b[1]; j++) {
      while (current.length <= j) current.push('');
      if (current[j] !== '') continue;
      let k = 2;
      while (current.includes(`${text} (${k})`)) k++;
      current[j] = `${text} (${k})`;
    }
    names = current;
  }
  if (!names) return table;
  while (names.length > 0 && names[names.length - 1] === '') names.pop();
  return { ...table, header: names };
}

/** The candidate list and names of parts read as one table: none of them is "skipped". */
function readTogether(
  list: SheetCandidate[],
  group: readonly { name: string }[],
): { candidates: SheetCandidate[]; combined: string[] } {
  const combined = group.map((c) => c.name);
  const names = new Set(combined);
  return {
    candidates: list.map((c) =>
      names.has(c.name) ? { name: c.name, rows: c.rows, score: c.score } : c,
    ),
    combined,
  };
}

/**
 * Sheets with the chosen sheet's header (a sheet per month or per store) hold one table between
 * them: read as one (combine.ts), in workbook order, unless they cannot be joined safely. Summary
 * and hidden sheets never join.
 */
async function joinSameLayout(
  candidates: Candidate<DelimitedTable>[],
  chosen: Candidate<DelimitedTable>,
  list: SheetCandidate[],
  sheets: SheetCsv[],
  format: 'xlsx' | 'xls',
  ctx: Context,
): Promise<Located | null> {
  const key = (t: DelimitedTable) => t.header.join('\u0000');
  const group = candidates.filter(
    (c) =>
      c.value !== null && c.preferred && c.dataRecords > 0 && key(c.value) === key(chosen.value!),
  );
  if (group.length < 2 || !group.includes(chosen)) return null;
  const parts = group.map((c) => ({
    name: c.name,
    csvPath: sheets.find((s) => s.name === c.name)!.csvPath,
    table: c.value!,
  }));
  const table = await combineTables(
    parts,
    path.join(ctx.workDir, `sheets-${ctx.seq++}.csv`),
    SHEET_DIALECT,
    ctx.limits,
    ctx.deadline,
  );
  if (!table) return null;
  const first = sheets.find((s) => s.name === group[0]!.name)!;
  return {
    container: 'none',
    format,
    encoding: 'utf-8',
    sheet: { name: first.name, index: first.index, ...readTogether(list, group) },
    archiveEntry: null,
    csvPath: table.path,
    ...fromDelimited(table.table),
    dateSystem: first.dateSystem ?? 1900,
    ...withNotes(sheetNotes(group.map((c) => sheets.find((s) => s.name === c.name)!))),
  };
}

async function chooseMember(
  entries: { name: string; path: string }[],
  ctx: Context,
  depth: number,
): Promise<Located> {
  // a member's name is shown (layout, flags) and stored: a NUL in it, which PostgreSQL stores
  // nowhere, becomes U+FFFD, as an invalid UTF-8 byte of a name does
  const members = entries.map((m) => ({ ...m, name: m.name.replaceAll('\0', '\uFFFD') }));
  const candidates: Candidate<Located>[] = [];
  for (const m of members) {
    const base = m.name.split('/').pop() ?? m.name;
    const summary = SUMMARY_NAME.test(base.replace(/\.[a-z0-9]+$/i, ''));
    candidates.push(
      await tryLocate(m.name, 0, !summary, summary ? 'summary file' : undefined, () =>
        locatePath(m.path, m.name, ctx, depth + 1),
      ),
    );
  }
  for (const c of candidates)
    if (c.value) c.rows = c.value.dataRecords + c.value.footerRecords + c.value.removedTotal + 1;
  const { chosen, list } = choose(candidates, 'file');
  const joined = await joinSameLayoutFiles(candidates, chosen, list, ctx);
  if (joined) return joined;
  return { ...chosen.value!, archiveEntry: { name: chosen.name, candidates: list } };
}

/** The line break of a clean text file (one kind throughout: the text cleaner rewrites mixed ones). */
async function newlineOf(file: string): Promise<Dialect['newline']> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(65536);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const lf = buf.subarray(0, bytesRead).indexOf(0x0a);
    return lf > 0 && buf[lf - 1] === 0x0d ? '\r\n' : '\n';
  } finally {
    await fh.close();
  }
}

/**
 * Files of an archive with the chosen file's header, format and dialect (a file per month or per
 * store) hold one table between them: read as one (combine.ts), in archive order, unless they
 * cannot be joined safely. Summary files never join; nor do files that are themselves joined
 * sheets or archives. Their encodings may differ (each is read as clean UTF-8 text), and so may
 * their line breaks: files that are all CRLF join as such, a mix is joined with LF throughout (as
 * the text cleaner writes a file of mixed line breaks).
 */
async function joinSameLayoutFiles(
  candidates: Candidate<Located>[],
  chosen: Candidate<Located>,
  list: SheetCandidate[],
  ctx: Context,
): Promise<Located | null> {
  const first = chosen.value!;
  // a file of joined sheets or an archive inside the archive never joins
  const single = (t: Located) => t.sheet?.combined === undefined && t.archiveEntry === null;
  const layout = (t: Located) =>
    JSON.stringify([t.header, t.format, t.delimiter, t.quote, t.dateSystem ?? 1900]);
  if (!chosen.preferred || !single(first)) return null;
  const wanted = layout(first);
  const group = candidates.filter(
    (c) =>
      c.value !== null &&
      c.preferred &&
      c.dataRecords > 0 &&
      single(c.value) &&
      layout(c.value) === wanted,
  );
  if (group.length < 2) return null;
  const newlines = await Promise.all(group.map((c) => newlineOf(c.value!.csvPath)));
  const dialect: Dialect = {
    delimiter: first.delimiter,
    quote: first.quote,
    newline: newlines.every((n) => n === '\r\n') ? '\r\n' : '\n',
  };
  const parts = group.map((c, i) => ({
    name: c.name,
    csvPath: c.value!.csvPath,
    table: c.value!,
    newline: newlines[i],
  }));
  const table = await combineTables(
    parts,
    path.join(ctx.workDir, `files-${ctx.seq++}.csv`),
    dialect,
    ctx.limits,
    ctx.deadline,
  );
  if (!table) return null;
  const encodings = [...new Set(group.flatMap((c) => c.value!.encoding.split('+')))];
  // several files read as one: no one workbook is the table's (original-excel is the upload)
  const { workbook: _first, readerNotes: _notes, ...firstTable } = group[0]!.value!;
  return {
    ...firstTable,
    encoding: encodings.join('+'),
    archiveEntry: { name: group[0]!.name, ...readTogether(list, group) },
    csvPath: table.path,
    ...fromDelimited(table.table),
    ...withNotes(memberNotes(group.map((c) => ({ name: c.name, located: c.value! })))),
  };
}

/**
 * The reader's notes of archive members read as one table, each member's kept: hidden rows summed,
 * and every member cut off at Excel's last row named, by its name in the archive (a text file) or
 * with the sheet (`jan.xlsx: Sales`).
 */
function memberNotes(
  members: readonly { name: string; located: Located }[],
): LocatedTable['readerNotes'] {
  const rowLimitSheets = members.flatMap(({ name, located }) =>
    (located.readerNotes?.rowLimitSheets ?? []).map((sheet) =>
      located.format === 'delimited' ? name : `${name}: ${sheet}`,
    ),
  );
  const hiddenRows = members.reduce((n, m) => n + (m.located.readerNotes?.hiddenRows ?? 0), 0);
  if (rowLimitSheets.length === 0 && hiddenRows === 0) return undefined;
  return {
    ...(rowLimitSheets.length > 0 ? { rowLimitSheets } : {}),
    ...(hiddenRows > 0 ? { hiddenRows } : {}),
  };
}
