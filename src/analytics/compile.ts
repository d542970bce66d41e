// The query compiler: a normalized query → DuckDB SQL with positional parameters. Stages: plan
// the output columns (members, granular time buckets, row keys), choose the row source (facts or
// a rollup that can answer the query), compile filters (dimension filters to WHERE, measure
// filters to HAVING), add the caller's restrictions outside everything the client sent, then
// order and limit. Values only ever enter through ParamAllocator: as positional parameters, or
// (`inline`, what the engine runs) as string literals it writes itself; identifiers only from the
// model.
import type { JoinName, RollupDef } from './model.ts';
import type { ResolvedMeasure, ResolvedMember } from './modelSchema.ts';
import { LAST_DATE, isMidnight, nextDay, absoluteBound } from './dates.ts';
import type { NormalizedFilterNode, NormalizedQuery, Operator } from './query.ts';
import {
  GRANULARITIES,
  dimensionDefs,
  full,
  memberOf,
  semantic,
  ungroupedMeasure,
  type QueryGranularity,
} from './semantic.ts';
import { likeEscape, sqlLiteral } from '../db/sql.ts';

/** What the server adds to every query: the caller's organization and rightsholder scope. */
export interface Restrictions {
  organizationId: string;
  /** null: every rightsholder of the organization */
  rightsholderIds: string[] | null;
}

/**
 * Where values enter the SQL: `$n` placeholders with their values in `params`, or, inline, string
 * literals. The engine runs queries inline: DuckDB then plans with the values themselves, and a
 * query skips the prepare-and-bind round trips through the native thread pool (about 1-3 ms of a
 * 10-20 ms query, bench:query).
 */
export class ParamAllocator {
  readonly params: string[] = [];
  constructor(private readonly inline = false) {}
  add(value: string): string {
    if (this.inline) return sqlLiteral(value);
    this.params.push(value);
    return `$${this.params.length}`;
  }
}

export interface OutputColumn {
  alias: string;
  /** the row keys this column fills */
  keys: string[];
  member: string;
  role: 'dimension' | 'timeDimension' | 'measure';
  type: 'string' | 'number' | 'time';
  granularity?: QueryGranularity;
}

export interface CompiledQuery {
  sql: string;
  params: string[];
  /** count of result rows ignoring the limit, when the query asks for total */
  totalSql: string | null;
  totalParams: string[];
  columns: OutputColumn[];
  /** the rollup answering the query, or null for the facts */
  rollup: string | null;
  /** the facts are grouped by the columns the query reads before the joins (eagerRollup) */
  eager: boolean;
}

const TIME_FORMAT = "'%Y-%m-%dT%H:%M:%S.%g'";
const QUALIFIED_FACT = /(?<![A-Za-z0-9_'])f\.([a-z_][a-z0-9_]*)/g;

function factColumnsIn(sql: string): string[] {
  return [...sql.matchAll(QUALIFIED_FACT)].map((m) => m[1]!);
}

const joinFactColumns = new Map<JoinName, string[]>(
  (Object.entries(semantic.model.joins) as [JoinName, { sql: string }][]).map(([name, j]) => [
    name,
    factColumnsIn(j.sql),
  ]),
);

/** The caller's restrictions on a relation that has organization_id and rightsholder_id. */
export function scopePredicate(alias: string, r: Restrictions, p: ParamAllocator): string {
  if (r.rightsholderIds?.length === 0) return 'FALSE';
  const org = `${alias}.organization_id = ${p.add(r.organizationId)}`;
  if (r.rightsholderIds === null) return org;
  return `${org} AND ${alias}.rightsholder_id IN (${r.rightsholderIds.map((id) => p.add(id)).join(', ')})`;
}

/** The per-query relations (CTEs) the joins need, each restricted to what the caller may see. */
function relationsOf(joins: JoinName[], r: Restrictions, p: ParamAllocator): string[] {
  return joins.flatMap((name) => {
    const join = semantic.model.joins[name];
    if (!join.cte) return [];
    return [
      `${join.alias} AS (${join.cte.replace(/\{scope:([a-z][a-z0-9_]*)\}/g, (_m, alias: string) => scopePredicate(alias, r, p))})`,
    ];
  });
}

function dimensionOf(fullName: string): ResolvedMember {
  const d = semantic.dimensions.get(memberOf(fullName)!);
  if (!d) throw new Error(`not a dimension: ${fullName}`);
  return d;
}

const granularityRank = (g: QueryGranularity) => GRANULARITIES.indexOf(g);

interface Plan {
  /** `group`: what a time column groups by; its text is formatted once per group, not per row */
  columns: (OutputColumn & { sql: string; group?: string })[];
  joins: Set<JoinName>;
  /** what the query reads: a stored rollup, an eager one over the facts, or (null) the facts */
  rollup: RollupDef | null;
  stored: boolean;
}

/** Where measures are read from: a rollup, the facts (null), or, ungrouped, each row's own value. */
type MeasureSource = RollupDef | null | 'row';

function measureSql(name: string, source: MeasureSource): string {
  if (source === 'row') return ungroupedMeasure(name)!.sql;
  const m = semantic.measures.get(name)!;
  return source ? m.rollupSql! : m.sql;
}

/** The joins an ungrouped query's measures need for their row values. */
function rowJoinsOf(q: NormalizedQuery): JoinName[] {
  if (!q.ungrouped) return [];
  const measures = [...q.measures, ...q.filters.flatMap(filterLeaves).map((l) => l.member)]
    .map((n) => memberOf(n)!)
    .filter((n) => semantic.measures.has(n));
  return measures.flatMap((n) => ungroupedMeasure(n)!.joins);
}

function filterLeaves(node: NormalizedFilterNode): { member: string }[] {
  if ('and' in node) return node.and.flatMap(filterLeaves);
  if ('or' in node) return node.or.flatMap(filterLeaves);
  return [node];
}

function isMeasureFilter(node: NormalizedFilterNode): boolean {
  const leaf = filterLeaves(node)[0];
  return leaf !== undefined && semantic.measures.has(memberOf(leaf.member)!);
}

/** The members a query reads (selected, time dimensions, filtered), each once. */
function membersOf(q: NormalizedQuery): (ResolvedMember | ResolvedMeasure)[] {
  const names = new Set(
    [
      ...q.dimensions,
      ...q.measures,
      ...q.timeDimensions.map((td) => td.dimension),
      ...q.filters.flatMap(filterLeaves).map((l) => l.member),
    ].map((n) => memberOf(n)!),
  );
  return [...names].map((name) => (semantic.measures.get(name) ?? semantic.dimensions.get(name))!);
}

/** The joins the members need (each member's joins are closed over their requirements). */
function joinsOf(members: ResolvedMember[]): Set<JoinName> {
  return new Set(members.flatMap((m) => m.joins));
}

/** The facts columns a member reads: a measure in its rollup form (null when it has none). */
function rollupColumnsOf(m: ResolvedMember | ResolvedMeasure): string[] | null {
  if (m.kind === 'dimension') return m.columns;
  const rollupSql = (m as ResolvedMeasure).rollupSql;
  return rollupSql === null ? null : factColumnsIn(rollupSql);
}

/** The first rollup that holds every column the query reads, or null. */
export function chooseRollup(q: NormalizedQuery): RollupDef | null {
  const members = membersOf(q);
  const joins = joinsOf(members);
  for (const rollup of semantic.model.rollups) {
    const grouped = new Set(rollup.groupBy);
    const readable = new Set([...rollup.groupBy, ...rollup.sums, rollup.countColumn]);
    const ok =
      members.every((m) => {
        const columns = rollupColumnsOf(m);
        return (
          columns !== null &&
          columns.every((c) => (m.kind === 'dimension' ? grouped : readable).has(c))
        );
      }) && [...joins].every((j) => (joinFactColumns.get(j) ?? []).every((c) => grouped.has(c)));
    if (ok) return rollup;
  }
  return null;
}

/**
 * Eager aggregation. A query a stored rollup could answer reads only columns that rollup groups
 * by (a few distinct values per statement: statement, currency, territory, source, periods), its
 * joins are keyed by such columns, and its measures are sums, row counts and counts of distinct
 * statements. Its answer is then the same when the facts are first grouped by just the columns
 * this query reads (with the sums and the row count its measures need) and the groups, not the
 * rows, are joined and aggregated: the exchange rate, statement and lookup joins then probe once
 * per group, and amounts are multiplied by their rate once per group. Exact for DECIMAL money
 * (sum(a) × r = sum(a × r) with no rounding: scales add), and the filters on grouped columns
 * reach the scan below the grouping (DuckDB pushes them down), so only the caller's rows are read.
 */
function eagerRollup(q: NormalizedQuery, stored: RollupDef): RollupDef {
  const grouped = new Set(['organization_id', 'rightsholder_id']);
  const summed = new Set<string>();
  let counted = false;
  const read = (columns: string[]) => {
    for (const c of columns) {
      if (stored.groupBy.includes(c)) grouped.add(c);
      else if (stored.sums.includes(c)) summed.add(c);
      else if (c === stored.countColumn) counted = true;
    }
  };
  // a measure reads what its rollup form reads (chooseRollup made sure it has one)
  const members = membersOf(q);
  for (const m of members) read(rollupColumnsOf(m)!);
  for (const j of joinsOf(members)) read(joinFactColumns.get(j) ?? []);
  // the rollup's own order of columns: the same query always writes the same SQL
  const groupBy = stored.groupBy.filter((c) => grouped.has(c));
  const sums = stored.sums.filter((c) => summed.has(c));
  const aggregates = [
    ...sums.map((c) => `sum(${c}) AS ${c}`),
    ...(counted ? [`count(*) AS ${stored.countColumn}`] : []),
  ];
  const table = `(SELECT ${[...groupBy, ...aggregates].join(', ')} FROM ${semantic.model.facts.table} GROUP BY ${groupBy.join(', ')})`;
  return {
    name: `eager:${stored.name}`,
    table,
    description: 'the facts grouped by the columns the query reads',
    groupBy,
    sums,
    countColumn: stored.countColumn,
  };
}

function plan(q: NormalizedQuery, usePreagg: boolean, eager: boolean): Plan {
  // an ungrouped query reads the rows themselves: no rollup holds them
  const answerable = q.ungrouped ? null : chooseRollup(q);
  // the stored rollup with usePreagg; else, where it could answer, the facts grouped eagerly
  const rollup =
    answerable && usePreagg ? answerable : answerable && eager ? eagerRollup(q, answerable) : null;
  const columns: Plan['columns'] = [];
  const alias = () => `c${columns.length}`;

  for (const d of q.dimensions) {
    const r = dimensionOf(d);
    const type = dimensionDefs.get(r.name)!.type;
    const group = type === 'time' ? `CAST(${r.sql} AS TIMESTAMP)` : undefined;
    const sql = group ? `strftime(${group}, ${TIME_FORMAT})` : r.sql;
    columns.push({
      alias: alias(),
      keys: [d],
      member: d,
      role: 'dimension',
      type,
      sql,
      ...(group ? { group } : {}),
    });
  }
  // one column per distinct (time dimension, granularity); the plain key goes to the finest one
  const seen = new Set<string>();
  for (const td of q.timeDimensions) {
    if (!td.granularity) continue;
    const key = `${td.dimension}.${td.granularity}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const r = dimensionOf(td.dimension);
    const group = `CAST(date_trunc('${td.granularity}', ${r.sql}) AS TIMESTAMP)`;
    columns.push({
      alias: alias(),
      keys: [key],
      member: td.dimension,
      role: 'timeDimension',
      type: 'time',
      granularity: td.granularity,
      sql: `strftime(${group}, ${TIME_FORMAT})`,
      group,
    });
  }
  for (const member of new Set(
    columns.filter((c) => c.role === 'timeDimension').map((c) => c.member),
  )) {
    if (q.dimensions.includes(member)) continue;
    const finest = columns
      .filter((c) => c.role === 'timeDimension' && c.member === member)
      .sort((a, b) => granularityRank(a.granularity!) - granularityRank(b.granularity!))[0]!;
    finest.keys.push(member);
  }
  for (const m of q.measures) {
    const name = memberOf(m)!;
    columns.push({
      alias: alias(),
      keys: [m],
      member: m,
      role: 'measure',
      type: 'number',
      sql: measureSql(name, q.ungrouped ? 'row' : rollup),
    });
  }
  const joins = new Set([...joinsOf(membersOf(q)), ...rowJoinsOf(q)]);
  return { columns, joins, rollup, stored: rollup !== null && rollup === answerable };
}

function memberSql(
  fullName: string,
  rollup: MeasureSource,
): { sql: string; type: 'string' | 'number' | 'time'; measure: boolean } {
  const name = memberOf(fullName)!;
  if (semantic.measures.has(name))
    return { sql: measureSql(name, rollup), type: 'number', measure: true };
  return {
    sql: semantic.dimensions.get(name)!.sql,
    type: dimensionDefs.get(name)!.type,
    measure: false,
  };
}

/**
 * A comparison of a DATE expression with a millisecond bound (YYYY-MM-DDTHH:mm:ss.SSS, the form
 * normalizeQuery gives every bound), written as a date comparison.
 */
function dateComparison(
  expr: string,
  op: '>=' | '<=' | '>' | '<',
  bound: string,
  p: ParamAllocator,
): string {
  const canonical = absoluteBound(bound, 'start');
  const day = canonical.slice(0, 10);
  // a date is its midnight: >= and < need the next day unless the bound is itself a midnight; the
  // last supported day has no next one, and `>= next day` is `> day`, `< next day` is `<= day`
  if ((op === '>=' || op === '<') && !isMidnight(canonical)) {
    if (day === LAST_DATE) return `${expr} ${op === '>=' ? '>' : '<='} CAST(${p.add(day)} AS DATE)`;
    return `${expr} ${op} CAST(${p.add(nextDay(day))} AS DATE)`;
  }
  return `${expr} ${op} CAST(${p.add(day)} AS DATE)`;
}

/**
 * A number's text as the answer gives it (engine.ts, decimalText): DuckDB's text of the value with
 * the trailing zeros of its fraction dropped, and the point with them when nothing is left.
 */
export const answeredNumberText = (expr: string) =>
  `regexp_replace(CAST(${expr} AS VARCHAR), '(\\.[0-9]*[1-9])0+$|\\.0+$', '\\1')`;

/** The LIKE family (Cube's BaseFilter.likeOr): where the value must stand in the text. */
type LikeKind = 'contains' | 'starts' | 'ends';
const LIKE_OPERATORS: Partial<Record<Operator, { kind: LikeKind; not: boolean }>> = {
  contains: { kind: 'contains', not: false },
  notContains: { kind: 'contains', not: true },
  startsWith: { kind: 'starts', not: false },
  notStartsWith: { kind: 'starts', not: true },
  endsWith: { kind: 'ends', not: false },
  notEndsWith: { kind: 'ends', not: true },
};

/** The ILIKE pattern around a value (BaseFilter.likeIgnoreCase: `'%' || ?` for contains/ends, `? || '%'` for contains/starts). */
function likePattern(kind: LikeKind, value: string): string {
  return `${kind === 'starts' ? '' : "'%' || "}${value}${kind === 'ends' ? '' : " || '%'"}`;
}

/**
 * The values of a LIKE filter with several values that the text matches, as a list: the text is
 * written once, matched against each value by a lambda. Written as one ILIKE per value, the
 * member's expression was repeated once per value, and DuckDB's planner took seconds over a few
 * hundred copies of an expression like tm's (1,000 values: 2.4 s on 7 rows; ten such filters ran
 * past the 25 s window), whatever the data.
 */
function matchingPatterns(
  text: string,
  kind: LikeKind,
  values: string[],
  p: ParamAllocator,
): string {
  return `list_filter([${values.map((v) => p.add(likeEscape(v))).join(', ')}], lambda contains_value: ${text} ILIKE ${likePattern(kind, 'contains_value')} ESCAPE '\\')`;
}

/**
 * contains, startsWith, endsWith and their negations, as Cube's BaseFilter.likeOr writes them:
 * case-insensitive, the positive ones OR-ed over the values, the negative ones AND-ed; a NULL text
 * is kept by a negative filter and dropped by a positive one, unless null is among the values,
 * which flips that. `%`, `_` and `\` match literally (ESCAPE, as Cube's Tesseract planner).
 */
function likeFilter(
  op: { kind: LikeKind; not: boolean },
  text: string,
  expr: string,
  values: (string | null)[],
  p: ParamAllocator,
): string {
  const nonNull = values.filter((v): v is string => v !== null);
  const hasNull = values.includes(null);
  if (op.not && nonNull.length === 0) return `(${expr} IS NOT NULL)`;
  const one = (v: string) =>
    `${text}${op.not ? ' NOT' : ''} ILIKE ${likePattern(op.kind, p.add(likeEscape(v)))} ESCAPE '\\'`;
  if (!op.not) {
    const parts =
      nonNull.length > 1
        ? [`len(${matchingPatterns(text, op.kind, nonNull, p)}) > 0`]
        : nonNull.map(one);
    if (hasNull) parts.push(`${expr} IS NULL`);
    return `(${parts.join(' OR ')})`;
  }
  // the list form is false, not NULL, for a NULL text: NULL rows are left to the rule below
  const test =
    nonNull.length > 1
      ? `${text} IS NOT NULL AND len(${matchingPatterns(text, op.kind, nonNull, p)}) = 0`
      : one(nonNull[0]!);
  return hasNull ? `(${test})` : `((${test}) OR ${expr} IS NULL)`;
}

/**
 * The date operators on a DATE expression, with bounds normalizeQuery resolved (BaseQuery's
 * timeRangeFilter, timeNotInRangeFilter, beforeDateFilter, beforeOrOnDateFilter, afterDateFilter,
 * afterOrOnDateFilter: `>= AND <=`, `< OR >`, `<`, `<=`, `>`, `>=`). A NULL date matches none of
 * them (notInDateRange too: Cube adds no IS NULL), or undefined for another operator.
 */
function dateFilter(
  operator: Operator,
  expr: string,
  bounds: string[],
  p: ParamAllocator,
): string | undefined {
  const [first, second] = bounds as [string, string?];
  switch (operator) {
    case 'inDateRange':
      return `(${dateComparison(expr, '>=', first, p)} AND ${dateComparison(expr, '<=', second!, p)})`;
    case 'notInDateRange':
      return `(${dateComparison(expr, '<', first, p)} OR ${dateComparison(expr, '>', second!, p)})`;
    case 'beforeDate':
      return `(${dateComparison(expr, '<', first, p)})`;
    case 'beforeOrOnDate':
      return `(${dateComparison(expr, '<=', first, p)})`;
    case 'afterDate':
      return `(${dateComparison(expr, '>', first, p)})`;
    case 'afterOrOnDate':
      return `(${dateComparison(expr, '>=', first, p)})`;
    default:
      return undefined;
  }
}

/** months_back as the tm dimension reads it (model.ts) */
const MONTHS_BACK = `(${semantic.model.expressions.months_back!.sql})`;
if (!semantic.dimensions.get('tm')?.sql.includes(MONTHS_BACK))
  throw new Error('model: tm is no longer a labelling of months_back; revisit tmLabelRange');

/**
 * The months_back range a tm label stands for (model.ts, tm: 00.TM for 0, 01.LTM for 1-12,
 * 02.PTM for 13-24, then NN.TM for 12N-11..12N), or null for a text tm never takes.
 */
export function tmLabelRange(label: string): { from: number | null; to: number } | null {
  if (label === '00.TM') return { from: null, to: 0 };
  if (label === '01.LTM') return { from: 1, to: 12 };
  if (label === '02.PTM') return { from: 13, to: 24 };
  const n = /^[0-9]{2,15}\.TM$/.test(label) ? Number(label.slice(0, -3)) : NaN;
  if (!(n >= 3) || label !== `${String(n).padStart(2, '0')}.TM`) return null;
  return { from: 12 * n - 11, to: 12 * n };
}

/**
 * equals / notEquals on tm as ranges of months_back: the same rows as comparing the label, without
 * building a label for every row (the `tm = '01.LTM'` of every valuation question).
 */
export function tmFilter(
  monthsBack: string,
  operator: 'equals' | 'notEquals',
  values: (string | null)[],
): string {
  const ranges = values
    .filter((v): v is string => v !== null)
    .map(tmLabelRange)
    .filter((r) => r !== null)
    .map((r) =>
      r.from === null ? `${monthsBack} <= ${r.to}` : `${monthsBack} BETWEEN ${r.from} AND ${r.to}`,
    );
  const any = ranges.length > 0 ? ranges.join(' OR ') : 'FALSE';
  const hasNull = values.includes(null);
  if (operator === 'equals') return `(${hasNull ? `${any} OR ${monthsBack} IS NULL` : any})`;
  if (!values.some((v) => v !== null)) return `(${monthsBack} IS NOT NULL)`;
  // as for any member: NULL rows are kept unless null is among the values (Cube's rule)
  const test = `${monthsBack} IS NOT NULL AND NOT (${any})`;
  return hasNull ? `(${test})` : `(${test} OR ${monthsBack} IS NULL)`;
}

type Leaf = { member: string; operator: Operator; values?: (string | null)[] };

const ORGANIZATION = full('organization_id');

function compileLeaf(f: Leaf, r: Restrictions, rollup: MeasureSource, p: ParamAllocator): string {
  // the one organization filter left is the server's own (normalizeQuery strips the client's);
  // the organization is applied from the restrictions, before every filter
  if (f.member === ORGANIZATION) return 'TRUE';
  if (memberOf(f.member) === 'tm' && (f.operator === 'equals' || f.operator === 'notEquals'))
    return tmFilter(MONTHS_BACK, f.operator, f.values ?? []);
  const { sql: expr, type, measure } = memberSql(f.member, rollup);
  const values = f.values ?? [];
  const dated = dateFilter(f.operator, expr, values as string[], p);
  if (dated !== undefined) return dated;
  const nonNull = values.filter((v): v is string => v !== null);
  const hasNull = values.includes(null);
  // a time value in the one form DuckDB reads (normalizeQuery gives it; a bare date is its midnight)
  const value = (v: string) =>
    type === 'number'
      ? `CAST(${p.add(v)} AS DOUBLE)`
      : type === 'time'
        ? `CAST(${p.add(absoluteBound(v, 'start'))} AS TIMESTAMP)`
        : p.add(v);
  // A measure meets its DOUBLE value through its exact text: DuckDB casts a DECIMAL to DOUBLE by
  // dividing by 10^scale in floating point, an ulp off at the USD sums' scale 26 (10^26 is not a
  // double), so `royalty_earnings_usd gte <the very value answered>` could drop its group; the text
  // converts correctly rounded, as the value does. Per group, so cheap; the number dimensions'
  // scales (at most 14) convert exactly and stay row by row.
  const subject =
    type === 'time'
      ? `CAST(${expr} AS TIMESTAMP)`
      : measure
        ? `CAST(CAST(${expr} AS VARCHAR) AS DOUBLE)`
        : expr;
  // contains/notContains match the text the member is answered as (Cube matches the database's
  // text, which for a DECIMAL keeps its scale's trailing zeros: `contains '500'` found a rate
  // answered as "0.5"): a number without trailing zeros (decimalText), a time in its answer form
  const text =
    type === 'string'
      ? expr
      : type === 'number'
        ? answeredNumberText(expr)
        : `strftime(CAST(${expr} AS TIMESTAMP), ${TIME_FORMAT})`;
  switch (f.operator) {
    case 'equals': {
      const parts: string[] = [];
      if (nonNull.length === 1) parts.push(`${subject} = ${value(nonNull[0]!)}`);
      else if (nonNull.length > 1) parts.push(`${subject} IN (${nonNull.map(value).join(', ')})`);
      if (hasNull) parts.push(`${expr} IS NULL`);
      return `(${parts.join(' OR ')})`;
    }
    case 'notEquals': {
      if (nonNull.length === 0) return `(${expr} IS NOT NULL)`;
      const test =
        nonNull.length === 1
          ? `${subject} <> ${value(nonNull[0]!)}`
          : `${subject} NOT IN (${nonNull.map(value).join(', ')})`;
      // NULL rows are kept unless null is among the values (Cube's rule)
      return hasNull ? `(${test})` : `(${test} OR ${expr} IS NULL)`;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[f.operator] as '>' | '>=' | '<' | '<=';
      if (type === 'time')
        return `(${dateComparison(expr, op, absoluteBound(nonNull[0]!, 'start'), p)})`;
      return `(${subject} ${op} ${value(nonNull[0]!)})`;
    }
    case 'set':
      return `(${expr} IS NOT NULL)`;
    case 'notSet':
      return `(${expr} IS NULL)`;
    default:
      return likeFilter(LIKE_OPERATORS[f.operator]!, text, expr, values, p);
  }
}

function compileFilter(
  node: NormalizedFilterNode,
  r: Restrictions,
  rollup: MeasureSource,
  p: ParamAllocator,
): string {
  if ('and' in node)
    return `(${node.and.map((c) => compileFilter(c, r, rollup, p)).join(' AND ')})`;
  if ('or' in node) return `(${node.or.map((c) => compileFilter(c, r, rollup, p)).join(' OR ')})`;
  return compileLeaf(node, r, rollup, p);
}

function orderClause(q: NormalizedQuery, columns: Plan['columns']): string[] {
  const position = (c: OutputColumn) => columns.indexOf(c as Plan['columns'][number]) + 1;
  const grouping = columns.filter((c) => c.role !== 'measure');
  const items: { column: OutputColumn; desc: boolean }[] = [];
  if (q.order) {
    for (const o of q.order) {
      // a member that is not selected is dropped silently, as Cube does
      const column =
        columns.find((c) => c.keys.includes(o.id)) ??
        columns.find((c) => c.role === 'timeDimension' && c.member === o.id);
      if (column && !items.some((i) => i.column === column)) items.push({ column, desc: o.desc });
    }
  } else {
    const granular = columns.find((c) => c.role === 'timeDimension');
    const measure = columns.find((c) => c.role === 'measure');
    if (granular) items.push({ column: granular, desc: false });
    else if (measure && grouping.length > 0) items.push({ column: measure, desc: true });
    else if (grouping[0]) items.push({ column: grouping[0], desc: false });
  }
  // ties are broken by the grouping columns so that equal queries give equal pages
  // (ungrouped, by every column: rows equal in all of them are indistinguishable)
  const breakers = q.ungrouped ? columns : grouping;
  for (const column of breakers)
    if (!items.some((i) => i.column === column)) items.push({ column, desc: false });
  return items.map((i) => `${position(i.column)} ${i.desc ? 'DESC' : 'ASC'}`);
}

/** LIMIT, and OFFSET when the query pages (Cube: `LIMIT n OFFSET m`; `limit: 0` is no rows). */
function pageClause(q: NormalizedQuery, p: ParamAllocator): string {
  const limit = `LIMIT CAST(${p.add(String(q.limit))} AS BIGINT)`;
  return q.offset ? `${limit} OFFSET CAST(${p.add(String(q.offset))} AS BIGINT)` : limit;
}

function build(
  q: NormalizedQuery,
  r: Restrictions,
  pl: Plan,
  withOrderAndLimit: boolean,
  inline: boolean,
): { sql: string; params: string[] } {
  const p = new ParamAllocator(inline);
  // member joins are closed over their requirements already (modelSchema.ts)
  const joins = semantic.joinOrder.filter((j) => pl.joins.has(j));
  const ctes = relationsOf(joins, r, p);
  const select = pl.columns.map((c) => `${c.sql} AS "${c.alias}"`);
  const source = pl.rollup ? pl.rollup.table : semantic.model.facts.table;
  const where = [scopePredicate('f', r, p)];
  const having: string[] = [];
  for (const td of q.timeDimensions) {
    if (!td.dateRange) continue;
    const expr = dimensionOf(td.dimension).sql;
    where.push(
      `(${dateComparison(expr, '>=', td.dateRange[0], p)} AND ${dateComparison(expr, '<=', td.dateRange[1], p)})`,
    );
  }
  for (const f of q.filters) {
    // the injected organization filter, last, is TRUE: the organization is applied from the
    // restrictions, above
    // ungrouped, a measure filter compares each row's value, before any grouping (Cube: WHERE)
    const sql = compileFilter(f, r, q.ungrouped ? 'row' : pl.rollup, p);
    if (sql !== 'TRUE') (isMeasureFilter(f) && !q.ungrouped ? having : where).push(sql);
  }
  // grouping columns come first in the select list; a time column groups by its timestamp
  const grouping = pl.columns
    .filter((c) => c.role !== 'measure')
    .map((c, i) => c.group ?? String(i + 1));
  const lines = [
    ...(ctes.length ? [`WITH ${ctes.join(', ')}`] : []),
    `SELECT ${select.join(', ')}`,
    `FROM ${source} f`,
    ...joins.map((j) => semantic.model.joins[j].sql),
    `WHERE ${where.join(' AND ')}`,
  ];
  if (grouping.length > 0 && !q.ungrouped) lines.push(`GROUP BY ${grouping.join(', ')}`);
  if (having.length > 0) lines.push(`HAVING ${having.join(' AND ')}`);
  if (withOrderAndLimit) {
    const order = orderClause(q, pl.columns);
    if (order.length > 0) lines.push(`ORDER BY ${order.join(', ')}`);
    lines.push(pageClause(q, p));
  }
  return { sql: lines.join('\n'), params: p.params };
}

/** `eager: false` (tests only) reads the facts row by row where eager aggregation would apply. */
export function compileQuery(
  q: NormalizedQuery,
  r: Restrictions,
  opts: { usePreagg: boolean; inline?: boolean; eager?: boolean },
): CompiledQuery {
  const pl = plan(q, opts.usePreagg, opts.eager ?? true);
  const main = build(q, r, pl, true, opts.inline ?? false);
  const total = q.total ? build(q, r, pl, false, opts.inline ?? false) : null;
  return {
    sql: main.sql,
    params: main.params,
    totalSql: total ? `SELECT count(*) AS total FROM (\n${total.sql}\n) q` : null,
    totalParams: total?.params ?? [],
    columns: pl.columns.map(({ sql: _sql, ...c }) => c),
    rollup: pl.stored ? pl.rollup!.name : null,
    eager: pl.rollup !== null && !pl.stored,
  };
}

/** The columns of the table cube.sqlQuery sees: every dimension, and the row value of each sum. */
export const sqlTableColumns: { name: string; sql: string; joins: JoinName[] }[] = [
  ...[...semantic.dimensions.values()].map((d) => ({ name: d.name, sql: d.sql, joins: d.joins })),
  ...[...semantic.measures.values()].flatMap((m) =>
    m.rowSql ? [{ name: m.name, sql: m.rowSql, joins: m.rowJoins }] : [],
  ),
];

/** The rows of the view the caller may see, with the named columns (all when none are named). */
export function rowViewSql(
  r: Restrictions,
  names: readonly string[],
): { sql: string; params: string[] } {
  const p = new ParamAllocator();
  const wanted = new Set(names);
  const columns = sqlTableColumns.filter((c) => wanted.size === 0 || wanted.has(c.name));
  const needed = new Set(columns.flatMap((c) => c.joins));
  const joins = semantic.joinOrder.filter((j) => needed.has(j));
  const ctes = relationsOf(joins, r, p);
  const lines = [
    ...(ctes.length ? [`WITH ${ctes.join(', ')}`] : []),
    `SELECT ${columns.map((c) => `${c.sql} AS "${c.name}"`).join(', ')}`,
    `FROM ${semantic.model.facts.table} f`,
    ...joins.map((j) => semantic.model.joins[j].sql),
    `WHERE ${scopePredicate('f', r, p)}`,
    `ORDER BY f.${semantic.model.facts.sortKey.join(', f.')}`,
  ];
  return { sql: lines.join('\n'), params: p.params };
}
