// The plan of a normalizer run: everything known before a row is read, from the input alone. The
// SQL of the raw cells (c0..cN, one column more than the header: cx), of the rows that are not
// data, of each field's text, and of the pass that gathers the distinct values; the stages
// (survey.ts, lookups.ts, write.ts, figures.ts) read it and add what they find.
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  fieldKinds,
  headerIn,
  headerKey,
  standardFields,
  usesDecimalComma,
  type StandardField,
} from '../../src/ingest/standardFields.ts';
import {
  formulaProblem,
  formulaText,
  type FieldSpec,
  type MappingFields,
} from '../../src/ingest/mappingFields.ts';
import { fromFileName, type DateOrder, type DateSystem } from '../../src/ingest/values.ts';
import type { NormalizeInput } from '../../src/ingest/normalizeTypes.ts';
import { byRule } from './amountMacro.ts';
import { FormulaError, MappingError } from './errors.ts';
import { formatChecks, type FormatCheck } from './formats.ts';
import { ident, lit, NO_QUOTE } from './sql.ts';

/**
 * How DuckDB reads the file. The strict reader is about twice as fast; a file it refuses (a stray
 * quote, a row with extra cells) is read by the lenient one. DuckDB's parallel reader cannot pad
 * short rows of a file with line breaks inside quotes: such a file is read by its serial reader.
 */
export interface Reading {
  strict: boolean;
  serial: boolean;
}

/** The fields read once per distinct value (their raw text looked up, see lookups.ts). */
export const PER_VALUE_FIELDS: StandardField[] = [
  'stmtYear',
  'stmtPeriod',
  'stmtCadence',
  'salesPeriodStart',
  'salesPeriodEnd',
  'currency',
  'country',
  'isrc',
  'upc',
  'iswc',
];

/** A percentage field's value read without a stated scale (counted by the survey to decide it). */
export interface PercentSource {
  f: StandardField;
  expr: string;
  /** the SQL boolean of its decimal comma */
  dc: 'true' | 'false';
}

/** SQL conditions over one raw row. */
export interface RowTests {
  /** a cell beyond the header's last column, counted */
  extraCell: string;
  /** the row repeats the header */
  headerMatch: string;
  /** every cell empty */
  allEmpty: string;
  /** a row that shows it is data by one cell, without the full tests */
  surelyData: string;
  headerRow: string;
  blankRow: string;
  notData: string;
}

/**
 * A numeric field read from its text alone (not a product, nor a sum of columns): the survey
 * counts its cells that are not plain numbers (plain_number), and one without such cells is read
 * by plain_amount alone.
 */
export interface PlainCheck {
  f: StandardField;
  /** the SQL boolean of its decimal comma */
  dc: 'true' | 'false';
}

export interface Plan {
  input: NormalizeInput;
  fields: MappingFields;
  reading: Reading;
  /** the first writes everything; the second reads the second part of a split statement */
  connections: readonly [DuckDBConnection, DuckDBConnection];
  /** the header's width: the raw cells are c0..c(width-1) */
  width: number;
  columnIndex: Map<string, number>;
  /** every raw cell: c0, c1, … */
  cells: string;
  rows: RowTests;
  /** the record of the first row below the header */
  firstRecord: number;
  /** the text fields per distinct value: fields read from the same cells share one (textOf) */
  textFields: StandardField[];
  percentSources: PercentSource[];
  formats: FormatCheck[];
  plainChecks: PlainCheck[];
  /** the text of every field, then the raw cells: the columns of kept rows that are written */
  texts: string;
  /** the text columns the survey and the rereads aggregate */
  textColumns: string;
  /** a statement large enough, and read strictly, is read by two readers from `secondFile` on */
  splitting: boolean;
  /** a file of up to SMALL_FILE_BYTES: its distinct values are gathered without hash tables (distinctAggregates) */
  small: boolean;
  secondFile: string;
}

/** A query's rows, on the first connection unless told. */
export const rowsOf = async (plan: Plan, sql: string, c: DuckDBConnection = plan.connections[0]) =>
  (await c.runAndReadAll(sql)).getRows();
export const jsonOf = async (plan: Plan, sql: string, c: DuckDBConnection = plan.connections[0]) =>
  (await c.runAndReadAll(sql)).getRowsJson() as unknown[][];

/** The column of a field's text (t_<field>). */
export const t = (f: StandardField) => ident(`t_${f}`);
/** The column of a percentage source's value, and of a format check's fit, in the survey's rows. */
export const pct = (i: number) => ident(`p_${i}`);
export const fit = (i: number) => ident(`fit_${i}`);

const numeric = (f: StandardField) =>
  fieldKinds[f] === 'amount' || fieldKinds[f] === 'quantity' || fieldKinds[f] === 'percent';

/** Amounts from several columns are summed (pick 'first' reads one of them). */
export const sumsColumns = (
  spec: FieldSpec | undefined,
): spec is FieldSpec & { columns: string[] } =>
  spec?.columns !== undefined && spec.columns.length > 1 && spec.pick !== 'first';

/** A raw cell by the header name the mapping gives it. */
export function cellOf(plan: Pick<Plan, 'columnIndex'>, column: string): string {
  const i = plan.columnIndex.get(headerKey(column));
  if (i === undefined)
    throw new MappingError(
      `the mapping reads column "${column}", which this statement does not have`,
    );
  return mappedCell(i);
}

/**
 * The column of a raw cell as the mapping reads it (cell(cN): trimmed, NULL when empty), computed
 * once per row by the reader (see reader). DuckDB expands a macro's body at every use of its
 * argument: written as cell(cN) inside the amount macros, the cell's CASE was bound again at each
 * of the dozens of uses, and binding those trees was most of a small statement's time.
 */
export const mappedCell = (i: number) => `m${i}`;

// what the file reader found out about a column, by its header as the file has it (the mapping may
// name it in another case or spacing)
export const decimalCommaOf = (input: NormalizeInput, spec: FieldSpec | undefined): boolean =>
  usesDecimalComma(spec, input.header, input.decimalComma);

export function dateOrderOf(input: NormalizeInput, spec: FieldSpec | undefined): DateOrder {
  if (
    spec?.format === 'MDY' ||
    spec?.format === 'DMY' ||
    spec?.format === 'YMD' ||
    spec?.format === 'YDM'
  )
    return spec.format;
  const header = headerIn(input.header, spec?.column);
  return (header !== undefined && input.dateOrder[header]) || 'YMD';
}

// a serial read from the file's cells is in the workbook's date system; a constant or variable
// typed in the mapping (or a period from the file name) is no workbook cell: 1900
export const dateSystemOf = (input: NormalizeInput, spec: FieldSpec | undefined): DateSystem =>
  spec?.column !== undefined || spec?.columns !== undefined ? (input.dateSystem ?? 1900) : 1900;

/** The field whose text a per-value field shares (the first field read from the same cells). */
export function textOf(plan: Pick<Plan, 'input' | 'columnIndex'>, f: StandardField): StandardField {
  const expr = textExpr(plan.input.fields[f], plan.columnIndex, plan.input);
  for (const g of PER_VALUE_FIELDS) {
    if (textExpr(plan.input.fields[g], plan.columnIndex, plan.input) === expr) return g;
  }
  return f;
}

/**
 * The bytes up to which a statement's file is small (a few thousand records): DuckDB's fixed costs
 * per query (a hash table per DISTINCT aggregate and per grouping set, set up on each of its
 * threads) are then most of the work, not its rows. Its queries run on one thread
 * (normalizeStatement) and its survey gathers each field's values in a list, made distinct after
 * (distinctAggregates). docs/decisions/small-files-one-thread.md
 */
export const SMALL_FILE_BYTES = 4 << 20;

export function planRun(
  connections: readonly [DuckDBConnection, DuckDBConnection],
  input: NormalizeInput,
  reading: Reading,
  /** the file is of up to SMALL_FILE_BYTES (normalizeStatement) */
  small: boolean,
): Plan {
  const width = input.header.length;
  const columnIndex = new Map<string, number>();
  input.header.forEach((h, i) => {
    if (!columnIndex.has(headerKey(h))) columnIndex.set(headerKey(h), i);
  });
  const fields = input.fields;
  for (const f of standardFields) {
    const problem = fields[f] ? formulaProblem(f, fields[f]) : null;
    if (problem !== null) throw new FormulaError(`${f}: ${problem}`);
  }
  const cells = Array.from({ length: width }, (_, i) => `c${i}`).join(', ');
  const located = { input, columnIndex };
  const textOfField = (f: StandardField) =>
    `CAST(${textExpr(fields[f], columnIndex, input, numeric(f))} AS VARCHAR)`;
  // (first: a mapping naming several missing columns is told of the first in field order)
  const fieldTexts = standardFields.map((f) => `${textOfField(f)} AS ${t(f)}`);
  // the fields read once per distinct value; fields read from the same cells (a date giving both
  // the year and the period, a month both the start and the end) share their text: its distinct
  // values are read once and become one ENUM
  const textFields = [...new Set(PER_VALUE_FIELDS.map((f) => textOf(located, f)))];
  const percentSources = percentSourcesOf(input, columnIndex);
  const formats = formatChecks(
    fields,
    (column) => cellOf(located, column),
    (spec) => decimalCommaOf(input, spec),
  );
  const plainChecks = plainChecksOf(input);
  const surveyed = new Set([
    ...textFields,
    'royaltyEarnings' as const,
    ...plainChecks.map((p) => p.f),
  ]);
  const textColumns = [
    ...[...surveyed].map((f) => `${textOfField(f)} AS ${t(f)}`),
    ...percentSources.map((p, i) => `CAST(${p.expr} AS VARCHAR) AS ${pct(i)}`),
    ...formats.map((c, i) => `${c.surelyFits(c.decimalComma)} AS ${fit(i)}`),
  ].join(', ');
  // the raw cells stay reachable from kept (amounts summed over several columns read them)
  const texts = [...fieldTexts, cells, mappedCells(width)].join(',\n      ');
  const splitOffset = input.splitOffset;
  return {
    input,
    fields,
    reading,
    connections,
    width,
    columnIndex,
    cells,
    rows: rowTests(input, columnIndex),
    firstRecord: input.headerLine + 1,
    textFields,
    percentSources,
    formats,
    plainChecks,
    texts,
    textColumns,
    // a large statement is read by two readers at once (survey.ts): only when the strict reader
    // reads the file, so that it splits records as the file reader did
    splitting:
      splitOffset !== undefined &&
      splitOffset > 0 &&
      reading.strict &&
      !!input.outPath &&
      !input.variantsOnly &&
      !input.range,
    secondFile: `${input.outPath}.second.csv`,
    small,
  };
}

function rowTests(input: NormalizeInput, columnIndex: Map<string, number>): RowTests {
  const width = input.header.length;
  const headerMatch = `(${input.header.map((h, i) => `coalesce(trim(c${i}), '') = ${lit(h.trim())}`).join(' AND ')})`;
  const allEmpty = `(${Array.from({ length: width }, (_, i) => `coalesce(trim(c${i}), '') = ''`).join(' AND ')})`;
  // most rows show they are data by one cell (not empty, not the header's, no spaces to trim): the
  // amount's, as every data row has one, else the first. The full tests, which trim every cell,
  // run only for the others (a CASE evaluates its ELSE for those rows only).
  const guardIndex = columnIndex.get(headerKey(input.fields.royaltyEarnings?.column ?? '')) ?? 0;
  const guard = `c${guardIndex}`;
  const guardHeader = input.header[guardIndex]!.trim();
  const surelyData = `(${guard} IS NOT NULL AND ${guard} <> '' AND ${guard} <> ${lit(guardHeader)} AND NOT starts_with(${guard}, ' ') AND NOT ends_with(${guard}, ' '))`;
  return {
    extraCell: `count(*) FILTER (WHERE cx IS NOT NULL AND trim(cx) <> '')`,
    headerMatch,
    allEmpty,
    surelyData,
    headerRow: `(CASE WHEN ${surelyData} THEN false ELSE ${headerMatch} END)`,
    blankRow: `(CASE WHEN ${surelyData} THEN false ELSE ${allEmpty} END)`,
    notData: `(CASE WHEN ${surelyData} THEN false ELSE ${headerMatch} OR ${allEmpty} END)`,
  };
}

// a percentage field's scale is one per field, from all its values (unless its format says it):
// a value with `%`, or a bare number above 1 (in magnitude), makes every number of it a percentage
// (30 and 30% are 0.3); numbers of 0..1 only are fractions. Counted by the survey, per column read.
function percentSourcesOf(
  input: NormalizeInput,
  columnIndex: Map<string, number>,
): PercentSource[] {
  const fields = input.fields;
  /** the values a percentage field reads: each column of a sum, else its one value */
  const percentParts = (f: StandardField): string[] => {
    const spec = fields[f];
    return sumsColumns(spec)
      ? spec.columns.map((c) => cellOf({ columnIndex }, c))
      : [textExpr(spec, columnIndex, input, true)];
  };
  return standardFields
    .filter(
      (f) =>
        fieldKinds[f] === 'percent' &&
        fields[f] !== undefined &&
        fields[f]!.format !== 'percent' &&
        fields[f]!.format !== 'fraction',
    )
    .flatMap((f) =>
      percentParts(f).map((expr) => ({
        f,
        expr,
        dc: decimalCommaOf(input, fields[f]) ? ('true' as const) : ('false' as const),
      })),
    );
}

function plainChecksOf(input: NormalizeInput): PlainCheck[] {
  const { fields } = input;
  return standardFields
    .filter((f) => numeric(f) && fields[f] !== undefined)
    .filter((f) => fields[f]!.multiply === undefined && !sumsColumns(fields[f]))
    .map((f) => ({ f, dc: decimalCommaOf(input, fields[f]) ? 'true' : 'false' }));
}

const mappedCells = (width: number) =>
  Array.from({ length: width }, (_, i) => mappedCell(i)).join(', ');

/**
 * DuckDB's reader of the file's records from record `skip` (of the statement's file, or the second
 * part's copy): the raw cells c0..cN and cx, and each cell as the mapping reads it (mappedCell;
 * the ones a query does not use are not computed: DuckDB drops unused columns of a subquery).
 */
export function reader(plan: Plan, skip: number, file = plan.input.csvPath): string {
  const mapped = Array.from({ length: plan.width }, (_, i) => `cell(c${i}) AS ${mappedCell(i)}`);
  return `(SELECT *, ${mapped.join(', ')} FROM ${fileReader(plan, skip, file)})`;
}

function fileReader(plan: Plan, skip: number, file: string): string {
  const { input } = plan;
  const { strict, serial } = plan.reading;
  // one column more than the header: a cell there is one the mapping cannot name (counted, flagged)
  const columnsDef = [
    ...Array.from({ length: plan.width }, (_, i) => `'c${i}': 'VARCHAR'`),
    `'cx': 'VARCHAR'`,
  ].join(', ');
  return `read_csv(${lit(file)}, ${[
    `delim=${lit(input.delimiter)}`,
    // without quoting: DuckDB's lenient reader drops a lone quote character even with quote='' (12" became 12),
    // so it gets a control character no statement holds as its quote instead
    input.quote === ''
      ? strict
        ? `quote=''`
        : `quote=${lit(NO_QUOTE)}, escape=${lit(NO_QUOTE)}`
      : `quote='"', escape='"'`,
    'header=false',
    `skip=${skip}`,
    'all_varchar=true',
    'null_padding=true',
    `strict_mode=${strict}`,
    'auto_detect=false',
    `columns={${columnsDef}}`,
    ...(serial ? ['parallel=false'] : []),
  ].join(', ')})`;
}

/**
 * The aggregates of one pass over data rows: per text field its distinct values, the rows without
 * an amount, per percentage source the rows that make it a percentage, per format check the rows
 * that do not fit, per plain check the cells that are no plain number (see Tallies). `where`: a condition (with a trailing AND) the rows must meet.
 */
export function distinctAggregates(plan: Plan, where: string): string {
  // (the same values: a small file's few rows are listed whole and made distinct after, which
  // spares a hash table per field; a large file's would be listed row by row)
  const distinct = (f: StandardField) =>
    plan.small
      ? `list_distinct(list(${t(f)}) FILTER (WHERE ${where} ${t(f)} IS NOT NULL))`
      : `list(DISTINCT ${t(f)}) FILTER (WHERE ${where} ${t(f)} IS NOT NULL)`;
  return `${plan.textFields.map(distinct).join(', ')},
      count(*) FILTER (WHERE ${where} no_amount(${t('royaltyEarnings')}))${plan.percentSources
        .map(
          (p, i) =>
            `, count(*) FILTER (WHERE ${where} (strpos(${pct(i)}, '%') > 0 OR abs(${byRule('parse_amount', p.dc)}(${pct(i)})) > 1))`,
        )
        .join(
          '',
        )}${plan.formats.map((_, i) => `, count(*) FILTER (WHERE ${where} NOT ${fit(i)})`).join('')}${plan.plainChecks
        .map(
          (p) =>
            `, count(*) FILTER (WHERE ${where} ${t(p.f)} IS NOT NULL AND NOT ${byRule('plain_number', p.dc)}(${t(p.f)}))`,
        )
        .join('')}`;
}

/**
 * The text expression of one field over the raw columns c0..cN, or NULL. `amount`: the field is
 * read as a number, and `pick: 'first'` skips a cell saying there is none (N/A, -) as empty.
 */
export function textExpr(
  spec: FieldSpec | undefined,
  columnIndex: Map<string, number>,
  input: NormalizeInput,
  amount = false,
): string {
  if (!spec) return 'NULL';
  const col = (name: string) => {
    const i = columnIndex.get(headerKey(name));
    if (i === undefined)
      throw new MappingError(
        `the mapping reads column "${name}", which this statement does not have`,
      );
    return mappedCell(i);
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
    return amount
      ? `(CASE ${cells.map((c) => `WHEN NOT no_amount(${c}) THEN ${c}`).join(' ')} END)`
      : `coalesce(${cells.join(', ')})`;
  }
  if (spec.multiply !== undefined) {
    // a computed amount's text shows where it came from, on every row (the standardized variant):
    // `3 × 0.70 (Units × Royalty Price)`; NULL when either factor is empty (no amount, never 0)
    const cells = spec.multiply.map(col);
    return `(CASE WHEN ${cells.map((c) => `no_amount(${c})`).join(' OR ')} THEN NULL ELSE concat(${cells.join(", ' × ', ")}, ${lit(` (${formulaText(spec.multiply)})`)}) END)`;
  }
  if (spec.columns !== undefined)
    return `NULLIF(concat_ws(${lit(spec.join ?? ' ')}, ${spec.columns.map(col).join(', ')}), '')`;
  if (spec.constant !== undefined)
    return spec.constant.trim() === '' ? 'NULL' : lit(spec.constant.trim());
  if (spec.variable !== undefined) {
    // own values only: a variable named `constructor` that was not given is not Object's
    const v = Object.hasOwn(input.variables, spec.variable)
      ? input.variables[spec.variable]
      : undefined;
    return v === undefined || v.trim() === '' ? 'NULL' : lit(v.trim());
  }
  return 'NULL';
}
