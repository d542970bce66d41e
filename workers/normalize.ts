// Normalizes a located statement table into standard rows with DuckDB, in a worker thread.
// DuckDB reads the delimited text itself (no row-by-row JavaScript) and computes the per-row
// expressions; the low-cardinality readers (periods, dates, countries, currencies, identifiers)
// run in JavaScript once per DISTINCT raw value and are looked up by ENUM code. Money is DECIMAL end to end.
// Nothing is held: a survey pass over the file, then its data rows streamed to Parquet, a large
// file by two readers at once whose parts are joined (parquetConcat.ts).
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { connect, disconnect, stopping } from './duckdb.ts';
import { fieldKinds, headerIn, headerKey, standardFields, usesDecimalComma, type StandardField } from '../src/ingest/standardFields.ts';
import type { FieldSpec, MappingFields } from '../src/ingest/mappingFields.ts';
import {
  ambiguousYearFirst,
  coveringPeriod,
  firstOfMonthYearFirst,
  fromFileName,
  normalizeIsrc,
  normalizeIswc,
  normalizeUpc,
  parseCadence,
  parseCountry,
  parseCurrency,
  parseDate,
  parsePeriod,
  periodFromDate,
  periodOf,
  yearFirstOrder,
  type Cadence,
  type DateOrder,
  type DateSystem,
  type Period,
} from '../src/ingest/values.ts';
import type { TaskInput, TaskOutput } from '../src/workers/tasks.ts';
import { fail, type WorkerResult } from './results.ts';
import { stopwatch } from '../src/ingest/stopwatch.ts';
import { concatParquet } from './parquetConcat.ts';

import { normalizedColumns, type NormalizeInput, type NormalizeOutput } from '../src/workers/normalizeTypes.ts';

export { normalizedColumns, type CurrencyTotals, type NormalizeInput, type NormalizeOutput } from '../src/workers/normalizeTypes.ts';

function emptyOutput(): NormalizeOutput {
  return {
    dataRows: 0,
    keptRows: 0,
    dropped: [],
    net: null,
    gross: null,
    units: null,
    perCurrency: [],
    stmt: null,
    stmtPeriods: 0,
    salesPeriodStart: null,
    salesPeriodEnd: null,
    rawValues: [],
    payors: [],
    issues: { invalidAmounts: 0, missingAmounts: 0, invalidIsrc: 0, invalidUpc: 0, unknownCountries: [], unknownCurrencies: [], missingStmtPeriod: 0, extraCells: 0 },
  };
}

const snake = (f: string) => f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

const NO_QUOTE = String.fromCharCode(1);

/** A SQL string literal: values never enter SQL any other way. */
function lit(value: string): string {
  return `'${value.replace(/\0/g, '').replace(/'/g, "''")}'`;
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

class MappingError extends Error {}
/** Year-first dates that read both ways with nothing in the statement to tell which (DATE_ORDER_AMBIGUOUS). */
class DateOrderError extends Error {}
/** A field whose numbers no one rule reads (AMOUNT_FORMAT_CONFLICT): the offending rows in `details`. */
class AmountFormatError extends Error {
  constructor(
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}
/** A column whose every number fits the other rule than the file reader's: the run starts again reading it so. */
class FormatSwitch extends Error {
  constructor(readonly header: string, readonly decimalComma: boolean) {
    super(`column ${header} reads with a decimal ${decimalComma ? 'comma' : 'point'}`);
  }
}

/** A numeric field read from the file's cells, and how to test them against a rule (see fits_amount). */
interface FormatCheck {
  field: StandardField;
  columns: string[];
  /** the rule the field is read by now */
  decimalComma: boolean;
  /** the mapping states the rule (format decimal_comma or decimal_point): it is never switched */
  stated: boolean;
  /** an SQL condition over the raw cells c0..cN: every cell of the row fits the rule */
  fits: (decimalComma: boolean) => string;
  /** an SQL expression: the first of the row's cells that does not fit the rule */
  offending: (decimalComma: boolean) => string;
}

function formatChecks(fields: MappingFields, cellOf: (column: string) => string, decimalCommaOf: (spec: FieldSpec | undefined) => boolean): FormatCheck[] {
  const checks: FormatCheck[] = [];
  for (const field of standardFields) {
    const kind = fieldKinds[field];
    const spec = fields[field];
    if ((kind !== 'amount' && kind !== 'quantity' && kind !== 'percent') || !spec || spec.fromFileName !== undefined) continue;
    const columns = spec.columns ?? (spec.column !== undefined ? [spec.column] : []);
    if (columns.length === 0) continue;
    const cells = columns.map(cellOf);
    checks.push({
      field,
      columns,
      decimalComma: decimalCommaOf(spec),
      stated: spec.format === 'decimal_comma' || spec.format === 'decimal_point',
      fits: (dc) => `(${cells.map((c) => `fits_amount(${c}, ${dc})`).join(' AND ')})`,
      offending: (dc) => `(CASE ${cells.map((c) => `WHEN NOT fits_amount(${c}, ${dc}) THEN ${c}`).join(' ')} END)`,
    });
  }
  return checks;
}

/** How many offending rows a refusal lists, and the most characters of each cell it shows. */
const OFFENDING_ROWS = 20;
const OFFENDING_CHARS = 100;

/**
 * A field with numbers that do not fit the rule it is read by: when every number of it fits the
 * other rule, and the mapping states none, the run starts again with that one (FormatSwitch); else
 * the statement is refused, naming the rows that do not fit (AmountFormatError). Never is a
 * number read by a rule its separators contradict.
 */
async function judgeFormat(check: FormatCheck, one: (sql: string) => Promise<unknown[][]>, kept: (cells: string) => string): Promise<void> {
  const cells = '*';
  const rule = (dc: boolean) => (dc ? 'a decimal comma (1.234,56)' : 'a decimal point (1,234.56)');
  if (!check.stated) {
    const other = await one(`SELECT count(*) FILTER (WHERE NOT ${check.fits(!check.decimalComma)}) FROM ${kept(cells)}`);
    if (Number(other[0]![0]) === 0) throw new FormatSwitch(check.columns[0]!, !check.decimalComma);
  }
  const rows = await one(`SELECT count(*) OVER (), source_row, ${check.offending(check.decimalComma)} FROM ${kept(cells)}
    WHERE NOT ${check.fits(check.decimalComma)} ORDER BY source_row LIMIT ${OFFENDING_ROWS}`);
  const count = Number(rows[0]![0]);
  // a cell as written, up to a length a person reads (a hostile one may hold 90 KB)
  const shown = (v: unknown) => (String(v).length > OFFENDING_CHARS ? `${String(v).slice(0, OFFENDING_CHARS)}…` : String(v));
  const offending = rows.map((r) => ({ row: Number(r[1]), value: shown(r[2]) }));
  const columns = check.columns.map((c) => `"${c}"`).join(', ');
  const examples = offending.slice(0, 3).map((o) => `row ${o.row} "${o.value}"`).join(', ');
  throw new AmountFormatError(
    `The numbers of ${columns} (${check.field}) are read with ${rule(check.decimalComma)}${check.stated ? ', as the mapping states' : ''}, ` +
      `but ${count} ${count === 1 ? 'row contradicts' : 'rows contradict'} it (${examples}) and no one rule reads them all: ` +
      `correct those cells, or set the field's format to 'decimal_comma' or 'decimal_point' in the mapping if the other rule is right.`,
    { field: check.field, columns: check.columns, format: check.decimalComma ? 'decimal_comma' : 'decimal_point', count, rows: offending },
  );
}

/**
 * The text expression of one field over the raw columns c0..cN, or NULL. `amount`: the field is
 * read as a number, and `pick: 'first'` skips a cell saying there is none (N/A, -) as empty.
 */
function textExpr(spec: FieldSpec | undefined, columnIndex: Map<string, number>, input: NormalizeInput, amount = false): string {
  if (!spec) return 'NULL';
  const col = (name: string) => {
    const i = columnIndex.get(headerKey(name));
    if (i === undefined) throw new MappingError(`the mapping reads column "${name}", which this statement does not have`);
    return `cell(c${i})`;
  };
  if (spec.fromFileName !== undefined) {
    const v = fromFileName(input.fileName, spec.fromFileName);
    // the column, when the mapping names one, where the file name holds no such value
    return v !== null ? lit(v) : spec.column !== undefined ? col(spec.column) : 'NULL';
  }
  if (spec.column !== undefined) return col(spec.column);
  if (spec.columns !== undefined && spec.pick === 'first') {
    // the first of the columns with a value: one value in either of two columns (BMI's ROYALTY AMOUNT or CURRENT ACTIVITY AMT)
    const cells = spec.columns.map(col);
    return amount ? `(CASE ${cells.map((c) => `WHEN NOT no_amount(${c}) THEN ${c}`).join(' ')} END)` : `coalesce(${cells.join(', ')})`;
  }
  if (spec.columns !== undefined) return `NULLIF(concat_ws(${lit(spec.join ?? ' ')}, ${spec.columns.map(col).join(', ')}), '')`;
  if (spec.constant !== undefined) return spec.constant.trim() === '' ? 'NULL' : lit(spec.constant.trim());
  if (spec.variable !== undefined) {
    // own values only: a variable named `constructor` that was not given is not Object's
    const v = Object.hasOwn(input.variables, spec.variable) ? input.variables[spec.variable] : undefined;
    return v === undefined || v.trim() === '' ? 'NULL' : lit(v.trim());
  }
  return 'NULL';
}

/** Reads an amount: currency codes and symbols, thousands separators, (1.23), 1.23-, −1.23, 1.2E-05. */
const AMOUNT_MACRO = `
-- a mapped cell without its surrounding spaces, NULL when empty; most cells have none to trim, and
-- trim() (which copies every string) is then skipped
CREATE MACRO cell(s) AS CASE WHEN starts_with(s, ' ') OR ends_with(s, ' ') THEN NULLIF(trim(s), '') ELSE NULLIF(s, '') END;
-- negative in parentheses, also with a currency outside them (Excel's accounting format writes
-- "$ (1,234.56)", others "(12.50) EUR"): an opening one before the first digit, a closing one after the last
CREATE MACRO amount_sign(s) AS CASE
  WHEN (regexp_matches(s, '^[^0-9]*\\(') AND regexp_matches(s, '\\)[^0-9]*$')) OR regexp_matches(s, '^[^0-9]*[-−]')
    -- a minus after the number (SAP's 12.50-), also with a currency after or before it (12.50- EUR, 12.50 EUR-)
    OR regexp_matches(s, '[0-9.,]\\s*-[^0-9()]*$') OR regexp_matches(s, '[0-9.,][^0-9()]*-\\s*$') THEN -1 ELSE 1 END;
CREATE MACRO amount_digits(s) AS
  replace(regexp_replace(replace(replace(regexp_replace(regexp_replace(s, '[A-Za-z]{2,}', '', 'g'), '[^0-9.,eE+\\-]', '', 'g'), 'e-', 'E~'), 'E-', 'E~'), '[+\\-]', '', 'g'), 'E~', 'E-');
-- DuckDB reads text into a DECIMAL(18,12) (a 64-bit integer) about 4x faster than into DECIMAL(38,12),
-- with the same rounding: amounts under a million go that way, the rest directly; and it casts integer
-- text to DECIMAL(38,12) some 50x slower than decimal text: larger integers go via HUGEINT
CREATE MACRO cast_amount(s) AS coalesce(TRY_CAST(TRY_CAST(s AS DECIMAL(18,12)) AS DECIMAL(38,12)), CASE
  WHEN strpos(s, '.') = 0 AND strpos(s, 'e') = 0 AND strpos(s, 'E') = 0 THEN TRY_CAST(TRY_CAST(s AS HUGEINT) AS DECIMAL(38,12))
  ELSE TRY_CAST(s AS DECIMAL(38,12)) END);
-- a cell saying there is no amount (N/A, -, —, NULL): empty, not unreadable (Excel's #N/A is an error value and is)
-- list_contains, not IN: DuckDB turns an IN list of this length into a join with the list (a MARK
-- join), which is no faster and leaves the query's progress unreported (watchProgress)
CREATE MACRO no_amount(s) AS s IS NULL OR (length(s) <= 4 AND list_contains(['N/A', 'NA', '-', '--', '—', '–', 'NULL', 'NONE'], upper(s)));
CREATE MACRO amount_magnitude(s, decimal_comma) AS cast_amount(
  CASE WHEN decimal_comma THEN replace(replace(amount_digits(s), '.', ''), ',', '.') ELSE replace(amount_digits(s), ',', '') END);
-- a percentage (85%) is the fraction (0.85), rounded to the 12 decimals half away from zero; one
-- beyond 10^20 % is no percentage (unreadable)
CREATE MACRO percent_of(m) AS CASE WHEN m < 100000000000000000000 THEN CAST(m * 0.01 AS DECIMAL(38,12)) END;
CREATE MACRO parse_amount_slow(s, decimal_comma) AS CASE WHEN no_amount(s) THEN NULL
  WHEN strpos(s, '%') > 0 THEN amount_sign(s) * percent_of(amount_magnitude(s, decimal_comma))
  ELSE amount_sign(s) * amount_magnitude(s, decimal_comma) END;
-- most cells are plain numbers: a direct cast, and the regular expressions only for the rest
CREATE MACRO parse_amount(s, decimal_comma) AS CASE
  WHEN s IS NULL THEN NULL
  WHEN NOT decimal_comma THEN coalesce(cast_amount(s), parse_amount_slow(s, false))
  ELSE coalesce(CASE WHEN strpos(s, '.') = 0 THEN cast_amount(replace(s, ',', '.')) END, parse_amount_slow(s, true)) END;
-- a number of a column of percentages (a field read in percent): 30 and 30% are both 0.3
CREATE MACRO parse_percent(s, decimal_comma) AS CASE WHEN strpos(s, '%') > 0 THEN parse_amount(s, decimal_comma) ELSE percent_of(parse_amount(s, decimal_comma)) END;
-- whether a cell's separators fit the rule its column is read by, so that no cell is silently
-- read 100 or 1000 times too large or small ("12.00" read with a decimal comma is 1200): its
-- digits with their separators, without currency codes and symbols, signs, parentheses and percent
-- ("US$ (1.234,56)-" is "1.234,56"), must be a number written one way: groups of three digits
-- separated by the other separator (or a space, no-break space, thin space or apostrophe), then at
-- most one decimal separator, then an exponent. A cell without digits, or that reads as no number
-- by either rule (1,1,1 of 90 KB overflows), is unreadable or empty and counted as such; one that
-- only the other rule reads (1.000.000,1 with a decimal point) does not fit.
CREATE MACRO amount_shape(s) AS regexp_replace(
  regexp_replace(regexp_replace(s, '[A-Za-z]{2,}', '', 'g'), '[^0-9.,eE+\\-\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ]', '', 'g'),
  '^[+\\-\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ]+|[+\\-\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ]+$', '', 'g');
-- (a CASE, whose later branches DuckDB evaluates only for the rows the earlier ones leave: most
-- cells hold one separator at most and no grouping space, and fit without a regular expression)
CREATE MACRO separators(s, c) AS length(s) - length(replace(s, c, ''));
CREATE MACRO fits_amount(s, decimal_comma) AS CASE
  WHEN s IS NULL THEN true
  WHEN strpos(s, ' ') = 0 AND strpos(s, '''') = 0 AND separators(s, CASE WHEN decimal_comma THEN '.' ELSE ',' END) = 0
    AND separators(s, CASE WHEN decimal_comma THEN ',' ELSE '.' END) <= 1 THEN true
  WHEN NOT regexp_matches(s, '[0-9]') THEN true
  WHEN parse_amount(s, decimal_comma) IS NULL THEN parse_amount(s, NOT decimal_comma) IS NULL
  WHEN decimal_comma THEN regexp_full_match(amount_shape(s), '([0-9]+|[0-9]{1,3}([.\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ][0-9]{3})+)?(,[0-9]*)?([eE][+\\-]?[0-9]+)?')
  ELSE regexp_full_match(amount_shape(s), '([0-9]+|[0-9]{1,3}([,\\x{00a0}\\x{2009}\\x{202f}\\x{2019}'' ][0-9]{3})+)?([.][0-9]*)?([eE][+\\-]?[0-9]+)?') END;
`;

/** The normalizer ran past its time budget (the statement fails with INGEST_TIME_BUDGET_EXCEEDED). */
class BudgetSpent extends Error {
  override message = 'Interrupted: the time budget is spent';
}

/**
 * Runs `work` within `ms`. Once the budget is spent its queries are interrupted, and again every
 * 50 ms, since an interrupt reaches only the query running at that moment (a small statement's
 * next query would run on); work that still ends after that is refused all the same, so a run
 * past its budget fails whatever it was doing then.
 */
async function withTimeBudget<T>(connections: DuckDBConnection[], ms: number | undefined, work: () => Promise<T>): Promise<T> {
  if (!ms) return work();
  let spent = false;
  let repeat: NodeJS.Timeout | undefined;
  // interrupt, never abort the thread: aborting a worker inside DuckDB kills the process (pitfalls.md)
  const interrupt = () => {
    spent = true;
    for (const c of connections) c.interrupt();
    repeat = setTimeout(interrupt, 50);
  };
  const timer = setTimeout(interrupt, ms);
  try {
    const result = await work();
    if (spent) throw new BudgetSpent();
    return result;
  } finally {
    clearTimeout(timer);
    clearTimeout(repeat);
  }
}

/** A table of distinct raw values (v) and what the reader made of each (o). */
async function fillLookup(connection: DuckDBConnection, table: string, values: string[], outputs: (string | number | null)[]): Promise<void> {
  await connection.run(`CREATE TEMP TABLE ${table} (v VARCHAR, o VARCHAR)`);
  const appender = await connection.createAppender(table);
  for (const [i, v] of values.entries()) {
    const out = outputs[i] ?? null;
    appender.appendVarchar(v);
    if (out === null) appender.appendNull();
    else appender.appendVarchar(String(out));
    appender.endRow();
  }
  appender.closeSync();
}

const memoryLimitMb = (input: NormalizeInput) => input.memoryLimitMb ?? 1024;

/** Promise.all that waits for every query, so none is still running when the connections close. */
async function allOf<T>(work: Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/**
 * How DuckDB reads the file. The strict reader is about twice as fast; a file it refuses (a stray
 * quote, a row with extra cells) is read by the lenient one. DuckDB's parallel reader cannot pad
 * short rows of a file with line breaks inside quotes: such a file is read by its serial reader.
 */
interface Reading {
  strict: boolean;
  serial: boolean;
}

export async function normalizeStatement(original: TaskInput<'normalize'>): Promise<WorkerResult<TaskOutput<'normalize'>>> {
  const deadline = original.timeBudgetMs ? Date.now() + original.timeBudgetMs : null;
  const reading: Reading = { strict: true, serial: false };
  // the rule each column's numbers are read by: the file reader's, unless every number of a column fits only the other
  let input = original;
  for (;;) {
    const instance = await DuckDBInstance.create(':memory:', {
      threads: String(input.threads ?? 2),
      memory_limit: `${memoryLimitMb(input)}MB`,
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
      // spill to the job's own directory rather than failing when a large file exceeds memory_limit
      ...(input.outPath ? { temp_directory: path.join(path.dirname(input.outPath), 'duckdb-tmp') } : {}),
    });
    // two connections: the two parts of a large statement are written at the same time
    const connections = [await connect(instance), await connect(instance)] as const;
    try {
      const budget = deadline === null ? undefined : Math.max(1, deadline - Date.now());
      return await withTimeBudget([...connections], budget, () => run(connections, input, reading));
    } catch (error) {
      // interrupted because the service stops: the work is retried, the statement is not at fault
      if (stopping()) return fail('SERVICE_UNAVAILABLE', 'normalizing was interrupted: the service is stopping');
      if (error instanceof MappingError) return fail('MAPPING_COLUMN_MISSING', error.message);
      if (error instanceof DateOrderError) return fail('DATE_ORDER_AMBIGUOUS', error.message);
      if (error instanceof AmountFormatError) return fail('AMOUNT_FORMAT_CONFLICT', error.message, error.details);
      if (error instanceof FormatSwitch) {
        const header = headerIn(input.header, error.header) ?? error.header;
        input = { ...input, decimalComma: { ...input.decimalComma, [header]: error.decimalComma } };
        continue;
      }
      const message = (error as Error).message ?? String(error);
      if (/interrupt/i.test(message)) return fail('INGEST_TIME_BUDGET_EXCEEDED', 'normalizing the statement took longer than its time budget');
      // a reading the file refuses: again, from the start, with the next one
      if (/CSV Error/i.test(message)) {
        if (!reading.serial && /quoted new ?lines/i.test(message)) {
          reading.serial = true;
          continue;
        }
        if (reading.strict) {
          reading.strict = false;
          continue;
        }
      }
      return fail('STATEMENT_UNREADABLE', `the statement could not be read as a table: ${message.split('\n')[0]!.slice(0, 300)}`);
    } finally {
      for (const c of connections) disconnect(c);
      instance.closeSync();
    }
  }
}

/**
 * Reports the rows of the written pass done so far into `input.progress` (see NormalizeInput),
 * from DuckDB's progress of each part's query (the share of its file read, as the bar DuckDB
 * would print shows it; no bar is printed). A part's estimate is the share of its file's records
 * read, less the records above the data, within its rows; a finished part counts whole.
 * Polling reads a counter of each connection: nothing is added to the queries themselves.
 */
async function watchProgress(connections: readonly DuckDBConnection[], parts: Part[], input: NormalizeInput) {
  const shared = input.progress instanceof SharedArrayBuffer && input.progress.byteLength >= 8 ? new Int32Array(input.progress, 0, 2) : null;
  if (!shared) return { partDone: () => {}, stop: async () => {} };
  const done = parts.map(() => 0);
  const publish = () => {
    const rows = Math.min(2 ** 31 - 1, done.reduce((n, d) => n + d, 0));
    if (rows > Atomics.load(shared, 0)) Atomics.store(shared, 0, rows);
  };
  Atomics.store(shared, 1, Math.min(2 ** 31 - 1, parts.reduce((n, p) => n + p.rows, 0)));
  // session settings: each connection reports the progress of its own query
  for (const c of connections.slice(0, parts.length)) {
    await c.run('SET enable_progress_bar = true');
    await c.run('SET enable_progress_bar_print = false');
  }
  const finished = parts.map(() => false);
  const timer = setInterval(
    () => {
      parts.forEach((part, i) => {
        if (finished[i]) return;
        const percentage = connections[i]!.progress.percentage;
        if (!(percentage > 0)) return;
        // the first part's reader starts at the file's start (its records before the data skipped)
        const records = part.skip + part.rows;
        const read = Math.floor((Math.min(100, percentage) / 100) * records) - part.skip;
        done[i] = Math.max(done[i]!, Math.min(part.rows, Math.max(0, read)));
      });
      publish();
    },
    Math.max(20, input.progressEveryMs ?? 250),
  );
  return {
    partDone(i: number) {
      finished[i] = true;
      done[i] = parts[i]!.rows;
      publish();
    },
    async stop() {
      clearInterval(timer);
      // (after a failed query too: a failure here must not hide the query's own)
      for (const c of connections.slice(0, parts.length)) await c.run('SET enable_progress_bar = false').catch(() => {});
    },
  };
}

/**
 * A stretch of the file's records read by one reader: from record `skip` (DuckDB's skip) of `file`, `rows`
 * rows of which `drops` are not data (repeated headers, blank rows). `rowsBefore` and `keptBefore`
 * count the rows and the data rows of the parts before it; `take` is how many data rows it gives.
 */
interface Part {
  file: string;
  skip: number;
  rows: number;
  drops: number;
  rowsBefore: number;
  keptBefore: number;
  take: number;
}

async function run(connections: readonly [DuckDBConnection, DuckDBConnection], input: NormalizeInput, reading: Reading): Promise<WorkerResult<NormalizeOutput>> {
  const [connection] = connections;
  const width = input.header.length;
  const columnIndex = new Map<string, number>();
  input.header.forEach((h, i) => {
    if (!columnIndex.has(headerKey(h))) columnIndex.set(headerKey(h), i);
  });
  const fields = input.fields;
  // what the file reader found out about a column, by its header as the file has it (the mapping may
  // name it in another case or spacing)
  const decimalCommaOf = (spec: FieldSpec | undefined): boolean => usesDecimalComma(spec, input.header, input.decimalComma);
  const dateOrderOf = (spec: FieldSpec | undefined): DateOrder => {
    if (spec?.format === 'MDY' || spec?.format === 'DMY' || spec?.format === 'YMD' || spec?.format === 'YDM') return spec.format;
    const header = headerIn(input.header, spec?.column);
    return (header !== undefined && input.dateOrder[header]) || 'YMD';
  };
  // a serial read from the file's cells is in the workbook's date system; a constant or variable
  // typed in the mapping (or a period from the file name) is no workbook cell: 1900
  const dateSystemOf = (spec: FieldSpec | undefined): DateSystem =>
    spec?.column !== undefined || spec?.columns !== undefined ? (input.dateSystem ?? 1900) : 1900;
  const one = async (sql: string, c = connection) => (await c.runAndReadAll(sql)).getRows();
  const json = async (sql: string, c = connection) => (await c.runAndReadAll(sql)).getRowsJson();

  const { lap, timings } = stopwatch();
  // the macros, value types and lookup lists live in the database, seen by both connections
  await connection.run(AMOUNT_MACRO);
  // one column more than the header: a cell there is one the mapping cannot name (counted, flagged)
  const columnsDef = [...Array.from({ length: width }, (_, i) => `'c${i}': 'VARCHAR'`), `'cx': 'VARCHAR'`].join(', ');
  const extraCell = `count(*) FILTER (WHERE cx IS NOT NULL AND trim(cx) <> '')`;
  const cells = Array.from({ length: width }, (_, i) => `c${i}`).join(', ');
  const headerMatch = `(${input.header.map((h, i) => `coalesce(trim(c${i}), '') = ${lit(h.trim())}`).join(' AND ')})`;
  const allEmpty = `(${Array.from({ length: width }, (_, i) => `coalesce(trim(c${i}), '') = ''`).join(' AND ')})`;
  // most rows show they are data by one cell (not empty, not the header's, no spaces to trim): the
  // amount's, as every data row has one, else the first. The full tests, which trim every cell,
  // run only for the others (a CASE evaluates its ELSE for those rows only).
  const guardIndex = columnIndex.get(headerKey(fields.royaltyEarnings?.column ?? '')) ?? 0;
  const guard = `c${guardIndex}`;
  const guardHeader = input.header[guardIndex]!.trim();
  const surelyData = `(${guard} IS NOT NULL AND ${guard} <> '' AND ${guard} <> ${lit(guardHeader)} AND NOT starts_with(${guard}, ' ') AND NOT ends_with(${guard}, ' '))`;
  const headerRow = `(CASE WHEN ${surelyData} THEN false ELSE ${headerMatch} END)`;
  const blankRow = `(CASE WHEN ${surelyData} THEN false ELSE ${allEmpty} END)`;
  const notData = `(CASE WHEN ${surelyData} THEN false ELSE ${headerMatch} OR ${allEmpty} END)`;
  const t = (f: StandardField) => ident(`t_${f}`);
  const numeric = (f: StandardField) => fieldKinds[f] === 'amount' || fieldKinds[f] === 'quantity' || fieldKinds[f] === 'percent';
  const textOfField = (f: StandardField) => `CAST(${textExpr(fields[f], columnIndex, input, numeric(f))} AS VARCHAR)`;
  const fieldTexts = standardFields.map((f) => `${textOfField(f)} AS ${t(f)}`);
  const { strict, serial } = reading;
  const reader = (skip: number, file = input.csvPath) =>
    `read_csv(${lit(file)}, ${[
      `delim=${lit(input.delimiter)}`,
      // without quoting: DuckDB's lenient reader drops a lone quote character even with quote='' (12" became 12),
      // so it gets a control character no statement holds as its quote instead
      input.quote === '' ? (strict ? `quote=''` : `quote=${lit(NO_QUOTE)}, escape=${lit(NO_QUOTE)}`) : `quote='"', escape='"'`,
      'header=false',
      `skip=${skip}`,
      'all_varchar=true',
      'null_padding=true',
      `strict_mode=${strict}`,
      'auto_detect=false',
      `columns={${columnsDef}}`,
      ...(serial ? ['parallel=false'] : []),
    ].join(', ')})`;
  const firstRecord = input.headerLine + 1;

  // the fields read once per distinct value; fields read from the same cells (a date giving both
  // the year and the period, a month both the start and the end) share their text: its distinct
  // values are read once and become one ENUM
  const perValue: StandardField[] = ['stmtYear', 'stmtPeriod', 'stmtCadence', 'salesPeriodStart', 'salesPeriodEnd', 'currency', 'country', 'isrc', 'upc', 'iswc'];
  const shared = new Map<string, StandardField>();
  const textOf = (f: StandardField): StandardField => {
    const expr = textExpr(fields[f], columnIndex, input);
    if (!shared.has(expr)) shared.set(expr, f);
    return shared.get(expr)!;
  };
  const textFields = [...new Set(perValue.map(textOf))];
  // their distinct values, with the rows whose amount cell is empty, in one pass over the data rows
  // a percentage field's scale is one per field, from all its values (unless its format says it):
  // a value with `%`, or a bare number above 1 (in magnitude), makes every number of it a percentage
  // (30 and 30% are 0.3); numbers of 0..1 only are fractions. Counted by the same pass, per column read.
  const sumsColumns = (spec: FieldSpec | undefined): spec is FieldSpec & { columns: string[] } =>
    spec?.columns !== undefined && spec.columns.length > 1 && spec.pick !== 'first';
  const cellOf = (column: string) => {
    const i = columnIndex.get(headerKey(column));
    if (i === undefined) throw new MappingError(`the mapping reads column "${column}", which this statement does not have`);
    return `cell(c${i})`;
  };
  /** the values a percentage field reads: each column of a sum, else its one value */
  const percentParts = (f: StandardField): string[] => {
    const spec = fields[f];
    return sumsColumns(spec) ? spec.columns.map(cellOf) : [textExpr(spec, columnIndex, input, true)];
  };
  const percentSources = standardFields
    .filter((f) => fieldKinds[f] === 'percent' && fields[f] !== undefined && fields[f]!.format !== 'percent' && fields[f]!.format !== 'fraction')
    .flatMap((f) => percentParts(f).map((expr) => ({ f, expr, dc: decimalCommaOf(fields[f]) ? 'true' : 'false' })));
  const pct = (i: number) => ident(`p_${i}`);
  const formats = formatChecks(fields, cellOf, decimalCommaOf);
  const fit = (i: number) => ident(`fit_${i}`);
  const distinctAggregates = (where: string) =>
    `${textFields.map((f) => `list(DISTINCT ${t(f)}) FILTER (WHERE ${where} ${t(f)} IS NOT NULL)`).join(', ')},
      count(*) FILTER (WHERE ${where} no_amount(${t('royaltyEarnings')}))${percentSources
        .map((p, i) => `, count(*) FILTER (WHERE ${where} (strpos(${pct(i)}, '%') > 0 OR abs(parse_amount(${pct(i)}, ${p.dc})) > 1))`)
        .join('')}${formats.map((_, i) => `, count(*) FILTER (WHERE ${where} NOT ${fit(i)})`).join('')}`;
  const textColumns = [
    ...[...textFields, 'royaltyEarnings' as const].map((f) => `${textOfField(f)} AS ${t(f)}`),
    ...percentSources.map((p, i) => `CAST(${p.expr} AS VARCHAR) AS ${pct(i)}`),
    ...formats.map((c, i) => `${c.fits(c.decimalComma)} AS ${fit(i)}`),
  ].join(', ');

  // one parallel pass over the file: its rows, the rows that are not data, the distinct values.
  // First reading only the cells those need: when every row is surely data, that is all; else again
  // with every cell, to tell the rows that are not data.
  const quickSurvey = `SELECT count(*), 0, 0, ${extraCell}, ${distinctAggregates('sure AND')}, count(*) FILTER (WHERE NOT sure) FROM (
      SELECT ${surelyData} AS sure, cx, ${textColumns} FROM ${reader(firstRecord)})`;
  const fullSurvey = `SELECT count(*), count(*) FILTER (WHERE header_row), count(*) FILTER (WHERE blank_row AND NOT header_row), ${extraCell},
      ${distinctAggregates('NOT (header_row OR blank_row) AND')} FROM (
      SELECT ${headerRow} AS header_row, ${blankRow} AS blank_row, cx, ${textColumns} FROM ${reader(firstRecord)})`;
  const survey = async (): Promise<unknown[]> => {
    const quick = (await json(quickSurvey))[0]!;
    return Number(quick.pop()) === 0 ? quick : (await json(fullSurvey))[0]!;
  };
  // a large statement is read by two readers at once: the first from the start, stopped by a
  // LIMIT, the second from a copy of the file from the record the file reader chose in the file's
  // second half (DuckDB's skip holds the lines it skips in memory), when the strict reader reads
  // the file (so it splits records as the file reader did) and the second part holds the whole
  // footer. The copy is made, and its rows counted (counting reads no cells), while the survey runs.
  const splitOffset = input.splitOffset;
  const splitting = splitOffset !== undefined && splitOffset > 0 && strict && !!input.outPath && !input.variantsOnly && !input.range;
  const secondFile = `${input.outPath}.second.csv`;
  const [surveyed, secondRows] = (await allOf<unknown>([
    survey(),
    splitting
      ? pipeline(createReadStream(input.csvPath, { start: splitOffset, highWaterMark: 1 << 20 }), createWriteStream(secondFile)).then(async () =>
          Number((await one(`SELECT count(*) FROM ${reader(0, secondFile)}`, connections[1]))[0]![0]),
        )
      : Promise.resolve(0),
  ])) as [unknown[], number];
  lap('read');
  const total = Number(surveyed[0]);
  const headerRows = Number(surveyed[1]);
  const blankRows = Number(surveyed[2]);
  const drops = headerRows + blankRows;
  // the footer: the last records that are not otherwise dropped, as the file reader counted them
  const footer = Math.min(Math.max(0, Math.floor(input.footerRecords)), total - drops);

  const whole: Part = { file: input.csvPath, skip: firstRecord, rows: total, drops, rowsBefore: 0, keptBefore: 0, take: total - drops - footer };
  let parts: Part[] = [whole];
  if (splitting) {
    const rows2 = secondRows;
    const drops2 = drops > 0 ? Number((await one(`SELECT count(*) FILTER (WHERE ${notData}) FROM ${reader(0, secondFile)}`))[0]![0]) : 0;
    const rows1 = total - rows2;
    const drops1 = drops - drops2;
    if (rows2 > 0 && rows1 > 0 && drops1 >= 0 && rows2 - drops2 >= footer) {
      parts = [
        { file: input.csvPath, skip: firstRecord, rows: rows1, drops: drops1, rowsBefore: 0, keptBefore: 0, take: rows1 - drops1 },
        { file: secondFile, skip: 0, rows: rows2, drops: drops2, rowsBefore: rows1, keptBefore: rows1 - drops1, take: rows2 - drops2 - footer },
      ];
    }
  }
  const range = input.range;
  // the data rows of a part in file order, numbered 1.. across parts without the dropped rows:
  // that is source_row. row_number() over a single reader's rows keeps their order; LIMIT stops
  // the first part's reader at the second part and the last one's before the footer.
  const keptOf = (part: Part, columns: string, window = range) => {
    const take = window ? Math.max(0, Math.min(part.take, Math.floor(window.end) - 1 - part.keptBefore)) : part.take;
    const where = window ? `WHERE source_row >= ${Math.floor(window.start)}` : '';
    return `(SELECT * FROM (SELECT k + ${part.keptBefore} AS source_row, ${columns} FROM (
      SELECT row_number() OVER () AS k, * FROM ${reader(part.skip, part.file)} ${drops > 0 ? `WHERE NOT ${notData}` : ''} LIMIT ${take})) ${where})`;
  };
  // the raw cells stay reachable from kept (amounts summed over several columns read them)
  const texts = [...fieldTexts, cells].join(',\n      ');

  const writeVariants = async () => {
    if (input.trimmedPath) {
      const named = input.header.map((h, i) => `c${i} AS ${ident(h)}`).join(', ');
      await connection.run(`COPY (SELECT ${named} FROM ${keptOf(whole, cells)}) TO ${lit(input.trimmedPath)} (FORMAT csv, HEADER true)`);
    }
    if (input.standardizedPath) {
      const cols = standardFields.filter((f) => fields[f] !== undefined).map((f) => `${t(f)} AS ${ident(f)}`);
      await connection.run(`COPY (SELECT source_row AS "sourceRow"${cols.length ? ', ' : ''}${cols.join(', ')} FROM ${keptOf(whole, texts)})
        TO ${lit(input.standardizedPath)} (FORMAT csv, HEADER true)`);
    }
  };
  if (input.variantsOnly) {
    await writeVariants();
    return { ok: true, ...emptyOutput() };
  }

  // footer records are data to the survey: with a footer, the distinct values are read again from
  // the data rows alone (each part on its own connection)
  const extraCells = Number(surveyed[3]);
  const reread = async (window: typeof range) => {
    const rows = await allOf(parts.map((part, i) => json(`SELECT ${distinctAggregates('')} FROM ${keptOf(part, textColumns, window)}`, connections[i])));
    const row: unknown[] = textFields.map((_, j) => [...new Set(rows.flatMap((r) => (r[0]![j] as unknown[] | null) ?? []))]);
    row.push(rows.reduce((n, r) => n + Number(r[0]![textFields.length]), 0));
    percentSources.forEach((_, i) => row.push(rows.reduce((n, r) => n + Number(r[0]![textFields.length + 1 + i]), 0)));
    formats.forEach((_, i) => row.push(rows.reduce((n, r) => n + Number(r[0]![textFields.length + 1 + percentSources.length + i]), 0)));
    return row;
  };
  // the values read (and looked up) are those of the rows written: a preview's window
  const distinctRow = footer > 0 || range ? await reread(range) : surveyed.slice(4);
  // what a column's values decide for all of them (a percentage's scale, year-first dates' order)
  // comes from every data row, so that a preview's window reads its rows as the pipeline does
  const decidingRow = !range ? distinctRow : footer > 0 ? await reread(undefined) : surveyed.slice(4);
  lap('drops');
  // every data row's numbers must fit the rule their field is read by
  for (const [i, check] of formats.entries()) {
    if (Number(decidingRow[textFields.length + 1 + percentSources.length + i] ?? 0) > 0) await judgeFormat(check, one, (cells) => keptOf(whole, cells, undefined));
  }
  const listOf = (v: unknown): string[] => ((v as unknown[] | null) ?? []).map(String).sort();
  const missingAmounts = Number(distinctRow[textFields.length] ?? 0);
  const inPercent = new Set(percentSources.filter((_, i) => Number(decidingRow[textFields.length + 1 + i] ?? 0) > 0).map((p) => p.f));
  const readsPercent = (f: StandardField) => fields[f]?.format === 'percent' || (fields[f]?.format !== 'fraction' && inPercent.has(f));
  const distinctOfText = new Map(textFields.map((f, i) => [f, listOf(distinctRow[i])]));
  const distinct = new Map(perValue.map((f) => [f, distinctOfText.get(textOf(f))!]));
  // a column's year-first dates in the order its values tell (TuneCore's older 2014/15/06 is
  // year/day/month); one whose values read both ways follows the statement's other date columns
  const dateFields = ['stmtYear', 'stmtPeriod', 'stmtCadence', 'salesPeriodStart', 'salesPeriodEnd'] as const;
  const yearFirst = new Map<StandardField, 'YMD' | 'YDM' | null>();
  for (const f of dateFields) {
    const spec = fields[f];
    // (an order the mapping states for a field tells it for the statement's other date fields)
    if (spec?.format === 'YMD' || spec?.format === 'YDM') yearFirst.set(f, spec.format);
    else if (spec?.column !== undefined || spec?.columns !== undefined) yearFirst.set(f, yearFirstOrder(listOf(decidingRow[textFields.indexOf(textOf(f))])));
  }
  const told = new Set([...yearFirst.values()].filter((o) => o !== null));
  const statementYearFirst = told.size === 1 ? [...told][0]! : null;
  const orderOf = (f: (typeof dateFields)[number]): DateOrder => {
    const spec = fields[f];
    const order = dateOrderOf(spec);
    if (spec?.format === 'YMD' || spec?.format === 'YDM' || order !== 'YMD' || !yearFirst.has(f)) return order;
    let told = yearFirst.get(f) ?? statementYearFirst;
    if (told === null) {
      // slashed year-first dates (2014/01/06) that no date of the statement decides are not
      // guessed: year/day/month (TuneCore's older exports) would move every row to another month.
      // Only dates that are each the first of a month as year/month/day tell (periods, 2024/03/01).
      const values = listOf(decidingRow[textFields.indexOf(textOf(f))]);
      if (firstOfMonthYearFirst(values)) told = 'YMD';
      const example = told === null ? ambiguousYearFirst(values) : null;
      if (example !== null) {
        throw new DateOrderError(
          `The dates of column "${spec?.column ?? spec?.columns?.join('", "')}" (such as ${example}) read both as year/month/day and as year/day/month, and no date of the statement tells which: set the field's format to 'YMD' or 'YDM' in the mapping.`,
        );
      }
    }
    return told === 'YDM' ? 'YDM' : 'YMD';
  };
  // per looked-up column, the list of the reader's outputs in the order of its ENUM (see perDistinct)
  const lists: string[] = [];
  const select: Record<string, string> = {};

  const enums = new Set<StandardField>();
  // a field read per distinct value: its distinct values become an ENUM type, and the reader's
  // outputs a list in the ENUM's order, in a one-row table cross-joined to the rows; a row's output
  // is the list element at its value's ENUM code. Unlike a hash join (whose LEFT form moves a
  // chunk's unmatched rows, such as NULL keys, to the chunk's end, and which DuckDB never counts
  // as order-preserving), this is a projection: the rows keep the file's order. A field that is
  // empty on every row (NULL) and a constant of the mapping (its value, inlined) need no list.
  const perDistinct = async (f: StandardField, column: string, read: (v: string) => string | number | null, type: string) => {
    const values = distinct.get(f) ?? [];
    const spec = fields[f];
    const constant = spec !== undefined && spec.column === undefined && spec.columns === undefined;
    const outputs = values.map(read);
    if (values.length === 0 || (constant && values.length === 1)) {
      const o = outputs[0] ?? null;
      select[column] = o === null ? `CAST(NULL AS ${type})` : `CAST(${lit(String(o))} AS ${type})`;
      return;
    }
    if (type === 'VARCHAR' && outputs.every((o, i) => o === values[i])) {
      // the reader keeps every value as it is (codes already clean): the cells themselves
      select[column] = `kept.${t(textOf(f))}`;
    } else {
      const table = `lk_${column}`;
      const text = textOf(f);
      const enumType = `e_${snake(text)}`;
      await fillLookup(connection, table, values, outputs);
      if (!enums.has(text)) {
        await connection.run(`CREATE TYPE ${enumType} AS ENUM (SELECT v FROM ${table})`);
        enums.add(text);
      }
      lists.push(`(SELECT list(CAST(o AS ${type}) ORDER BY enum_code(CAST(v AS ${enumType}))) FROM ${table}) AS m_${column}`);
      select[column] = `lk.m_${column}[enum_code(CAST(kept.${t(text)} AS ${enumType})) + 1]`;
    }
  };

  for (const f of ['stmtYear', 'stmtPeriod', 'stmtCadence'] as const) {
    const spec = fields[f];
    const cadenceWanted: Cadence | null =
      spec?.format === 'month' ? 'M' : spec?.format === 'quarter' ? 'Q' : spec?.format === 'half' ? 'H' : spec?.format === 'year' ? 'Y' : null;
    const order = orderOf(f);
    const dates = { dateSystem: dateSystemOf(spec) };
    const read = (v: string): string | number | null => {
      const plain = /^\d{1,4}$/.test(v.trim()) ? Number(v.trim()) : null;
      if (f === 'stmtCadence') return parseCadence(v) ?? parsePeriod(v, order, dates)?.cadence ?? null;
      if (plain !== null && (f === 'stmtPeriod' ? plain >= 1 && plain <= 12 : plain >= 1900 && plain <= 2200)) return plain;
      let p = parsePeriod(v, order, dates);
      if (p && cadenceWanted && p.cadence === 'M') p = periodFromDate(p.start, cadenceWanted);
      if (!p) return null;
      return f === 'stmtYear' ? p.year : p.period;
    };
    await perDistinct(f, snake(f), read, f === 'stmtCadence' ? 'VARCHAR' : 'INTEGER');
  }

  for (const f of ['salesPeriodStart', 'salesPeriodEnd'] as const) {
    const order = orderOf(f);
    const dates = { dateSystem: dateSystemOf(fields[f]) };
    await perDistinct(
      f,
      snake(f),
      (v) => {
        const d = parseDate(v, order, dates);
        if (d) return d;
        // a month or quarter written as a period: its first (start) or last (end) day
        const p = parsePeriod(v, order, dates);
        return p ? (f === 'salesPeriodStart' ? p.start : p.end) : null;
      },
      'DATE',
    );
  }

  const simple: [StandardField, string, (v: string) => string | null][] = [
    ['currency', 'currency', parseCurrency],
    ['country', 'country', parseCountry],
    ['isrc', 'isrc', normalizeIsrc],
    ['upc', 'upc', normalizeUpc],
    ['iswc', 'iswc', normalizeIswc],
  ];
  for (const [f, column, read] of simple) await perDistinct(f, column, read, 'VARCHAR');

  for (const f of standardFields) {
    const kind = fieldKinds[f];
    if (kind === 'amount' || kind === 'quantity' || kind === 'percent') {
      const spec = fields[f];
      const dc = decimalCommaOf(spec) ? 'true' : 'false';
      const parse = kind === 'percent' && readsPercent(f) ? 'parse_percent' : 'parse_amount';
      if (sumsColumns(spec)) {
        // amounts from several columns are summed, not concatenated (pick 'first' reads one of them)
        const parts = spec.columns.map((c) => `coalesce(${parse}(${cellOf(c)}, ${dc}), 0)`);
        select[snake(f)] = `(${parts.join(' + ')})`;
      } else {
        select[snake(f)] = `${parse}(kept.${t(f)}, ${dc})`;
      }
    } else if (kind === 'text') {
      select[snake(f)] = `kept.${t(f)}`;
    }
  }
  if (lists.length > 0) await connection.run(`CREATE TABLE lk AS SELECT ${lists.join(', ')}`);
  const from = (part: Part) => `${keptOf(part, texts)} kept${lists.length > 0 ? ' CROSS JOIN lk' : ''}`;

  const projection = normalizedColumns.map((c) => {
    switch (c) {
      case 'organization_id':
        return `${lit(input.organizationId)}::UUID AS organization_id`;
      case 'statement_id':
        return `${lit(input.statementId)}::UUID AS statement_id`;
      case 'rightsholder_id':
        return `${lit(input.rightsholderId)}::UUID AS rightsholder_id`;
      case 'source_row':
        return 'CAST(kept.source_row AS BIGINT) AS source_row';
      case 'country_raw':
        return `kept.${t('country')} AS country_raw`;
      case 'isrc_raw':
        return `kept.${t('isrc')} AS isrc_raw`;
      case 'upc_raw':
        return `kept.${t('upc')} AS upc_raw`;
      default:
        return `${select[c] ?? 'NULL'} AS ${c}`;
    }
  });
  // no ORDER BY: one reader's rows keep the file's order through the projections and the one-row
  // cross join of the lists, and are written in that order (the tests check source_row runs 1..n
  // in the written file)
  lap('lookups');
  const query = (part: Part) => `SELECT ${projection.join(', ')} FROM ${from(part)}`;
  let target: string;
  if (input.outPath) {
    const options = '(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)';
    const progress = await watchProgress(connections, parts, input);
    try {
      if (parts.length === 1) {
        await connection.run(`COPY (${query(whole)}) TO ${lit(input.outPath)} ${options}`);
        progress.partDone(0);
      } else {
        // each part written by its own connection, then joined into one file without decoding a page
        const partPaths = parts.map((_, i) => `${input.outPath}.part${i}`);
        // each query runs on the thread that calls it (libuv's, one per connection) plus DuckDB's own
        // workers: with none of those, the two parts take exactly the two cores
        await connection.run(`SET threads = 1`);
        await allOf(parts.map((part, i) => connections[i]!.run(`COPY (${query(part)}) TO ${lit(partPaths[i]!)} ${options}`).then(() => progress.partDone(i))));
        await connection.run(`SET threads = ${input.threads ?? 2}`);
        await concatParquet(partPaths, input.outPath);
        await Promise.all(partPaths.map((p) => rm(p, { force: true })));
      }
    } finally {
      await progress.stop();
    }
    target = `read_parquet(${lit(input.outPath)})`;
  } else {
    await connection.run(`CREATE TEMP TABLE normalized AS ${query(whole)} ORDER BY source_row`);
    target = 'normalized';
  }
  lap('write');
  if (input.removedPath) {
    await connection.run(`CREATE TABLE removed_rows (record BIGINT, reason VARCHAR, ${Array.from({ length: width }, (_, i) => `c${i} VARCHAR`).join(', ')})`);
    if (drops + footer > 0) {
      // the last part's last rows hold the footer and perhaps rows that are not data: read with
      // their record numbers by a parallel LIMIT .. OFFSET
      const last = parts[parts.length - 1]!;
      const tail = Math.min(last.rows, footer + last.drops);
      const reason = `CASE WHEN ${headerMatch} THEN 'repeated_header' WHEN ${allEmpty} THEN 'blank' END`;
      await connection.run(`INSERT INTO removed_rows SELECT row_number() OVER () + ${last.rowsBefore + last.rows - tail}, ${reason}, ${cells}
        FROM (SELECT * FROM ${reader(last.skip, last.file)} LIMIT ${tail} OFFSET ${last.rows - tail})`);
      // the footer: the last rows there that are data to the reader
      await connection.run(`UPDATE removed_rows SET reason = 'footer' WHERE record IN (
        SELECT record FROM removed_rows WHERE reason IS NULL ORDER BY record DESC LIMIT ${footer})`);
      await connection.run(`DELETE FROM removed_rows WHERE reason IS NULL`);
      // rows that are not data further up are found by reading every part with record numbers
      const inTail = Number((await one(`SELECT count(*) FROM removed_rows WHERE reason <> 'footer'`))[0]![0]);
      if (inTail < drops) {
        await allOf(
          parts.map((part, i) =>
            connections[i]!.run(`INSERT INTO removed_rows SELECT rn + ${part.rowsBefore}, ${reason}, ${cells} FROM (
              SELECT row_number() OVER () AS rn, * FROM ${reader(part.skip, part.file)} LIMIT ${part === last ? part.rows - tail : part.rows}) WHERE ${notData}`),
          ),
        );
      }
    }
    await connection.run(`COPY (SELECT record, reason, ${cells} FROM removed_rows ORDER BY record) TO ${lit(input.removedPath)} (FORMAT csv, HEADER true)`);
  }
  if (splitting) await rm(secondFile, { force: true });
  lap('removed');
  const droppedRows = [
    { reason: 'blank', rows: blankRows },
    { reason: 'footer', rows: footer },
    { reason: 'repeated_header', rows: headerRows },
  ].filter((d) => d.rows > 0);
  // the issue counts need only the written rows: a raw identifier is written beside its normalized
  // form, and an amount is NULL exactly when its cell was empty or unreadable
  const totals = (await one(`SELECT count(*), sum(royalty_earnings), sum(gross_royalty_earnings), sum(units),
      min(sales_period_start), max(coalesce(sales_period_end, sales_period_start)),
      count(*) FILTER (WHERE royalty_earnings IS NULL),
      count(*) FILTER (WHERE isrc_raw IS NOT NULL AND isrc IS NULL),
      count(*) FILTER (WHERE upc_raw IS NOT NULL AND upc IS NULL),
      count(*) FILTER (WHERE stmt_year IS NULL OR stmt_period IS NULL OR stmt_cadence IS NULL) FROM ${target}`))[0]!;
  const perCurrency = (await one(`SELECT currency, count(*), sum(royalty_earnings), sum(gross_royalty_earnings), sum(units)
      FROM ${target} GROUP BY currency ORDER BY currency NULLS LAST`)).map((r) => ({
    currency: r[0] === null ? null : String(r[0]),
    rows: Number(r[1]),
    net: r[2] === null ? null : String(r[2]),
    gross: r[3] === null ? null : String(r[3]),
    units: r[4] === null ? null : String(r[4]),
  }));
  const stmtRows = await one(`SELECT stmt_year, stmt_period, stmt_cadence, count(*) AS n FROM ${target}
      WHERE stmt_year IS NOT NULL AND stmt_period IS NOT NULL AND stmt_cadence IS NOT NULL
      GROUP BY ALL ORDER BY n DESC, stmt_year DESC, stmt_period DESC`);
  const rawValues: NormalizeOutput['rawValues'] = [];
  for (const [kind, column] of [['sales_type', 'sales_type'], ['source', 'source']] as const) {
    const byCurrency = await one(
      `SELECT ${column}, currency, count(*), sum(royalty_earnings), sum(sum(royalty_earnings)) OVER (PARTITION BY ${column})
       FROM ${target} WHERE ${column} IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2 NULLS LAST`,
    );
    for (const r of byCurrency) {
      const raw = String(r[0]);
      const amount = { currency: r[1] === null ? null : String(r[1]), amount: r[3] === null ? null : String(r[3]) };
      const last = rawValues.at(-1);
      if (last && last.kind === kind && last.raw === raw) {
        last.rows += Number(r[2]);
        last.amounts.push(amount);
      } else {
        rawValues.push({ kind, raw, rows: Number(r[2]), amount: r[4] === null ? null : String(r[4]), amounts: [amount] });
      }
    }
  }
  const payors = (await one(`SELECT DISTINCT payor FROM ${target} WHERE payor IS NOT NULL ORDER BY 1 LIMIT 1000`)).map((r) => String(r[0]));
  const unknownCountries = (await one(`SELECT DISTINCT country_raw FROM ${target} WHERE country_raw IS NOT NULL AND country IS NULL ORDER BY 1 LIMIT 50`)).map((r) => String(r[0]));
  // the currency reader's misses among the distinct raw values of the kept rows
  const unknownCurrencies = (distinct.get('currency') ?? []).filter((v) => parseCurrency(v) === null).sort().slice(0, 50);
  // amounts summed over several columns are never NULL (an unreadable part counts as 0)
  const multiColumnAmount = sumsColumns(fields.royaltyEarnings);
  const invalidAmounts = multiColumnAmount ? 0 : Math.max(0, Number(totals[6]) - missingAmounts);
  // the statement's period: its rows' one, else the quarter, half or year that holds all of
  // theirs, else (rows of two calendar years) the most common
  const periods = stmtRows.map((r) => periodOf(Number(r[0]), Number(r[1]), String(r[2]) as Cadence)).filter((p): p is Period => p !== null);
  const covering = periods.length === stmtRows.length ? coveringPeriod(periods) : null;
  const stmt = covering ? { year: covering.year, period: covering.period, cadence: covering.cadence } : stmtRows[0] ? { year: Number(stmtRows[0][0]), period: Number(stmtRows[0][1]), cadence: String(stmtRows[0][2]) as Cadence } : null;
  // money of several currencies is never added up: the statement's totals are then per currency only
  const oneCurrency = perCurrency.length <= 1;
  lap('figures');
  const output: NormalizeOutput = {
    timings,
    decimalComma: input.decimalComma,
    dataRows: total,
    keptRows: Number(totals[0]),
    dropped: droppedRows,
    net: totals[1] === null || !oneCurrency ? null : String(totals[1]),
    gross: totals[2] === null || !oneCurrency ? null : String(totals[2]),
    units: totals[3] === null ? null : String(totals[3]),
    perCurrency,
    stmt,
    stmtPeriods: stmtRows.length,
    salesPeriodStart: totals[4] === null ? null : String(totals[4]),
    salesPeriodEnd: totals[5] === null ? null : String(totals[5]),
    rawValues,
    payors,
    issues: {
      invalidAmounts,
      missingAmounts,
      invalidIsrc: Number(totals[7]),
      invalidUpc: Number(totals[8]),
      missingStmtPeriod: Number(totals[9]),
      extraCells,
      unknownCountries,
      unknownCurrencies,
    },
  };
  if (!input.outPath) {
    const reader = await connection.runAndReadAll(`SELECT * EXCLUDE (organization_id, statement_id, rightsholder_id) FROM normalized ORDER BY source_row LIMIT 1000`);
    output.preview = reader.getRowObjectsJson() as Record<string, unknown>[];
  }
  return { ok: true, ...output };
}

