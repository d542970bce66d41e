// The statement_ingest job: object in the store → located table → mapping → normalized Parquet
// in the store, with every dropped row accounted for. Idempotent: a retry or a second delivery
// writes a new version and swaps it in atomically, so rows are never doubled and a query never
// sees a statement half old and half new; a failed run leaves the previous rows in place.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, writeFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline as streamPipeline } from 'node:stream/promises';
import { withTransaction, type Queryable } from '../db/pool.ts';
import { writesAlong, type WritesAlong } from '../db/writesAlong.ts';
import { AppError } from '../errors.ts';
import type { Deps } from '../deps.ts';
import { type FooterMeasure, type LocatedTable, tableOf } from './fileTypes.ts';
import { findMappingForHeader, type FoundMapping } from './library.ts';
import { missingRequiredFields, type FieldSpec, type MappingFields } from './mappingFields.ts';
import { headerIn, usesDecimalComma } from './standardFields.ts';
import { csvField } from './file/csvField.ts';
import { readAmount } from './amounts.ts';
import { addDecimals } from '../decimal.ts';
import { firstMonthIndexSql, monthIndex, monthIndexSql } from '../periods.ts';
import {
  awaitMapping,
  failRun,
  finishRun,
  startRun,
  TRANSIENT_COMMIT,
  type RunStatement,
} from './statementStatus.ts';
import { periodOf, type Cadence } from './values.ts';
import type { NormalizeOutput } from './normalizeTypes.ts';
import { suggestMapping } from './suggest.ts';
import {
  autoMappedFlags,
  autoMapStatement,
  stillAutomatic,
  statementFacts,
  withFactVariables,
} from './autoMap/index.ts';
import {
  fxFlags,
  rateStatementAlong,
  ratedOf,
  rawValueUsdSql,
  type RatedStatement,
} from '../fx/rerate.ts';
import { recordActivity } from '../activity/record.ts';
import { unknownLookupMessage } from '../lookups/flags.ts';
import { normalizeLookupKey } from '../lookups/normalize.ts';
import { resolveSalesTypeLookups, resolveSourceLookups } from '../lookups/analyticsLookups.ts';
import { enqueueBlockRefresh } from '../catalog/blocks.ts';
import { stopwatch } from './stopwatch.ts';
import { deleteObjects, ObjectChangedError, SMALL_OBJECT_BYTES } from '../storage/objectStore.ts';

/** The months of a statement's cadence, in SQL over the statements table. */
const STMT_PERIOD = { year: 'stmt_year', period: 'stmt_period', cadence: 'stmt_cadence' };
const STMT_FIRST_MONTH_SQL = firstMonthIndexSql(STMT_PERIOD);
const STMT_LAST_MONTH_SQL = monthIndexSql(STMT_PERIOD);

export interface IngestResult {
  status: 'processed' | 'needs_mapping' | 'failed' | 'skipped';
  statementId: string;
  /** milliseconds per stage of a processed statement (logged by the job) */
  timings?: Record<string, number>;
}

/**
 * How often a running statement's progress reaches its record (`progress_done`), and how often
 * the normalizer's thread looks at DuckDB's progress meanwhile (a quarter of that). A test lowers it.
 */
export const progressSettings = { writeEveryMs: 1000 };

/**
 * The progress of one run's normalizing: the thread stores in `buffer` the rows below the header
 * (the total the commit writes, as row_count) and how many of them its written pass has read
 * (workers/normalize.ts, watchProgress); this writes them to the statement's record at most once
 * every `progressSettings.writeEveryMs`, one write at a time: done only upward and below the
 * total (done reaches the total with the run's commit alone), and only while the statement is
 * still this run's to process (processing, not deleted, the version this run started from).
 * stop() waits for a write under way: nothing is written after it.
 */
function progressReporter(deps: Deps, statementId: string, normalizedVersion: number) {
  const buffer = new SharedArrayBuffer(8);
  const shared = new Int32Array(buffer);
  const everyMs = Math.max(20, progressSettings.writeEveryMs);
  let written = 0;
  let writing: Promise<void> | null = null;
  let stopped = false;
  // the first write once the thread has counted the rows (the written pass begins) names the stage
  let writingStage = false;
  const timer = setInterval(() => {
    const total = Atomics.load(shared, 1);
    if (total <= 0) return;
    const done = Math.min(Atomics.load(shared, 0), total - 1);
    if (stopped || writing || (writingStage && done <= written)) return;
    writingStage = true;
    written = Math.max(written, done);
    writing = deps.pool
      .query(
        `UPDATE statements SET progress_done = $2, progress_total = $3, progress_stage = 'writing',
           progress_stage_at = CASE WHEN progress_stage = 'writing' THEN progress_stage_at ELSE clock_timestamp() END, updated_at = clock_timestamp()
         WHERE id = $1 AND status = 'processing' AND deleted_at IS NULL AND normalized_version = $4 AND progress_done <= $2 AND ${TRANSIENT_COMMIT}`,
        [statementId, written, total, normalizedVersion],
      )
      // progress is a courtesy: a failed write is not the run's failure
      .then(
        () => {},
        () => {},
      )
      .finally(() => {
        writing = null;
      });
  }, everyMs);
  timer.unref();
  return {
    buffer,
    /** how often the thread polls DuckDB */
    pollEveryMs: Math.max(20, Math.floor(everyMs / 4)),
    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      await writing;
    },
  };
}

/** Waits for every promise; then throws the first failure, if any. */
async function allSettledOrThrow(work: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

/**
 * Downloads an object: its size, and with `hash` its SHA-256 when it is small enough to be hashed
 * as it comes in; with `expectEtag` (the upload's as completed), bytes PUT again since are
 * UPLOAD_OBJECT_CHANGED. A small object (SMALL_OBJECT_BYTES, as the store announced it) is read
 * into memory and written with one synchronous write: the file reader reads it whole anyway
 * (docs/decisions/small-file-read-once.md), and a stream's opens and writes are each a hop to
 * libuv's pool behind the other threads' DuckDB queries. A larger one streams to its file.
 */
async function download(
  deps: Deps,
  key: string,
  file: string,
  options: { expectEtag?: string | null; signal?: AbortSignal; hash?: boolean } = {},
): Promise<{ size: number; sha256?: string }> {
  const { expectEtag, signal } = options;
  let object;
  try {
    object = await deps.store.getBody(key, { expectEtag });
  } catch (error) {
    if (error instanceof ObjectChangedError) {
      throw new AppError(
        'UPLOAD_OBJECT_CHANGED',
        'The uploaded file was replaced after the upload was completed (a PUT to its URL afterwards): it is not read. Upload the file again.',
      );
    }
    throw error;
  }
  let size = 0;
  let hash = options.hash ? createHash('sha256') : null;
  const take = (chunk: Buffer) => {
    size += chunk.length;
    if (size > SMALL_OBJECT_BYTES) hash = null;
    hash?.update(chunk);
  };
  if (object.size !== undefined && object.size <= SMALL_OBJECT_BYTES) {
    const chunks: Buffer[] = [];
    await streamPipeline(
      object.body,
      async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          take(chunk);
          chunks.push(chunk);
        }
      },
      { signal },
    );
    writeFileSync(file, Buffer.concat(chunks, size));
  } else {
    await streamPipeline(
      object.body,
      async function* (source: AsyncIterable<Buffer>) {
        for await (const chunk of source) {
          take(chunk);
          yield chunk;
        }
      },
      createWriteStream(file),
      { signal },
    );
  }
  return hash ? { size, sha256: hash.digest('hex') } : { size };
}

/** The file's SHA-256, read in 1 MiB pieces (each a short step of this thread's event loop). */
async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 }))
    hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const WORKBOOK_TYPES = {
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  xls: 'application/vnd.ms-excel',
} as const;

/**
 * The last segment of an unpacked workbook's object key: its file name (without the archive's
 * folders) percent-encoded, which the download decodes as its name; a name that is empty or would
 * make the key long is `workbook.<format>`.
 */
export function workbookKeyName(name: string, format: 'xlsx' | 'xls'): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const encoded = encodeURIComponent(base);
  return base.trim() === '' || base === '.' || base === '..' || encoded.length > 200
    ? `workbook.${format}`
    : encoded;
}

export async function upload(
  deps: Deps,
  key: string,
  file: string,
  contentType: string,
): Promise<void> {
  await deps.store.putFile(key, file, contentType);
}

interface Flag {
  kind: string;
  severity: 'info' | 'warning' | 'error';
  message: string;
  details?: unknown;
}

function sameAmount(a: string, b: string): boolean {
  return /^-?[0.]*$/.test(addDecimals(a, b.startsWith('-') ? b.slice(1) : `-${b}`));
}

/** The rows the normalizer dropped below the header (footer, repeated headers, blank): `removed_rows`. */
function removedRowsOf(normalized: NormalizeOutput): number {
  return normalized.dropped.reduce((n, d) => n + d.rows, 0);
}

/** The rows the file reader kept out above the header (line -1: a sheet's joined to the table). */
function preambleRowsOf(located: LocatedTable): LocatedTable['removed'] {
  return located.removed.filter((r) => r.reason === 'preamble' || r.line < located.headerLine);
}

/**
 * Whether a statement's removed-rows file is its header alone, left to be written on first request
 * (src/ingest/variants.ts): nothing removed below the header of a plain delimited file whose
 * header is its first line (no preamble above it, no sheets or archive members joined to it).
 * What the statement records (`located`, `removed_rows`) tells it again then.
 */
export function removedLeftForRequest(
  layout: Pick<LocatedTable, 'format' | 'container' | 'headerLine'>,
  removedRows: number | null,
): boolean {
  return (
    removedRows === 0 &&
    layout.format === 'delimited' &&
    layout.container === 'none' &&
    layout.headerLine === 0
  );
}

/**
 * The removed variant lists every row that is not data: the normalizer writes the rows it dropped
 * below the header (footer, repeated header, blank; `record` is their record number after the
 * header), and the rows the file reader kept out above it are put first, with an empty `record`.
 */
async function addPreambleRows(removedPath: string, located: LocatedTable): Promise<void> {
  const above = preambleRowsOf(located);
  if (above.length === 0) return;
  const width = located.header.length;
  const lines = above.map((r) =>
    ['', r.reason, ...Array.from({ length: width }, (_, i) => r.cells[i] ?? '')]
      .map(csvField)
      .join(','),
  );
  const written = await readFile(removedPath, 'utf8');
  const newline = written.indexOf('\n');
  await writeFile(
    removedPath,
    `${written.slice(0, newline + 1)}${lines.join('\n')}\n${written.slice(newline + 1)}`,
  );
}

/** Flags that need only what the file and its normalization say. */
export function statementFlags(
  located: LocatedTable,
  out: NormalizeOutput,
  /** the mapping's money and units fields (their columns and formats), for the footer totals */
  fields: Pick<MappingFields, 'royaltyEarnings' | 'units'>,
): Flag[] {
  return [
    ...rowFlags(out),
    ...layoutFlags(located),
    ...missingAmountFlags(out),
    ...footerTotalFlags(located, out, fields),
  ];
}

/** What the rows say: values that could not be read, periods, currencies, totals, extra cells. */
function rowFlags(out: NormalizeOutput): Flag[] {
  return [...unreadValueFlags(out), ...currencyAndPeriodFlags(out), ...totalAndCellFlags(out)];
}

/** Rows that are missing, and amounts, identifiers and territories that could not be read. */
function unreadValueFlags(out: NormalizeOutput): Flag[] {
  const flags: Flag[] = [];
  if (out.keptRows === 0)
    flags.push({
      kind: 'no_data_rows',
      severity: 'warning',
      message: 'The statement has a header but no data rows.',
    });
  if (out.issues.invalidAmounts > 0) {
    flags.push({
      kind: 'invalid_amounts',
      severity: 'error',
      message: `${out.issues.invalidAmounts} rows have an amount that could not be read.`,
      details: { rows: out.issues.invalidAmounts },
    });
  }
  if (out.issues.invalidIsrc > 0)
    flags.push({
      kind: 'invalid_isrc',
      severity: 'warning',
      message: `${out.issues.invalidIsrc} rows have an invalid ISRC.`,
      details: { rows: out.issues.invalidIsrc },
    });
  if (out.issues.invalidUpc > 0)
    flags.push({
      kind: 'invalid_upc',
      severity: 'warning',
      message: `${out.issues.invalidUpc} rows have an invalid UPC/EAN.`,
      details: { rows: out.issues.invalidUpc },
    });
  if (out.issues.unknownCountries.length > 0) {
    flags.push({
      kind: 'unknown_territories',
      severity: 'info',
      message: `Territories not recognised: ${out.issues.unknownCountries.slice(0, 10).join(', ')}.`,
      details: { values: out.issues.unknownCountries },
    });
  }
  return flags;
}

/** Currencies unknown or missing, statement periods missing, and several periods or currencies. */
function currencyAndPeriodFlags(out: NormalizeOutput): Flag[] {
  const flags: Flag[] = [];
  if (out.issues.unknownCurrencies.length > 0) {
    flags.push({
      kind: 'unknown_currencies',
      severity: 'error',
      message: `Currencies not recognised: ${out.issues.unknownCurrencies.slice(0, 10).join(', ')}.`,
      details: { values: out.issues.unknownCurrencies },
    });
  }
  // rows with no currency at all (an empty cell, a variable not given): nothing to convert them from
  const noCurrency = out.perCurrency.find((c) => c.currency === null)?.rows ?? 0;
  if (noCurrency > 0 && out.issues.unknownCurrencies.length === 0) {
    flags.push({
      kind: 'missing_currency',
      severity: 'error',
      message: `${noCurrency} rows have no currency: their USD amounts stay empty.`,
      details: { rows: noCurrency },
    });
  }
  if (out.issues.missingStmtPeriod > 0) {
    flags.push({
      kind: 'missing_statement_period',
      severity: 'error',
      message: `${out.issues.missingStmtPeriod} rows have no statement period.`,
      details: { rows: out.issues.missingStmtPeriod },
    });
  }
  if (out.stmtPeriods > 1)
    flags.push({
      kind: 'several_statement_periods',
      severity: 'info',
      message: `The rows span ${out.stmtPeriods} statement periods.`,
    });
  const currencies = out.perCurrency.filter((c) => c.rows > 0);
  if (currencies.length > 1) {
    const names = currencies.map((c) => c.currency ?? '(none)');
    flags.push({
      kind: 'several_currencies',
      severity: 'info',
      message: `The rows are in ${currencies.length} currencies (${names.join(', ')}): the statement's totals are per currency.`,
      details: { currencies: names },
    });
  }
  return flags;
}

/** Negative net totals (overall, or per currency when there are several), and extra cells. */
function totalAndCellFlags(out: NormalizeOutput): Flag[] {
  const flags: Flag[] = [];
  const currencies = out.perCurrency.filter((c) => c.rows > 0);
  if (out.net !== null && out.net.startsWith('-'))
    flags.push({
      kind: 'negative_total',
      severity: 'warning',
      message: `The statement's net total is negative (${out.net}).`,
    });
  const negative = currencies.length > 1 ? currencies.filter((c) => c.net?.startsWith('-')) : [];
  if (negative.length > 0) {
    flags.push({
      kind: 'negative_total',
      severity: 'warning',
      message: `The statement's net total is negative in ${negative.map((c) => `${c.currency ?? '(no currency)'} (${c.net})`).join(', ')}.`,
    });
  }
  if (out.issues.extraCells > 0) {
    flags.push({
      kind: 'extra_cells',
      severity: 'warning',
      message: `${out.issues.extraCells} rows have a cell beyond the header's last column; those cells are not read.`,
      details: { rows: out.issues.extraCells },
    });
  }
  return flags;
}

/** How the table was read: sheets or files combined, cut off, an encoding guessed, hidden rows, tables not read. */
function layoutFlags(located: LocatedTable): Flag[] {
  return [...combinedFlags(located), ...readerNoteFlags(located), ...otherTablesFlags(located)];
}

/** Sheets or archive files with one header (one per month or store) read as one table. */
function combinedFlags(located: LocatedTable): Flag[] {
  const flags: Flag[] = [];
  const sheets = located.sheet?.combined;
  if (sheets && sheets.length > 1) {
    flags.push({
      kind: 'sheets_combined',
      severity: 'info',
      message: `The sheets ${sheets.map((n) => `"${n}"`).join(', ')} have the same columns and were read as one table, in workbook order.`,
      details: { sheets },
    });
  }
  const files = located.archiveEntry?.combined;
  if (files && files.length > 1) {
    flags.push({
      kind: 'files_combined',
      severity: 'info',
      message: `The files ${files.map((n) => `"${n}"`).join(', ')} of the archive have the same columns and were read as one table, in archive order.`,
      details: { files },
    });
  }
  return flags;
}

/** What the file reader noticed about the file itself (src/ingest/file/locate.ts): cut off, an encoding guessed, hidden rows. */
function readerNoteFlags(located: LocatedTable): Flag[] {
  const truncated = truncatedFlag(located);
  const flags: Flag[] = truncated ? [truncated] : [];
  const uncertain = located.readerNotes?.uncertainEncoding;
  if (uncertain) {
    flags.push({
      kind: 'encoding_uncertain',
      severity: 'warning',
      message:
        `The file is not UTF-8 and its encoding was a guess: it was read as ${uncertain.candidates[0]}, but ${uncertain.candidates.slice(1).join(', ')} ` +
        `would read it as other text. If titles look garbled, process it again naming the encoding (upload.uploadAction reprocess with encoding).`,
      details: { encoding: located.encoding, candidates: uncertain.candidates },
    });
  }
  const hiddenRows = located.readerNotes?.hiddenRows ?? 0;
  if (hiddenRows > 0) {
    const files = located.archiveEntry?.combined;
    flags.push({
      kind: 'hidden_rows',
      severity: 'info',
      message: `${hiddenRows} ${hiddenRows === 1 ? 'row' : 'rows'} hidden in the workbook${(files?.length ?? 0) > 1 ? 's' : ''} ${hiddenRows === 1 ? 'was' : 'were'} read like the others.`,
      details: { rows: hiddenRows },
    });
  }
  return flags;
}

/** Sheets or files that fill Excel's last row: the export was probably cut off there. */
function truncatedFlag(located: LocatedTable): Flag | undefined {
  const cutAt = located.readerNotes?.rowLimitSheets ?? [];
  if (cutAt.length === 0) return undefined;
  // (files of an archive read as one: each one cut off is named)
  const names = cutAt.map((n) => `"${n}"`).join(', ');
  const several = cutAt.length > 1;
  const what =
    located.format === 'delimited'
      ? `The file${several ? 's' : ''} ${names} ${several ? 'have' : 'has'}`
      : `The sheet${several ? 's' : ''} ${names} ${several ? 'fill' : 'fills'}`;
  return {
    kind: 'possibly_truncated',
    severity: 'warning',
    message:
      located.format === 'delimited'
        ? `${what} exactly 1,048,576 lines, Excel's last row: the export was probably cut off there.`
        : `${what} Excel's last row (1,048,576): the export was probably cut off there.`,
    details: { sheets: cutAt, rowLimit: 1_048_576 },
  };
}

/** A workbook or archive with more than one detail table: one is read, and the others must not go unnoticed. */
function otherTablesFlags(located: LocatedTable): Flag[] {
  const flags: Flag[] = [];
  for (const [what, place] of [
    ['sheet', located.sheet],
    ['file', located.archiveEntry],
  ] as const) {
    const others = (place?.candidates ?? [])
      .filter((c) => c.skipped === 'another table scored higher')
      .map((c) => c.name);
    if (place && others.length > 0) {
      const read = place.combined ?? [place.name];
      const quoted = (names: string[]) => names.map((n) => `"${n}"`).join(', ');
      flags.push({
        kind: 'other_tables_not_read',
        severity: 'warning',
        message:
          `Only the ${what}${read.length > 1 ? 's' : ''} ${quoted(read)} ${read.length > 1 ? 'were' : 'was'} read; ${quoted(others)} ` +
          (others.length > 1
            ? 'also hold tables: upload each as its own statement.'
            : 'also holds a table: upload it as its own statement.'),
        details: { read: read.length > 1 ? read : place.name, notRead: others },
      });
    }
  }
  return flags;
}

/** Rows with no amount: an error when none has one. */
function missingAmountFlags(out: NormalizeOutput): Flag[] {
  const flags: Flag[] = [];
  // rows with no amount at all (an empty cell, N/A, -): all of them is a statement nothing could be read from
  // (a workbook whose formulas were saved without their values, a mapping on the wrong column)
  const missing = out.issues.missingAmounts;
  if (out.keptRows > 0 && missing >= out.keptRows) {
    flags.push({
      kind: 'missing_amounts',
      severity: 'error',
      message:
        'No row has an amount: the money column is empty (a workbook saved without the values of its formulas, or the wrong column).',
      details: { rows: missing },
    });
  } else if (missing > 0) {
    flags.push({
      kind: 'missing_amounts',
      severity: 'info',
      message: `${missing} rows have no amount.`,
      details: { rows: missing },
    });
  }
  return flags;
}

/** The file's own totals against the sums of its rows. */
function footerTotalFlags(
  located: LocatedTable,
  out: NormalizeOutput,
  fields: Pick<MappingFields, 'royaltyEarnings' | 'units'>,
): Flag[] {
  const flags: Flag[] = [];
  // the file's own totals must equal the sums of its rows: a labelled total (Total_Amount, Total_Units,
  // Total_Rows) by what its label names, any other by its numbers under the money and units columns,
  // found as the mapping finds its columns (headerKey) and read as the rows' amounts are read. Balance
  // lines (brought forward, payable, payment) are statement-level figures, never compared.
  const money = fields.royaltyEarnings;
  const sums: Record<
    FooterMeasure,
    {
      spec: FieldSpec | undefined;
      computed: string | null;
      message: (stated: string, computed: string) => string;
    }
  > = {
    amount: {
      spec: money,
      computed: out.net,
      message: (stated, computed) =>
        `The file's total (${stated}) differs from the sum of its rows (${computed}).`,
    },
    units: {
      spec: fields.units,
      computed: out.units,
      message: (stated, computed) =>
        `The file's units total (${stated}) differs from the sum of its rows' units (${computed}).`,
    },
    rows: {
      spec: money,
      computed: String(out.keptRows),
      message: (stated, computed) =>
        `The file's row count (${stated}) differs from the number of rows read (${computed}).`,
    },
  };
  const checkFooter = (label: string, measure: FooterMeasure, stated: string) => {
    const { spec, computed, message } = sums[measure];
    const value = readAmount(
      stated,
      usesDecimalComma(spec, located.header, out.decimalComma ?? located.decimalComma),
    );
    if (computed === null || value === null || sameAmount(value, computed)) return;
    flags.push({
      kind: 'footer_total_mismatch',
      severity: 'error',
      message: message(stated, computed),
      details: { label, measure, stated, computed },
    });
  };
  for (const total of located.footerTotals) {
    if (total.kind === 'balance') continue;
    if (total.measure && total.value !== undefined) {
      checkFooter(total.label, total.measure, total.value);
      continue;
    }
    for (const measure of ['amount', 'units'] as const) {
      const header = headerIn(located.header, sums[measure].spec?.column);
      if (header !== undefined && Object.hasOwn(total.values, header))
        checkFooter(total.label, measure, total.values[header]!);
    }
  }
  return flags;
}

/**
 * Downloads a statement's object into workDir and locates its table in a worker thread; with
 * `hash`, the object's SHA-256, taken as it streams in, or for a large object read from its file
 * on this thread meanwhile (the other core); else it is ''.
 * With `expectSha256` (the hash announced in upload.uploadFile), other bytes are
 * UPLOAD_CHECKSUM_MISMATCH, before anything the reader found in them; with `expectEtag` (the
 * object's as completed), an object PUT again since is UPLOAD_OBJECT_CHANGED.
 */
export async function locateStatementFile(
  deps: Deps,
  objectKey: string,
  fileName: string,
  workDir: string,
  options: {
    lap?: (stage: string) => void;
    hash?: boolean;
    expectSha256?: string | null;
    expectEtag?: string | null;
    encoding?: string | null;
    signal?: AbortSignal;
  } = {},
): Promise<{
  located: LocatedTable;
  object: { size: number; sha256: string };
  sourcePath: string;
}> {
  const sourcePath = path.join(workDir, 'original');
  const { size, sha256: hashed } = await download(deps, objectKey, sourcePath, {
    expectEtag: options.expectEtag,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.hash ? { hash: true } : {}),
  });
  options.lap?.('download');
  // the file reader is pure JavaScript: its thread is terminated when the signal aborts
  const [located, sha256] = await Promise.allSettled([
    deps.threads.locateTable(
      {
        sourcePath,
        fileName,
        workDir,
        ...(options.encoding ? { encoding: options.encoding } : {}),
      },
      { signal: options.signal },
    ),
    options.hash ? (hashed ?? sha256Of(sourcePath)) : Promise.resolve(''),
  ]);
  // both settled: nothing reads the work directory when a failure removes it
  if (sha256.status === 'rejected') throw sha256.reason;
  if (options.expectSha256 && sha256.value !== options.expectSha256) {
    throw new AppError(
      'UPLOAD_CHECKSUM_MISMATCH',
      `The uploaded file's SHA-256 is ${sha256.value}; ${options.expectSha256} was announced`,
    );
  }
  if (located.status === 'rejected') throw located.reason;
  return { located: located.value, object: { size, sha256: sha256.value }, sourcePath };
}

// ---- a run, as a list of named stages --------------------------------------------------------

/** What one run of the pipeline knows: its statement as it took it, and what each stage found. */
interface Run {
  deps: Deps;
  organizationId: string;
  statementId: string;
  statement: RunStatement;
  workDir: string;
  signal: AbortSignal | undefined;
  /** when the job's time budget runs out (ms since the epoch) */
  deadline: number | undefined;
  lap: (stage: string) => void;
  timings: Record<string, number>;
  /** locate: the table found in the file, the object as downloaded and where it lies */
  located?: LocatedTable;
  object?: { size: number; sha256: string };
  sourcePath?: string;
  /** recordLayout: the organization's mapping for the header, looked up meanwhile (findMapping awaits it) */
  mappingLookup?: Promise<FoundMapping | null>;
  /** findMapping: the mapping the file is read with, and why */
  found?: FoundMapping;
  /** normalize: the rows as read */
  normalized?: NormalizeOutput;
  /** normalize: the record's progress stage set to saving (storeObjects awaits it) */
  saving?: Promise<unknown>;
  /** storeObjects: the new version's objects, by variant */
  version?: number;
  variants?: Record<string, string>;
  /** storeObjects: the unknown sales types' and sources' flags, looked up while the objects go up */
  lookupFlags?: Flag[];
}

/** A stage ends the run with its result, or returns nothing for the next stage to go on. */
interface Stage {
  name: string;
  run(run: Run): Promise<IngestResult | void>;
}

/** What a stage needs from an earlier one (set there, or the stage would not run). */
function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`ingest: ${what} is not known yet`);
  return value;
}

/**
 * A permanent, explained failure of the run (bad input: never retried); with `details`, what the
 * errorCode points at (the normalizer's AMOUNT_FORMAT_CONFLICT rows).
 */
async function failed(
  run: Run,
  error: AppError,
  opts: { details?: boolean } = {},
): Promise<IngestResult> {
  await failRun(
    run.deps.pool,
    run.statementId,
    error.errorCode,
    error.message,
    opts.details ? error.details : undefined,
  );
  return { status: 'failed', statementId: run.statementId };
}

const skipped = (run: Run): IngestResult => ({ status: 'skipped', statementId: run.statementId });

/** Downloads the object and locates its table (its SHA-256 read meanwhile). */
const locate: Stage = {
  name: 'locate',
  async run(run) {
    const { statement } = run;
    try {
      const found = await locateStatementFile(
        run.deps,
        statement.object_key,
        statement.file_name,
        run.workDir,
        {
          lap: run.lap,
          hash: true,
          expectSha256: statement.declared_sha256,
          expectEtag: statement.object_etag,
          encoding: statement.encoding,
          signal: run.signal,
        },
      );
      Object.assign(run, found);
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey')
        return failed(
          run,
          new AppError('UPLOAD_OBJECT_MISSING', 'The uploaded file is not in the object store.'),
        );
      if (error instanceof AppError && error.code === 'BAD_REQUEST') return failed(run, error);
      throw error;
    }
    run.lap('locate');
  },
};

/**
 * Records what the file is and how it was read, only while this run still has the statement (one
 * skipped, marked bad, deleted or sent back meanwhile keeps what its rows were read from); without
 * it the run stops here: nothing of it is needed.
 */
const recordLayout: Stage = {
  name: 'record layout',
  async run(run) {
    const located = need(run.located, 'the table');
    const object = need(run.object, 'the object');
    // the mapping is looked up meanwhile (a read: one round trip less); a skipped run drops it
    run.mappingLookup = findMappingForHeader(run.deps.pool, run.organizationId, located.header);
    run.mappingLookup.catch(() => {});
    const still = await run.deps.pool.query(
      `UPDATE statements SET size_bytes = $2, sha256 = $3, header_hash = $4, headers = $5, row_count = $6, progress_total = $6, progress_stage = 'surveying', progress_stage_at = clock_timestamp(),
         located = $7, updated_at = clock_timestamp()
       WHERE id = $1 AND status = 'processing' AND deleted_at IS NULL AND normalized_version = $8 AND ${TRANSIENT_COMMIT}`,
      [
        run.statementId,
        object.size,
        object.sha256,
        located.headerHash,
        located.header,
        located.dataRecords,
        JSON.stringify(layoutRecord(located)),
        run.statement.normalized_version,
      ],
    );
    if (still.rowCount === 0) return skipped(run);
  },
};

/** The statement's `located` column: how its file was read. */
function layoutRecord(located: LocatedTable) {
  return {
    container: located.container,
    format: located.format,
    encoding: located.encoding,
    sheet: located.sheet,
    archiveEntry: located.archiveEntry?.name ?? null,
    // a single member's list is derived from archiveEntry when read (LAYOUT_SELECT)
    archiveEntries: located.archiveEntry?.combined,
    delimiter: located.delimiter,
    headerLine: located.headerLine,
    footerRecords: located.footerRecords,
    preambleValues: located.preambleValues,
    footerTotals: located.footerTotals,
  };
}

/**
 * By header hash, else by its columns (src/ingest/library.ts): the statement records which and
 * why. Without a complete one the statement waits in needs_mapping with a suggestion.
 */
const findMapping: Stage = {
  name: 'find mapping',
  async run(run) {
    run.signal?.throwIfAborted();
    const located = need(run.located, 'the table');
    const found = await (run.mappingLookup ??
      findMappingForHeader(run.deps.pool, run.organizationId, located.header));
    if (!found) {
      // a layout nobody mapped: a mapping made from it and proven, else the suggestion and why not
      const auto = await autoMapStatement({
        ...run,
        located,
        normalize: (fields) => normalizeRows(run, located, fields),
      });
      if ('suggestion' in auto) {
        await awaitMapping(run.deps.pool, run.statementId, auto.suggestion);
        return { status: 'needs_mapping', statementId: run.statementId };
      }
      run.found = auto.found;
      run.normalized = auto.normalized;
      return;
    }
    if (!found.mapping || missingRequiredFields(found.mapping.fields).length > 0) {
      await awaitMapping(
        run.deps.pool,
        run.statementId,
        suggestMapping(located.header, located.sampleRows, run.statement.file_name),
      );
      return { status: 'needs_mapping', statementId: run.statementId };
    }
    run.found = stillAutomatic(found, run.statement.mapping_match);
  },
};

/**
 * Normalizes the statement's table with these fields in the normalizer's thread, the rows written
 * to the run's directory, its progress to the record meanwhile: the run's rows (an automatic
 * mapping's proof reads them, src/ingest/autoMap/).
 */
async function normalizeRows(
  run: Run,
  located: LocatedTable,
  fields: MappingFields,
): Promise<NormalizeOutput> {
  const { deps, statement, statementId } = run;
  const progress = progressReporter(deps, statementId, statement.normalized_version);
  try {
    return await deps.threads.normalize({
      ...tableOf(located),
      fields,
      fileName: statement.file_name,
      // the statement's facts (preamble, file name) as variables, for mappings that read them
      variables: withFactVariables(
        statement.variables,
        statementFacts(located.preambleValues, statement.file_name),
      ),
      statementId,
      organizationId: run.organizationId,
      rightsholderId: statement.rightsholder_id,
      outPath: path.join(run.workDir, 'normalized.parquet'),
      removedPath: path.join(run.workDir, 'removed.csv'),
      threads: 2,
      memoryLimitMb: 1024,
      // what is left of the job's budget: the thread interrupts DuckDB when it runs out
      timeBudgetMs: Math.max(1, (run.deadline ?? Date.now() + 30 * 60_000) - Date.now()),
      progress: progress.buffer,
      progressEveryMs: progress.pollEveryMs,
    });
  } finally {
    await progress.stop();
  }
}

/** The rows as read: normalized now, unless an automatic mapping's proof read them already. */
const normalize: Stage = {
  name: 'normalize',
  async run(run) {
    const { deps, statement, statementId } = run;
    const located = need(run.located, 'the table');
    const { mapping } = need(run.found, 'the mapping');
    try {
      run.normalized ??= await normalizeRows(run, located, mapping.fields);
    } catch (error) {
      if (error instanceof AppError && error.code === 'BAD_REQUEST')
        return failed(run, error, { details: true });
      throw error;
    }
    run.signal?.throwIfAborted();
    // written while the objects go up (storeObjects awaits it): one round trip less
    run.saving = deps.pool.query(
      `UPDATE statements SET progress_stage = 'saving', progress_stage_at = clock_timestamp(), updated_at = clock_timestamp()
       WHERE id = $1 AND status = 'processing' AND deleted_at IS NULL AND normalized_version = $2 AND ${TRANSIENT_COMMIT}`,
      [statementId, statement.normalized_version],
    );
    run.saving.catch(() => {});
    run.lap('normalize');
    for (const [step, ms] of Object.entries(run.normalized.timings ?? {}))
      run.timings[`normalize.${step}`] = ms;
  },
};

/** The new version's objects, first: the commit makes them visible at once. */
const storeObjects: Stage = {
  name: 'store objects',
  async run(run) {
    const { deps, statement } = run;
    const located = need(run.located, 'the table');
    const normalized = need(run.normalized, 'the rows');
    const sourcePath = need(run.sourcePath, 'the file');
    const version = statement.normalized_version + 1;
    const prefix = `orgs/${run.organizationId}/statements/${run.statementId}/`;
    const variants: Record<string, string> = { original: statement.object_key };
    // the objects go up at once: a small statement's time here is the store's round trips
    const uploads: Promise<void>[] = [];
    variants.normalized = `${prefix}normalized/v${version}.parquet`;
    uploads.push(
      upload(
        deps,
        variants.normalized,
        path.join(run.workDir, 'normalized.parquet'),
        'application/vnd.apache.parquet',
      ),
    );
    // trimmed and standardized are written on first request (src/ingest/variants.ts)
    // nothing removed: its header alone, written on first request (src/ingest/variants.ts)
    variants.removed = `${prefix}removed/v${version}.csv`;
    const removedPath = path.join(run.workDir, 'removed.csv');
    if (
      !removedLeftForRequest(located, removedRowsOf(normalized)) ||
      preambleRowsOf(located).length > 0
    )
      uploads.push(
        addPreambleRows(removedPath, located).then(() =>
          upload(deps, variants.removed!, removedPath, 'text/csv'),
        ),
      );
    // the table as UTF-8 delimited text, when it differs from the upload (a sheet, a decoded or
    // unpacked file); a decoded text file's is written on first request (src/ingest/variants.ts)
    if (located.csvPath !== sourcePath) {
      variants.single = `${prefix}single/v${version}.csv`;
      if (located.container !== 'none' || located.format !== 'delimited')
        uploads.push(upload(deps, variants.single, located.csvPath, 'text/csv'));
    }
    if (located.format === 'xlsx' || located.format === 'xls') {
      // the workbook: the upload itself, or the one unpacked from it (a zip or gzip holding it),
      // stored under its own name (the download's name, src/api/fileStorage/downloadStatementFile.ts)
      const workbook = located.workbook;
      if (workbook && workbook.path !== sourcePath) {
        variants['original-excel'] =
          `${prefix}original-excel/v${version}/${workbookKeyName(workbook.name, located.format)}`;
        uploads.push(
          upload(deps, variants['original-excel'], workbook.path, WORKBOOK_TYPES[located.format]),
        );
      } else variants['original-excel'] = statement.object_key;
    }
    // reads that need none of the commit's locks: looked up meanwhile, out of its transaction
    const lookupFlags = unknownLookupFlags(deps.pool, run);
    // (every upload settled before a failure is answered: none is still writing when the run ends)
    await allSettledOrThrow([...(run.saving ? [run.saving] : []), lookupFlags, ...uploads]);
    run.lookupFlags = await lookupFlags;
    run.version = version;
    run.variants = variants;
    run.lap('upload');
    run.signal?.throwIfAborted();
  },
};

/**
 * One transaction records the new version, its flags, FX rates and raw values. A statement
 * deleted, or sent back to be processed again (a redrive), while this run worked takes nothing of
 * it: the run that follows (or nobody) has the last word, and this run's objects go.
 */
const commit: Stage = {
  name: 'commit',
  async run(run) {
    const current = await withTransaction(run.deps.pool, (db) => commitVersion(db, run));
    if (current) return;
    // this run's objects, unless the statement's record names them (a later version cannot)
    const { rows } = await run.deps.pool.query<{
      normalized_key: string | null;
      variants: Record<string, string>;
    }>('SELECT normalized_key, variants FROM statements WHERE id = $1', [run.statementId]);
    const kept = new Set([rows[0]?.normalized_key, ...Object.values(rows[0]?.variants ?? {})]);
    const mine = need(run.variants, 'the objects');
    // (original-excel may be the upload itself)
    const orphans = [mine.normalized, mine.removed, mine.single, mine['original-excel']];
    await deleteObjects(
      run.deps.store,
      orphans.filter(
        (key): key is string => !!key && key !== run.statement.object_key && !kept.has(key),
      ),
      run.deps.log,
    );
    return skipped(run);
  },
};

/** The previous version is unreachable now: its objects go. */
const dropPreviousVersion: Stage = {
  name: 'drop previous version',
  async run(run) {
    const { statement } = run;
    const now = Object.values(need(run.variants, 'the objects'));
    const old = statement.variants;
    const previous = [
      statement.normalized_key,
      old.removed,
      old.single,
      old.trimmed,
      old.standardized,
      old['original-excel'],
    ];
    await deleteObjects(
      run.deps.store,
      previous.filter(
        (key): key is string => !!key && key !== statement.object_key && !now.includes(key),
      ),
      run.deps.log,
    );
    run.lap('commit');
  },
};

/** The stages of a run, in order: each may end it (failed, needs_mapping, skipped). */
const INGEST_STAGES: readonly Stage[] = [
  locate,
  recordLayout,
  findMapping,
  normalize,
  storeObjects,
  commit,
  dropPreviousVersion,
];

/**
 * `signal`: the job's time budget (src/jobs/tasks/statement_ingest.ts). Aborted, the download and
 * the file reader's thread stop at once and the run stops at its next stage; the normalizer's
 * DuckDB work, which no thread may be terminated in, is interrupted by its own timer at `deadline`.
 */
export async function ingestStatement(
  deps: Deps,
  organizationId: string,
  statementId: string,
  budget: { signal?: AbortSignal; deadline?: number } = {},
): Promise<IngestResult> {
  const statement = await startRun(deps.pool, organizationId, statementId);
  if (!statement) return { status: 'skipped', statementId };
  const { lap, timings } = stopwatch();
  const workDir = path.join(
    tmpdir(),
    'royalty-ingest',
    `${statementId}-${randomBytes(4).toString('hex')}`,
  );
  await mkdir(workDir, { recursive: true });
  const run: Run = {
    deps,
    organizationId,
    statementId,
    statement,
    workDir,
    signal: budget.signal,
    deadline: budget.deadline,
    lap,
    timings,
  };
  try {
    for (const stage of INGEST_STAGES) {
      const ended = await stage.run(run);
      if (ended) return ended;
    }
    return { status: 'processed', statementId, timings };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

// ---- the commit ---------------------------------------------------------------------------------

/**
 * The commit's transaction; false when the run no longer has the statement. Duplicates and
 * overlaps are judged against what is committed, under the statement's lock.
 */
async function commitVersion(db: Queryable, run: Run): Promise<boolean> {
  const rightsholderId = await lockForCommit(db, run);
  if (rightsholderId === null) return false;
  const normalized = need(run.normalized, 'the rows');
  const { mapping } = need(run.found, 'the mapping');
  const flags = statementFlags(need(run.located, 'the table'), normalized, mapping.fields);
  const stmtPeriod = normalized.stmt
    ? periodOf(normalized.stmt.year, normalized.stmt.period, normalized.stmt.cadence as Cadence)
    : null;
  flags.push(...autoMappedFlags(need(run.found, 'the mapping').match, mapping.name));
  // FX: the rate for the statement period's last day, else the nearest earlier published day; never 1
  const rateDate = stmtPeriod?.end ?? normalized.salesPeriodEnd;
  const currencies = normalized.perCurrency.flatMap((c) => (c.currency ? [c.currency] : []));
  const judged = await judgeAndClear(db, run, stmtPeriod, { currencies, date: rateDate });
  flags.push(...judged.flags);
  flags.push(...fxFlags(judged.rated, rateDate));
  flags.push(...need(run.lookupFlags, 'the unknown lookups'));
  // the block refresh and the activity go along with the run's rows: one round trip for the three
  const along = writesAlong();
  await recordProcessed(along.db, run, rightsholderId);
  // the flags computed by this run replace the previous run's; a flag the user resolved stays resolved
  await insertRunRows(
    db,
    run,
    flags.filter((f) => !judged.resolvedKinds.has(f.kind)),
    along,
  );
  await recordVersion(db, run);
  return true;
}

/**
 * Locks the statement (and share-locks its organization: a deletion either came first or waits
 * for this commit); answers its rightsholder while this run still has it (processing, not
 * deleted, the version it started from), else null. Then statements of one rightsholder, and
 * statements of the same bytes, commit one at a time, so that two processed at once see each
 * other (row lock first, then these two in this order, the same in every run: no deadlock).
 */
async function lockForCommit(db: Queryable, run: Run): Promise<string | null> {
  // one round trip: the locked row comes out of the materialized CTE before the outer select list
  // takes the advisory locks, left to right, and only for a run that still has the statement
  const { rows: locked } = await db.query<{
    status: string;
    normalized_version: number;
    rightsholder_id: string;
  }>(
    `WITH me AS MATERIALIZED (
       SELECT s.status, s.normalized_version, s.rightsholder_id FROM statements s
         JOIN organizations o ON o.id = s.organization_id AND o.deleted_at IS NULL
       WHERE s.id = $1 AND s.deleted_at IS NULL FOR UPDATE OF s FOR SHARE OF o)
     SELECT status, normalized_version, rightsholder_id,
       CASE WHEN status = 'processing' AND normalized_version = $4 THEN pg_advisory_xact_lock(hashtextextended($2, 0)) END AS period_lock,
       CASE WHEN status = 'processing' AND normalized_version = $4 THEN pg_advisory_xact_lock(hashtextextended($3, 0)) END AS bytes_lock
     FROM me`,
    [
      run.statementId,
      `statement-period:${run.organizationId}:${run.statement.rightsholder_id}`,
      `statement-bytes:${run.organizationId}:${need(run.object, 'the object').sha256}`,
      run.statement.normalized_version,
    ],
  );
  const me = locked[0];
  if (me?.status !== 'processing' || me.normalized_version !== run.statement.normalized_version)
    return null;
  return me.rightsholder_id;
}

/**
 * A duplicate of another statement of the same bytes that is no duplicate itself, uploaded earlier
 * (its bytes read by now) or processed already. Of two identical files exactly one is flagged,
 * whatever the order their runs end in, and stays so when either is processed again.
 * ($1 the statement, $2 its organization, $3 its SHA-256: judgeAndClear's parameters.)
 */
const DUPLICATE_SQL = `SELECT json_build_object('id', s.id, 'file_name', s.file_name) FROM statements s, statements me
     WHERE me.id = $1 AND s.organization_id = $2 AND s.sha256 = $3 AND s.id <> $1 AND s.deleted_at IS NULL
       AND s.status NOT IN ('aborted', 'expired', 'deleted')
       AND NOT EXISTS (SELECT 1 FROM statement_flags f WHERE f.statement_id = s.id AND f.kind = 'duplicate_upload')
       AND ((s.created_at, s.id) < (me.created_at, me.id) OR s.status = 'processed')
     ORDER BY s.created_at, s.id LIMIT 1`;

/**
 * Other processed statements of this distributor ($5) and rightsholder ($4) covering a month of
 * this one's period ($6 its first month, $7 its last: none when null): periods overlap when they
 * share a month, so a quarter overlaps each of its months.
 */
const OVERLAP_SQL = `SELECT array_agg(o.id::text ORDER BY o.created_at, o.id) FROM (
       SELECT id, created_at FROM statements WHERE organization_id = $2 AND rightsholder_id = $4 AND distributor_id = $5 AND id <> $1
         AND status = 'processed' AND deleted_at IS NULL AND stmt_period >= 1
         AND ${STMT_FIRST_MONTH_SQL} <= $7 AND ${STMT_LAST_MONTH_SQL} >= $6
       ORDER BY created_at, id LIMIT 5) o`;

/**
 * In one round trip, under the commit's locks: the previous run's rows go (its flags but those the
 * user resolved, its raw values and payors), the statement is judged against what is committed: a
 * duplicate of another (DUPLICATE_SQL), an overlap with others (OVERLAP_SQL), and its rates are
 * written (rateStatementAlong: these currencies' rates of that day). Answers those flags, the
 * kinds of the resolved flags (this run does not raise them again) and the currencies without a
 * rate or with an old one.
 */
async function judgeAndClear(
  db: Queryable,
  run: Run,
  stmtPeriod: { start: string; end: string } | null,
  rates: { currencies: string[]; date: string | null },
): Promise<{ flags: Flag[]; resolvedKinds: Set<string>; rated: RatedStatement }> {
  const distributorId =
    run.statement.distributor_id ?? need(run.found, 'the mapping').mapping.distributorId;
  const overlapping = stmtPeriod && distributorId ? stmtPeriod : null;
  const own = [
    run.statementId,
    run.organizationId,
    need(run.object, 'the object').sha256,
    run.statement.rightsholder_id,
    overlapping ? distributorId : null,
    overlapping ? monthIndex(overlapping.start) : null,
    overlapping ? monthIndex(overlapping.end) : null,
  ];
  const rating = rateStatementAlong(run.statementId, rates.currencies, rates.date, own.length + 1);
  const { rows } = await db.query<{
    resolved_kinds: string[] | null;
    duplicate: { id: string; file_name: string } | null;
    overlaps: string[] | null;
    rated: Parameters<typeof ratedOf>[0];
  }>(
    `WITH flags AS (DELETE FROM statement_flags WHERE statement_id = $1 AND NOT resolved),
       raw_values AS (DELETE FROM statement_raw_values WHERE statement_id = $1),
       payors AS (DELETE FROM statement_payors WHERE statement_id = $1)${rating.ctes}
     SELECT (SELECT array_agg(kind) FROM statement_flags WHERE statement_id = $1 AND resolved) AS resolved_kinds,
       (${DUPLICATE_SQL}) AS duplicate, (${OVERLAP_SQL}) AS overlaps, ${rating.answer} AS rated`,
    [...own, ...rating.params],
  );
  const { resolved_kinds: resolved, duplicate, overlaps, rated } = rows[0]!;
  const flags: Flag[] = [];
  if (duplicate)
    flags.push({
      kind: 'duplicate_upload',
      severity: 'warning',
      message: `The same file was uploaded before (${duplicate.file_name}).`,
      details: { statementId: duplicate.id },
    });
  if (overlaps)
    flags.push({
      kind: 'overlapping_period',
      severity: 'warning',
      message: 'Another statement of this distributor and rightsholder covers the same period.',
      details: { statementIds: overlaps },
    });
  return { flags, resolvedKinds: new Set(resolved ?? []), rated: ratedOf(rated, rates.date) };
}

/**
 * The run's flags, raw values and payors in one INSERT each, with the writes gathered in `along`,
 * one round trip (the previous run's went in judgeAndClear). Before the version (recordVersion):
 * a payor row is counted by what its statement is when it is written (statement_payors_counted),
 * and the version's UPDATE counts the rows there, once. The flags in their order: each a
 * microsecond after the one before (a statement's flags are listed by created_at, and one
 * INSERT's rows may read the same clock).
 */
async function insertRunRows(
  db: Queryable,
  run: Run,
  flags: readonly Flag[],
  along: WritesAlong,
): Promise<void> {
  const values = rawValuesOf(run);
  const payors = payorsOf(run);
  const own = [
    run.organizationId,
    run.statementId,
    flags.map((f) => f.kind),
    flags.map((f) => f.severity),
    flags.map((f) => f.message),
    flags.map((f) => (f.details === undefined ? null : JSON.stringify(f.details))),
    values.map((r) => r.kind),
    values.map((r) => r.raw),
    values.map((r) => r.rows),
    values.map((r) => r.amounts),
    [...payors.keys()],
    [...payors.values()],
  ];
  const gathered = along.sql(own.length + 1);
  await db.query(
    `WITH flags AS (
       INSERT INTO statement_flags (organization_id, statement_id, kind, severity, message, details, created_at)
       SELECT $1, $2, f.kind, f.severity, f.message, f.details::jsonb, t.now + f.n * interval '1 microsecond'
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS f (kind, severity, message, details, n),
         (SELECT clock_timestamp() AS now) t
       ORDER BY f.n),
     raw_values AS (
       INSERT INTO statement_raw_values (organization_id, statement_id, kind, raw_value, row_count, amounts, usd_amount)
       SELECT $1, $2, v.kind, v.raw, v.rows, v.amounts::jsonb, ${rawValueUsdSql('v.amounts', '$2')}
       FROM unnest($7::text[], $8::text[], $9::bigint[], $10::text[]) AS v (kind, raw, rows, amounts)),
     payors AS (
       INSERT INTO statement_payors (statement_id, organization_id, name_normalized, name)
       SELECT $2, $1, key, name FROM unnest($11::text[], $12::text[]) AS p (key, name))${gathered.ctes}
     SELECT ${gathered.read || '1'}`,
    [...own, ...gathered.params],
  );
}

/**
 * The raw values of the run (amounts per currency as JSON); of two values the same once cut to
 * 1,000 characters, the last. Their US dollars are summed as analytics sums them: each currency's
 * amount at its rate; amounts without a rate add nothing.
 */
function rawValuesOf(run: Run) {
  const values = new Map<string, { kind: string; raw: string; rows: number; amounts: string }>();
  for (const v of need(run.normalized, 'the rows').rawValues) {
    const raw = v.raw.slice(0, 1000);
    values.set(`${v.kind}\0${raw}`, {
      kind: v.kind,
      raw,
      rows: v.rows,
      amounts: JSON.stringify(v.amounts),
    });
  }
  return [...values.values()];
}

/** The payors its rows name, the statement's own (payor.listGlobal: src/lookups/payors.ts), by lookup key. */
function payorsOf(run: Run): Map<string, string> {
  const payors = new Map<string, string>();
  for (const payor of need(run.normalized, 'the rows').payors) {
    const name = payor.trim().slice(0, 300);
    const key = normalizeLookupKey(name);
    if (key !== '' && !payors.has(key)) payors.set(key, name);
  }
  return payors;
}

/** Raw sales types and sources that no lookup resolves: analytics shows them unclassified. */
async function unknownLookupFlags(db: Queryable, run: Run): Promise<Flag[]> {
  const { rawValues } = need(run.normalized, 'the rows');
  const raws = (kind: 'sales_type' | 'source') =>
    rawValues.filter((v) => v.kind === kind).map((v) => v.raw);
  const flags: Flag[] = [];
  for (const [kind, flagKind, label] of [
    ['sales_type', 'unknown_sales_types', 'Sales types'],
    ['source', 'unknown_sources', 'Sources'],
  ] as const) {
    const resolved =
      kind === 'source'
        ? await resolveSourceLookups(db, raws(kind))
        : await resolveSalesTypeLookups(db, raws(kind));
    const unknown = [...resolved].filter(([, r]) => r === null).map(([raw]) => raw);
    if (unknown.length > 0) {
      flags.push({
        kind: flagKind,
        severity: 'warning',
        message: unknownLookupMessage(label, unknown),
        details: { values: unknown.slice(0, 500) },
      });
    }
  }
  return flags;
}

/** The new version on the statement: processed. */
async function recordVersion(db: Queryable, run: Run): Promise<void> {
  const normalized = need(run.normalized, 'the rows');
  const { mapping, match } = need(run.found, 'the mapping');
  const variants = need(run.variants, 'the objects');
  await finishRun(
    db,
    run.statementId,
    `mapping_id = $2, mapping_revision = $3,
       distributor_id = coalesce(distributor_id, $4), kept_rows = $5, removed_rows = $6, row_count = $7,
       progress_done = $7, progress_total = $7,
       stmt_year = $8, stmt_period = $9, stmt_cadence = $10,
       currency = $11, sales_period_start = $12, sales_period_end = $13,
       net_earnings = $14, gross_earnings = $15, units = $16,
       normalized_key = $17, normalized_version = $18, variants = $19, processed_at = clock_timestamp(), currency_totals = $20,
       suggested_mapping = NULL, mapping_match = $21`,
    [
      mapping.id,
      mapping.revision,
      mapping.distributorId,
      normalized.keptRows,
      removedRowsOf(normalized),
      normalized.dataRows,
      normalized.stmt?.year ?? null,
      normalized.stmt?.period ?? null,
      normalized.stmt?.cadence ?? null,
      normalized.perCurrency.length === 1 ? normalized.perCurrency[0]!.currency : null,
      normalized.salesPeriodStart,
      normalized.salesPeriodEnd,
      normalized.net,
      normalized.gross,
      normalized.units,
      variants.normalized,
      need(run.version, 'the version'),
      JSON.stringify(variants),
      JSON.stringify(normalized.perCurrency),
      JSON.stringify(match),
    ],
  );
}

/** What the version's commit sets off: its rightsholder's catalog block queued, and the activity. */
async function recordProcessed(db: Queryable, run: Run, rightsholderId: string): Promise<void> {
  const { statement } = run;
  await enqueueBlockRefresh(
    db,
    run.organizationId,
    [statement.rightsholder_id],
    'statement.processed',
  );
  await recordActivity(
    db,
    statement.created_by ? { userId: statement.created_by, apiKey: null } : null,
    {
      organizationId: run.organizationId,
      action: 'statement.processed',
      subjectType: 'file',
      subjectId: run.statementId,
      subjectLabel: statement.file_name,
      changes: null,
      // the locked row's (what the activity would read again): one round trip less
      rightsholderIds: [rightsholderId],
    },
  );
}
