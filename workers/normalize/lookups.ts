// The lookups stage of a normalizer run: the distinct values of the rows written (and of every
// data row, for what they decide for all), each read once by the JavaScript readers (periods,
// dates, currencies, countries, identifiers) into a list the rows look their value up in; and
// per numeric field the SQL that reads it by its rule.
import type { DuckDBConnection } from '@duckdb/node-api';
import { fieldKinds, standardFields, type StandardField } from '../../src/ingest/standardFields.ts';
import {
  ambiguousYearFirst,
  firstOfMonthYearFirst,
  normalizeIsrc,
  normalizeIswc,
  normalizeUpc,
  parseCadence,
  parseCountry,
  parseCurrency,
  parseDate,
  parsePeriod,
  periodFromDate,
  yearFirstOrder,
  type Cadence,
  type DateOrder,
} from '../../src/ingest/values.ts';
import { byRule } from './amountMacro.ts';
import { DateOrderError } from './errors.ts';
import { judgeFormat } from './formats.ts';
import {
  cellOf,
  dateOrderOf,
  dateSystemOf,
  decimalCommaOf,
  distinctAggregates,
  jsonOf,
  PER_VALUE_FIELDS,
  rowsOf,
  sumsColumns,
  t,
  textOf,
  type Plan,
} from './plan.ts';
import { allOf, fillLookup, lit, snake } from './sql.ts';
import { keptOf, type Split, type Survey } from './survey.ts';

/** An aggregates row of distinctAggregates, read. */
export interface Tallies {
  /** per text field (Plan.textFields), its distinct values, sorted */
  distinct: Map<StandardField, string[]>;
  /** rows without an amount */
  missingAmounts: number;
  /** per percentage source (Plan.percentSources), the rows that make it a percentage */
  percentRows: number[];
  /** per format check (Plan.formats), the rows that may not fit its rule (FormatCheck.surelyFits) */
  unfitRows: number[];
  /** per plain check (Plan.plainChecks), the cells that are no plain number */
  notPlainRows: number[];
}

/** What the stage found: the select of each normalized column, and the table of lists (lk) they index. */
export interface Lookups {
  /** per normalized column (snake case), its SQL over `kept` (and `lk`) */
  select: Record<string, string>;
  /** the columns of the one-row table lk: per looked-up column, the reader's outputs in its ENUM's order */
  lists: string[];
  /** per per-value field, the distinct raw values of the rows written */
  distinct: Map<StandardField, string[]>;
  missingAmounts: number;
  /** whether value types were made in the instance's catalog (a large field's), to be dropped after the run */
  typesMade: boolean;
  /** whether the table lk was made (not temporary: both connections of a split statement read it), to be dropped after the run */
  tableMade: boolean;
}

const listOf = (v: unknown): string[] => ((v as unknown[] | null) ?? []).map(String).sort();

function talliesOf(plan: Plan, row: unknown[]): Tallies {
  const n = plan.textFields.length;
  const count = (i: number) => Number(row[i] ?? 0);
  return {
    distinct: new Map(plan.textFields.map((f, i) => [f, listOf(row[i])])),
    missingAmounts: count(n),
    percentRows: plan.percentSources.map((_, i) => count(n + 1 + i)),
    unfitRows: plan.formats.map((_, i) => count(n + 1 + plan.percentSources.length + i)),
    notPlainRows: plan.plainChecks.map((_, i) =>
      count(n + 1 + plan.percentSources.length + plan.formats.length + i),
    ),
  };
}

/**
 * The values of the rows written (`written`: a preview's window) and of every data row
 * (`deciding`: what a column's values decide for all of them, a percentage's scale, year-first
 * dates' order, so that a preview's window reads its rows as the pipeline does). Footer records
 * are data to the survey: with a footer, the values are read again from the data rows alone
 * (each part on its own connection).
 */
export async function gatherValues(
  plan: Plan,
  split: Split,
  surveyed: Survey,
): Promise<{ written: Tallies; deciding: Tallies }> {
  const range = plan.input.range;
  const n = plan.textFields.length;
  const reread = async (window: typeof range) => {
    const rows = await allOf(
      split.parts.map((part, i) =>
        jsonOf(
          plan,
          `SELECT ${distinctAggregates(plan, '')} FROM ${keptOf(plan, split.drops, part, plan.textColumns, window)}`,
          plan.connections[i],
        ),
      ),
    );
    const row: unknown[] = plan.textFields.map((_, j) => [
      ...new Set(rows.flatMap((r) => (r[0]![j] as unknown[] | null) ?? [])),
    ]);
    // the counts after the lists: each part's added up
    for (let j = n; j < rows[0]![0]!.length; j++)
      row.push(rows.reduce((sum, r) => sum + Number(r[0]![j]), 0));
    return row;
  };
  const writtenRow = surveyed.footer > 0 || range ? await reread(range) : surveyed.aggregates;
  const decidingRow = !range
    ? writtenRow
    : surveyed.footer > 0
      ? await reread(undefined)
      : surveyed.aggregates;
  return { written: talliesOf(plan, writtenRow), deciding: talliesOf(plan, decidingRow) };
}

/** Every data row's numbers must fit the rule their field is read by (formats.ts): tested where the survey was not sure. */
export async function judgeFormats(plan: Plan, split: Split, deciding: Tallies): Promise<void> {
  for (const [i, check] of plan.formats.entries()) {
    if (deciding.unfitRows[i]! > 0)
      await judgeFormat(
        check,
        (sql) => rowsOf(plan, sql),
        (cells) => keptOf(plan, split.drops, split.whole, cells, undefined),
      );
  }
}

const DATE_FIELDS = [
  'stmtYear',
  'stmtPeriod',
  'stmtCadence',
  'salesPeriodStart',
  'salesPeriodEnd',
] as const;
type DateField = (typeof DATE_FIELDS)[number];

/**
 * The order of each date field's dates: a column's year-first dates in the order its values tell
 * (TuneCore's older 2014/15/06 is year/day/month); one whose values read both ways follows the
 * statement's other date columns.
 */
function dateOrders(plan: Plan, deciding: Tallies): (f: DateField) => DateOrder {
  const { fields, input } = plan;
  const valuesOf = (f: DateField) => deciding.distinct.get(textOf(plan, f)) ?? [];
  const yearFirst = new Map<StandardField, 'YMD' | 'YDM' | null>();
  for (const f of DATE_FIELDS) {
    const spec = fields[f];
    // (an order the mapping states for a field tells it for the statement's other date fields)
    if (spec?.format === 'YMD' || spec?.format === 'YDM') yearFirst.set(f, spec.format);
    else if (spec?.column !== undefined || spec?.columns !== undefined)
      yearFirst.set(f, yearFirstOrder(valuesOf(f)));
  }
  const told = new Set([...yearFirst.values()].filter((o) => o !== null));
  const statementYearFirst = told.size === 1 ? [...told][0]! : null;
  return (f) => {
    const spec = fields[f];
    const order = dateOrderOf(input, spec);
    if (spec?.format === 'YMD' || spec?.format === 'YDM' || order !== 'YMD' || !yearFirst.has(f))
      return order;
    let told = yearFirst.get(f) ?? statementYearFirst;
    if (told === null) {
      // slashed year-first dates (2014/01/06) that no date of the statement decides are not
      // guessed: year/day/month (TuneCore's older exports) would move every row to another month.
      // Only dates that are each the first of a month as year/month/day tell (periods, 2024/03/01).
      const values = valuesOf(f);
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
}

/** The readers of the per-value fields: each raw value to its output, and the output's SQL type. */
function valueReaders(
  plan: Plan,
  deciding: Tallies,
): [StandardField, (v: string) => string | number | null, string][] {
  const { fields, input } = plan;
  const orderOf = dateOrders(plan, deciding);
  const periods = (['stmtYear', 'stmtPeriod', 'stmtCadence'] as const).map(
    (f): [StandardField, (v: string) => string | number | null, string] => {
      const spec = fields[f];
      const cadenceWanted: Cadence | null =
        spec?.format === 'month'
          ? 'M'
          : spec?.format === 'quarter'
            ? 'Q'
            : spec?.format === 'half'
              ? 'H'
              : spec?.format === 'year'
                ? 'Y'
                : null;
      const order = orderOf(f);
      const dates = { dateSystem: dateSystemOf(input, spec) };
      const read = (v: string): string | number | null => {
        const plain = /^\d{1,4}$/.test(v.trim()) ? Number(v.trim()) : null;
        if (f === 'stmtCadence')
          return parseCadence(v) ?? parsePeriod(v, order, dates)?.cadence ?? null;
        if (
          plain !== null &&
          (f === 'stmtPeriod' ? plain >= 1 && plain <= 12 : plain >= 1900 && plain <= 2200)
        )
          return plain;
        let p = parsePeriod(v, order, dates);
        if (p && cadenceWanted && p.cadence === 'M') p = periodFromDate(p.start, cadenceWanted);
        if (!p) return null;
        return f === 'stmtYear' ? p.year : p.period;
      };
      return [f, read, f === 'stmtCadence' ? 'VARCHAR' : 'INTEGER'];
    },
  );
  const salesDates = (['salesPeriodStart', 'salesPeriodEnd'] as const).map(
    (f): [StandardField, (v: string) => string | number | null, string] => {
      const order = orderOf(f);
      const dates = { dateSystem: dateSystemOf(input, fields[f]) };
      const read = (v: string) => {
        const d = parseDate(v, order, dates);
        if (d) return d;
        // a month or quarter written as a period: its first (start) or last (end) day
        const p = parsePeriod(v, order, dates);
        return p ? (f === 'salesPeriodStart' ? p.start : p.end) : null;
      };
      return [f, read, 'DATE'];
    },
  );
  const codes: [StandardField, (v: string) => string | null, string][] = [
    ['currency', parseCurrency, 'VARCHAR'],
    ['country', parseCountry, 'VARCHAR'],
    ['isrc', normalizeIsrc, 'VARCHAR'],
    ['upc', normalizeUpc, 'VARCHAR'],
    ['iswc', normalizeIswc, 'VARCHAR'],
  ];
  return [...periods, ...salesDates, ...codes];
}

/** What the lookups make: each column's select, lk's lists, the ENUM types made (a large field's). */
interface Into {
  select: Record<string, string>;
  lists: string[];
  enums: Set<StandardField>;
}

/**
 * Up to this many distinct values, a field's ENUM and its list are literals of the SQL, both
 * inlined in the projection (an ENUM type of no name: nothing made in the catalog, nothing to
 * find and drop after the run); more are read from a table of the values (fillLookup), their ENUM
 * type made from it and the list held in lk.
 */
const LITERAL_VALUES = 2_000;

const literalOf = (o: string | number | null) => (o === null ? 'NULL' : lit(String(o)));

/**
 * A field read per distinct value: its distinct values become an ENUM type, and the reader's
 * outputs a list in the ENUM's order (a literal, or a column of the one-row table lk cross-joined
 * to the rows); a row's output is the list element at its value's ENUM code. Unlike a hash join
 * (whose LEFT form moves a chunk's unmatched rows, such as NULL keys, to the chunk's end, and
 * which DuckDB never counts as order-preserving), this is a projection: the rows keep the file's
 * order. A field that is empty on every row (NULL), a constant of the mapping (its value,
 * inlined), a field of one value and one whose reader keeps every value need no list.
 */
async function lookUp(
  plan: Plan,
  into: Into,
  values: string[],
  [f, read, type]: [StandardField, (v: string) => string | number | null, string],
): Promise<void> {
  const column = snake(f);
  const spec = plan.fields[f];
  const constant = spec !== undefined && spec.column === undefined && spec.columns === undefined;
  const outputs = values.map(read);
  if (values.length === 0 || (constant && values.length === 1)) {
    into.select[column] = `CAST(${literalOf(outputs[0] ?? null)} AS ${type})`;
    return;
  }
  const text = textOf(plan, f);
  const cell = `kept.${t(text)}`;
  if (type === 'VARCHAR' && outputs.every((o, i) => o === values[i])) {
    // the reader keeps every value as it is (codes already clean): the cells themselves
    into.select[column] = cell;
    return;
  }
  if (values.length === 1) {
    into.select[column] =
      `CAST(CASE WHEN ${cell} IS NOT NULL THEN ${literalOf(outputs[0]!)} END AS ${type})`;
    return;
  }
  // (a NUL character never enters a literal: such values go through a table)
  if (values.length <= LITERAL_VALUES && !values.some((v) => v.includes('\0'))) {
    const list = `CAST([${outputs.map(literalOf).join(', ')}] AS ${type}[])`;
    into.select[column] =
      `${list}[enum_code(CAST(${cell} AS ENUM(${values.map(lit).join(', ')}))) + 1]`;
    return;
  }
  const enumType = `e_${snake(text)}`;
  const connection: DuckDBConnection = plan.connections[0];
  const table = `lk_${column}`;
  await fillLookup(connection, table, values, outputs);
  if (!into.enums.has(text)) {
    await connection.run(`CREATE TYPE ${enumType} AS ENUM (SELECT v FROM ${table})`);
    into.enums.add(text);
  }
  into.lists.push(
    `(SELECT list(CAST(o AS ${type}) ORDER BY enum_code(CAST(v AS ${enumType}))) FROM ${table}) AS m_${column}`,
  );
  into.select[column] = `lk.m_${column}[enum_code(CAST(${cell} AS ${enumType})) + 1]`;
}

/**
 * The SQL of the numeric and text fields: amounts by their rule, a percentage by its scale; a
 * field none of whose written cells is other than a plain number (or that is not mapped) by the
 * plain reading alone (plain_amount: the same values, far less to bind).
 */
function directSelects(plan: Plan, written: Tallies, deciding: Tallies): Record<string, string> {
  const { fields, input } = plan;
  const inPercent = new Set(
    plan.percentSources.filter((_, i) => deciding.percentRows[i]! > 0).map((p) => p.f),
  );
  const readsPercent = (f: StandardField) =>
    fields[f]?.format === 'percent' || (fields[f]?.format !== 'fraction' && inPercent.has(f));
  const plain = (f: StandardField) => {
    const i = plan.plainChecks.findIndex((p) => p.f === f);
    return fields[f] === undefined || (i >= 0 && written.notPlainRows[i] === 0);
  };
  const select: Record<string, string> = {};
  for (const f of standardFields) {
    const kind = fieldKinds[f];
    if (kind === 'amount' || kind === 'quantity' || kind === 'percent') {
      const spec = fields[f];
      const reading = kind === 'percent' && readsPercent(f) ? 'percent' : 'amount';
      const parse = byRule(`parse_${reading}`, decimalCommaOf(input, spec));
      if (spec?.multiply !== undefined) {
        // a computed amount: the product of its factors, exact (DECIMAL(38,12) each; the product,
        // of 24 decimals, rounded half away from zero to 12); NULL when either is no amount, and
        // unreadable (NULL, counted) from 10^13 on, where DECIMAL(38,24) would overflow
        const [a, b] = spec.multiply.map(
          (c) => `CAST(${parse}(${cellOf(plan, c)}) AS DECIMAL(38,12))`,
        );
        select[snake(f)] =
          `(CASE WHEN abs(CAST(${a} AS DOUBLE) * CAST(${b} AS DOUBLE)) < 1e13 THEN CAST(${a} * ${b} AS DECIMAL(38,12)) END)`;
      } else if (sumsColumns(spec)) {
        // amounts from several columns are summed, not concatenated (pick 'first' reads one of them)
        const parts = spec.columns.map((c) => `coalesce(${parse}(${cellOf(plan, c)}), 0)`);
        select[snake(f)] = `(${parts.join(' + ')})`;
      } else {
        const read = plain(f) ? byRule(`plain_${reading}`, decimalCommaOf(input, spec)) : parse;
        select[snake(f)] = `${read}(kept.${t(f)})`;
      }
    } else if (kind === 'text') {
      select[snake(f)] = `kept.${t(f)}`;
    }
  }
  return select;
}

/** The lookups of the rows written, and the table lk of their lists (created when there is one). */
export async function lookups(plan: Plan, written: Tallies, deciding: Tallies): Promise<Lookups> {
  const distinct = new Map(
    PER_VALUE_FIELDS.map((f) => [f, written.distinct.get(textOf(plan, f))!]),
  );
  const into: Into = { select: {}, lists: [], enums: new Set() };
  for (const reader of valueReaders(plan, deciding))
    await lookUp(plan, into, distinct.get(reader[0]) ?? [], reader);
  Object.assign(into.select, directSelects(plan, written, deciding));
  if (into.lists.length > 0)
    await plan.connections[0].run(`CREATE TABLE lk AS SELECT ${into.lists.join(', ')}`);
  return {
    select: into.select,
    lists: into.lists,
    distinct,
    missingAmounts: written.missingAmounts,
    typesMade: into.enums.size > 0,
    tableMade: into.lists.length > 0,
  };
}
