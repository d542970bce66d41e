// The query object of cube.query: its strict input schema (every problem reported with its field
// path), and its normalization into the form that is echoed, compiled and used in cache keys.
// Semantics follow Cube's api-gateway (see docs/spec/cube-query-semantics.md).
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import {
  DateParseError,
  absoluteBound,
  canonicalZone,
  isAbsolute,
  resolveDateRange,
  resolveRelative,
  type DateRange,
} from './dates.ts';
import {
  GRANULARITIES,
  VIEW,
  dimensionDefs,
  full,
  granularMemberOf,
  measureDefs,
  memberOf,
  ungroupedMeasure,
  type QueryGranularity,
} from './semantic.ts';

export const OPERATORS = [
  'equals',
  'notEquals',
  'contains',
  'notContains',
  'startsWith',
  'notStartsWith',
  'endsWith',
  'notEndsWith',
  'gt',
  'gte',
  'lt',
  'lte',
  'set',
  'notSet',
  'inDateRange',
  'notInDateRange',
  'beforeDate',
  'beforeOrOnDate',
  'afterDate',
  'afterOrOnDate',
] as const;
export type Operator = (typeof OPERATORS)[number];

const DATE_OPERATORS: readonly Operator[] = [
  'inDateRange',
  'notInDateRange',
  'beforeDate',
  'beforeOrOnDate',
  'afterDate',
  'afterOrOnDate',
];
/** A refused operator is told the accepted ones (Cube names only the filter that does not match). */
const operatorEnum = z.enum(OPERATORS, {
  error: () => `unknown operator: the operators are ${OPERATORS.join(', ')}`,
});
const COMPARISONS: readonly Operator[] = ['gt', 'gte', 'lt', 'lte'];
const MAX_DEPTH = 8;
/**
 * Filters in all, inside groups too. Each is compiled with its member's expression, and DuckDB's
 * planner slows down steeply with the copies (one filter on tm costs about 2 ms to plan on any
 * data): 100 groups of 100 contains filters fit in a 1 MiB body and ran past the 25 s window.
 */
const MAX_FILTERS = 200;
/** Values in all: 100 filters of 1,000 values each took seconds to plan and run on 7 rows. */
const MAX_VALUES = 10_000;
export const DEFAULT_LIMIT = 10_000;
export const MAX_LIMIT = 50_000;
/** Cube sets no bound; ours keeps the OFFSET a safe integer DuckDB reads as a BIGINT. */
export const MAX_OFFSET = Number.MAX_SAFE_INTEGER;

const memberName = z.string().min(1).max(200);
const filterValue = z.union([z.string().max(1_000), z.number(), z.boolean(), z.null()]);

export interface FilterInput {
  member?: string | undefined;
  operator?: Operator | undefined;
  values?: (string | number | boolean | null)[] | undefined;
  and?: FilterInput[] | undefined;
  or?: FilterInput[] | undefined;
}

/**
 * The filter node at `depth` (1 for the query's own filters). The schema is built level by level,
 * not as one recursive lazy schema: a node deeper than MAX_DEPTH is refused where it stands,
 * without being descended into, so a crafted nesting of thousands of groups is VALIDATION_FAILED at
 * the first level too deep instead of exhausting the stack while it is parsed.
 */
function filterNodeAt(depth: number): z.ZodType<FilterInput> {
  if (depth > MAX_DEPTH)
    return z.custom<FilterInput>(() => false, {
      message: `filter groups nest at most ${MAX_DEPTH} levels deep`,
    });
  const child = filterNodeAt(depth + 1);
  return z
    .strictObject({
      member: memberName.optional(),
      operator: operatorEnum.optional(),
      values: z.array(filterValue).max(1_000).optional(),
      and: z.array(child).min(1).max(100).optional(),
      or: z.array(child).min(1).max(100).optional(),
    })
    .superRefine((f, ctx) => {
      const isGroup = f.and !== undefined || f.or !== undefined;
      if (isGroup) {
        if (f.and !== undefined && f.or !== undefined)
          ctx.addIssue({ code: 'custom', message: 'a group has either and or or, not both' });
        if (f.member !== undefined || f.operator !== undefined || f.values !== undefined) {
          ctx.addIssue({
            code: 'custom',
            message: 'a group (and/or) has no member, operator or values',
          });
        }
        return;
      }
      if (f.member === undefined)
        ctx.addIssue({ code: 'custom', path: ['member'], message: 'required' });
      if (f.operator === undefined)
        ctx.addIssue({ code: 'custom', path: ['operator'], message: 'required' });
    });
}

const filterNode = filterNodeAt(1);

const dateRangeInput = z.union([
  z.string().min(1).max(200),
  z.array(z.string().max(40)).min(1).max(2),
]);
/** Ranges compared in one request: each is a query of its own (compare.ts). */
export const MAX_COMPARED_RANGES = 12;

const timeDimensionInput = z.strictObject({
  dimension: memberName,
  granularity: z.enum(GRANULARITIES).optional(),
  dateRange: dateRangeInput.optional(),
  compareDateRange: z.array(dateRangeInput).min(1).max(MAX_COMPARED_RANGES).optional(),
});

const orderDirection = z.enum(['asc', 'desc']);
const orderObject = z.record(memberName, orderDirection);
const orderPairs = z.array(z.tuple([memberName, orderDirection])).max(100);

/**
 * `order` in either of Cube's forms: an object `{member: "asc"|"desc"}` (key order is sort order)
 * or an array of `[member, "asc"|"desc"]` pairs (what Cube's playground and SDK send). Each form is
 * checked by its own schema, so a problem is reported at its path (`order.<member>`,
 * `order.0.1`) rather than as one "Invalid input" of the union.
 */
const orderInput = z.preprocess(
  (v, ctx) => {
    const checked = (Array.isArray(v) ? orderPairs : orderObject).safeParse(v);
    if (checked.success) return v;
    for (const i of checked.error.issues)
      ctx.addIssue({ ...i, path: i.path } as Parameters<typeof ctx.addIssue>[0]);
    return {};
  },
  z.union([orderObject, orderPairs]),
);

/** The entries of `order` as [member, direction], in sort order, with the path of each member. */
function orderEntries(
  order: z.output<typeof orderInput>,
): { id: string; dir: 'asc' | 'desc'; path: (string | number)[] }[] {
  if (Array.isArray(order))
    return order.map(([id, dir], i) => ({ id, dir, path: ['order', i, 0] }));
  return Object.entries(order).map(([id, dir]) => ({ id, dir, path: ['order', id] }));
}

const queryShape = z.strictObject({
  measures: z.array(memberName).max(100).optional(),
  dimensions: z.array(memberName).max(100).optional(),
  timeDimensions: z.array(timeDimensionInput).max(20).optional(),
  filters: z.array(filterNode).max(MAX_FILTERS).optional(),
  order: orderInput.optional(),
  // the model defines no segments: each one named is Cube's unknown-segment error (checkAgainstModel)
  segments: z.array(memberName).max(100).optional(),
  // 0 is a valid limit, as in Cube: no rows, `total` still counted when asked for
  limit: z.number().int().min(0).max(MAX_LIMIT).optional(),
  offset: z.number().int().min(0).max(MAX_OFFSET).optional(),
  // echoed only when sent, as Cube echoes it
  total: z.boolean().optional(),
  timezone: z.string().min(1).max(100).optional(),
  // row-level answers (Cube's `ungrouped`): no GROUP BY, measures as their row values
  ungrouped: z.boolean().optional(),
});

export type QueryInput = z.output<typeof queryShape>;

type Ctx = z.core.$RefinementCtx<QueryInput>;

/**
 * The issues a query is told about at most. An issue costs zod about 8 µs, and a 1 MiB body of
 * 150 filters of 1,000 values that are not numbers made 150,000 of them: seconds of the event loop
 * for an answer that shows the first few.
 */
const MAX_ISSUES = 100;
const issueCounts = new WeakMap<Ctx, number>();

function issue(ctx: Ctx, path: (string | number)[], message: string): void {
  const count = issueCounts.get(ctx) ?? 0;
  if (count >= MAX_ISSUES) return;
  issueCounts.set(ctx, count + 1);
  ctx.addIssue({ code: 'custom', path, message });
}

type MemberKind = 'measure' | 'dimension' | 'time';

function kindOf(fullName: string): MemberKind | undefined {
  const name = memberOf(fullName);
  if (name === undefined) return undefined;
  if (measureDefs.has(name)) return 'measure';
  const d = dimensionDefs.get(name);
  if (!d) return undefined;
  return d.type === 'time' ? 'time' : 'dimension';
}

function unknownMember(fullName: string): string {
  return fullName.startsWith(`${VIEW}.`)
    ? `unknown member ${fullName}`
    : `unknown member ${fullName}: members are named ${VIEW}.<member>`;
}

/**
 * A number as DuckDB's CAST(… AS DOUBLE) reads it: around it only the ASCII spaces DuckDB skips
 * (space, tab, newline, vertical tab, form feed, carriage return). JavaScript's trim() also drops
 * Unicode spaces (no-break space, U+2028, BOM …), which DuckDB refuses: such a value passed and the
 * query failed in DuckDB, INTERNAL_ERROR.
 */
const isNumeric = (v: string) =>
  /^[ \t\n\v\f\r]*[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?[ \t\n\v\f\r]*$/i.test(v);

/** The message of the DateParseError `resolve` throws, or undefined when it resolves. */
function dateProblem(resolve: () => unknown): string | undefined {
  try {
    resolve();
    return undefined;
  } catch (error) {
    if (error instanceof DateParseError) return error.message;
    throw error;
  }
}

/** What is wrong with a value compared with a time member (equals, gt, …), or undefined. */
function timeValueProblem(member: string, v: string): string | undefined {
  if (!isAbsolute(v)) return `${member} is a time: '${v}' is not a date`;
  const problem = dateProblem(() => absoluteBound(v, 'start'));
  return problem === undefined ? undefined : `${member} is a time: ${problem}`;
}

/** When and where relative dates are resolved: the instant, and the query's time zone. */
interface Clock {
  now: number;
  tz: string;
}

/** The dates of a date operator's values (inDateRange, beforeDate, …), resolved as normalizeFilter resolves them. */
function resolveDateValues(op: Operator, dates: string[], { now, tz }: Clock): string[] {
  // one value is read as a dateRange string: a phrase, or a date or timestamp meaning its whole day
  if (op === 'inDateRange' || op === 'notInDateRange')
    return resolveDateRange(dates.length === 2 ? dates : dates[0]!, now, tz);
  // the others compare with the start of a bare date's day (BaseFilter.formatFromDate, for
  // beforeOrOnDate too), and with the start (beforeDate, afterOrOnDate) or end (afterDate,
  // beforeOrOnDate) of a phrase's range (Cube's normalizeDateFilterValues)
  if (isAbsolute(dates[0]!)) return [absoluteBound(dates[0]!, 'start', tz)];
  const [start, end] = resolveRelative(dates[0]!, now, tz);
  return [op === 'beforeDate' || op === 'afterOrOnDate' ? start : end];
}

/**
 * Cube's answer for a segment the model does not define, in its words (CubeEvaluator.byPath): the
 * view has no segments, so every name is one of these.
 */
export function unknownSegment(path: string): string {
  const [cube, name] = path.split('.');
  return cube === VIEW && name !== undefined
    ? `'${name}' not found for path '${path}'`
    : `Cube '${cube}' not found for path '${path}'`;
}

/** Checks the query against the model; adds an issue with its path for each problem. */
function checkAgainstModel(q: QueryInput, ctx: Ctx): void {
  // Cube's own words (api-gateway query.js); the zone's name in any letter case
  if (q.timezone !== undefined && canonicalZone(q.timezone) === undefined)
    issue(ctx, ['timezone'], `"timezone" must be a valid IANA time zone, got "${q.timezone}"`);
  if (q.ungrouped) checkUngrouped(q, ctx);
  checkCompareDateRange(q, ctx);
  q.segments?.forEach((segment, i) => issue(ctx, ['segments', i], unknownSegment(segment)));
  q.measures?.forEach((m, i) => {
    const kind = kindOf(m);
    if (kind === undefined) issue(ctx, ['measures', i], unknownMember(m));
    else if (kind !== 'measure') issue(ctx, ['measures', i], `${m} is a dimension, not a measure`);
  });
  q.dimensions?.forEach((d, i) => {
    const kind = kindOf(d);
    if (kind === undefined && !granularMemberOf(d)) issue(ctx, ['dimensions', i], unknownMember(d));
    else if (kind === 'measure')
      issue(ctx, ['dimensions', i], `${d} is a measure, not a dimension`);
  });
  q.timeDimensions?.forEach((td, i) => {
    const kind = kindOf(td.dimension);
    if (kind === undefined)
      issue(ctx, ['timeDimensions', i, 'dimension'], unknownMember(td.dimension));
    else if (kind !== 'time')
      issue(ctx, ['timeDimensions', i, 'dimension'], `${td.dimension} is not a time dimension`);
    if (td.dateRange !== undefined) {
      const dateRange = td.dateRange;
      const problem = dateProblem(() => resolveDateRange(dateRange, Date.now()));
      if (problem !== undefined) issue(ctx, ['timeDimensions', i, 'dateRange'], problem);
    }
  });
  // the bounds first: they are reported even when the filters have more issues than are told
  const counted = (q.filters ?? [])
    .map(leafCount)
    .reduce((a, b) => ({ filters: a.filters + b.filters, values: a.values + b.values }), {
      filters: 0,
      values: 0,
    });
  if (counted.filters > MAX_FILTERS) {
    issue(
      ctx,
      ['filters'],
      `a query has at most ${MAX_FILTERS} filters in all, counting those inside and/or groups (this one has ${counted.filters})`,
    );
  }
  if (counted.values > MAX_VALUES)
    issue(
      ctx,
      ['filters'],
      `the filters of a query have at most ${MAX_VALUES} values in all (these have ${counted.values})`,
    );
  q.filters?.forEach((f, i) => checkFilter(f, ['filters', i], 1, ctx));
  for (const { id, path } of q.order ? orderEntries(q.order) : []) {
    if (kindOf(id) === undefined && !granularMemberOf(id)) issue(ctx, path, unknownMember(id));
  }
  const hasGranularity = (q.timeDimensions ?? []).some((td) => td.granularity !== undefined);
  if (!q.measures?.length && !q.dimensions?.length && !hasGranularity) {
    issue(
      ctx,
      [],
      'Query should contain either measures, dimensions or timeDimensions with granularities in order to be valid',
    );
  }
}

/** compareDateRange (Cube's compareDateRangeTransformer): on one time dimension, without its dateRange, each range resolvable. */
function checkCompareDateRange(q: QueryInput, ctx: Ctx): void {
  const compared = (q.timeDimensions ?? [])
    .map((td, i) => ({ td, i }))
    .filter(({ td }) => td.compareDateRange !== undefined);
  for (const { td, i } of compared) {
    const path = ['timeDimensions', i, 'compareDateRange'];
    if (td !== compared[0]!.td)
      issue(ctx, path, 'compareDateRange can only exist for one timeDimension');
    if (td.dateRange !== undefined)
      issue(ctx, path, 'a time dimension has either dateRange or compareDateRange, not both');
    td.compareDateRange!.forEach((range, j) => {
      const problem = dateProblem(() => resolveDateRange(range, Date.now()));
      if (problem !== undefined) issue(ctx, [...path, j], problem);
    });
  }
}

/** Each measure an ungrouped query reads (selected, filtered, ordered by) has a value of one row. */
function checkUngrouped(q: QueryInput, ctx: Ctx): void {
  const check = (member: string | undefined, path: (string | number)[]) => {
    const name = member === undefined ? undefined : memberOf(member);
    if (name === undefined || !measureDefs.has(name) || ungroupedMeasure(name) !== null) return;
    issue(
      ctx,
      path,
      `${member} has no value of one row (a distinct count or a ratio): it cannot be asked for in an ungrouped query`,
    );
  };
  q.measures?.forEach((m, i) => check(m, ['measures', i]));
  const walk = (f: FilterInput, path: (string | number)[]): void => {
    const children = f.and ?? f.or;
    if (children) children.forEach((c, i) => walk(c, [...path, f.and ? 'and' : 'or', i]));
    else check(f.member, [...path, 'member']);
  };
  q.filters?.forEach((f, i) => walk(f, ['filters', i]));
  for (const { id, path } of q.order ? orderEntries(q.order) : []) check(id, path);
}

/** The filters (not groups) under a node and their values; the schema has bounded its depth. */
function leafCount(f: FilterInput): { filters: number; values: number } {
  const children = f.and ?? f.or;
  if (!children) return { filters: 1, values: f.values?.length ?? 0 };
  return children
    .map(leafCount)
    .reduce((a, b) => ({ filters: a.filters + b.filters, values: a.values + b.values }), {
      filters: 0,
      values: 0,
    });
}

/** 'measure' or 'dimension' for the leaves under a node (undefined when they mix or are invalid). */
function checkFilter(
  f: FilterInput,
  path: (string | number)[],
  depth: number,
  ctx: Ctx,
): Set<'measure' | 'dimension'> {
  const sides = new Set<'measure' | 'dimension'>();
  if (depth > MAX_DEPTH) {
    issue(ctx, path, `filter groups nest at most ${MAX_DEPTH} levels deep`);
    return sides;
  }
  const children = f.and ?? f.or;
  if (children) {
    children.forEach((c, i) => {
      for (const s of checkFilter(c, [...path, f.and ? 'and' : 'or', i], depth + 1, ctx))
        sides.add(s);
    });
    if (sides.size > 1)
      issue(
        ctx,
        path,
        'You cannot use dimension and measure in same condition: a group is applied either before (dimensions) or after (measures) aggregation',
      );
    return sides;
  }
  if (f.member === undefined || f.operator === undefined) return sides;
  const kind = kindOf(f.member);
  if (kind === undefined) {
    issue(ctx, [...path, 'member'], unknownMember(f.member));
    return sides;
  }
  sides.add(kind === 'measure' ? 'measure' : 'dimension');
  checkLeafValues({ ...f, member: f.member, operator: f.operator }, kind, path, ctx);
  return sides;
}

/** One member's filter, as its values are checked against the member's type. */
interface LeafCheck {
  member: string;
  op: Operator;
  type: 'number' | NonNullable<ReturnType<typeof dimensionDefs.get>>['type'];
  /** the values as text (null stays null) */
  strings: (string | null)[];
  path: (string | number)[];
  valuesPath: (string | number)[];
}

/** A leaf filter's operator and values fit its member's type. */
function checkLeafValues(
  f: FilterInput & { member: string; operator: Operator },
  kind: MemberKind,
  path: (string | number)[],
  ctx: Ctx,
): void {
  const name = memberOf(f.member)!;
  const leaf: LeafCheck = {
    member: f.member,
    op: f.operator,
    type: kind === 'measure' ? 'number' : dimensionDefs.get(name)!.type,
    strings: (f.values ?? []).map((v) => (v === null ? null : String(v))),
    path,
    valuesPath: [...path, 'values'],
  };
  const { op } = leaf;
  if (DATE_OPERATORS.includes(op)) checkDateValues(leaf, ctx);
  else if (op === 'set' || op === 'notSet') return;
  else if (COMPARISONS.includes(op)) checkComparedValue(leaf, ctx);
  else checkListedValues(leaf, ctx);
}

/** A date operator: a time dimension, and one value (a date or a relative phrase) or two dates. */
function checkDateValues(leaf: LeafCheck, ctx: Ctx): void {
  const { op, strings, valuesPath } = leaf;
  if (leaf.type !== 'time') {
    issue(
      ctx,
      [...leaf.path, 'operator'],
      `${op} needs a time dimension; ${leaf.member} is not one`,
    );
    return;
  }
  if (strings.some((v) => v === null)) {
    issue(ctx, valuesPath, `${op} takes dates, not null`);
    return;
  }
  const dates = strings as string[];
  if (op === 'inDateRange' || op === 'notInDateRange') {
    if (dates.length < 1 || dates.length > 2) {
      issue(ctx, valuesPath, `${op} takes one value (a date or a relative phrase) or two dates`);
      return;
    }
  } else if (dates.length !== 1) {
    issue(ctx, valuesPath, `${op} takes exactly one value (a date or a relative phrase)`);
    return;
  }
  const problem = dateProblem(() => resolveDateValues(op, dates, { now: Date.now(), tz: 'UTC' }));
  if (problem !== undefined) issue(ctx, valuesPath, problem);
}

/** A comparison: its first value given, not null, and of the member's type. */
function checkComparedValue(leaf: LeafCheck, ctx: Ctx): void {
  const { op, type, valuesPath } = leaf;
  const first = leaf.strings[0];
  if (first === undefined || first === null) {
    issue(ctx, valuesPath, `${op} compares with its first value, which must be given and not null`);
    return;
  }
  if (type === 'number' && !isNumeric(first))
    issue(ctx, [...valuesPath, 0], `${leaf.member} is a number: '${first}' is not one`);
  const problem = type === 'time' ? timeValueProblem(leaf.member, first) : undefined;
  if (problem !== undefined) issue(ctx, [...valuesPath, 0], problem);
}

/** equals, notEquals and the LIKE family (contains, startsWith, endsWith and their negations). */
function checkListedValues(leaf: LeafCheck, ctx: Ctx): void {
  const { op, type, strings, valuesPath, member } = leaf;
  if (strings.length === 0) {
    issue(ctx, valuesPath, `${op} needs at least one value`);
    return;
  }
  if (op === 'equals' || op === 'notEquals') {
    // each value at its own index (indexOf gave a repeated value the path of its first
    // occurrence, and cost O(n²): 150 filters of 1,000 values held the event loop for seconds)
    strings.forEach((v, i) => {
      if (v === null) return;
      if (type === 'number' && !isNumeric(v))
        issue(ctx, [...valuesPath, i], `${member} is a number: '${v}' is not one`);
      const problem = type === 'time' ? timeValueProblem(member, v) : undefined;
      if (problem !== undefined) issue(ctx, [...valuesPath, i], problem);
    });
  }
}

/** The query object as cube.query takes it. */
export const cubeQuerySchema = queryShape.superRefine(checkAgainstModel);

// --- normalization ----------------------------------------------------------------------

export interface NormalizedFilter {
  member: string;
  operator: Operator;
  values?: (string | null)[];
}
export type NormalizedFilterNode =
  NormalizedFilter | { and: NormalizedFilterNode[] } | { or: NormalizedFilterNode[] };

export interface NormalizedTimeDimension {
  dimension: string;
  granularity?: QueryGranularity;
  dateRange?: DateRange;
}

export interface NormalizedQuery {
  measures: string[];
  dimensions: string[];
  timeDimensions: NormalizedTimeDimension[];
  limit: number;
  offset?: number;
  total: boolean;
  /** the canonical IANA name; UTC unless the query names one */
  timezone: string;
  filters: NormalizedFilterNode[];
  rowLimit: number;
  order?: { id: string; desc: boolean }[];
  /** only when sent as true: row-level answers */
  ungrouped?: true;
}

const ORGANIZATION = full('organization_id');
/**
 * The members holding ids the service generates: UUIDs, stored in lower case. */
const ID_MEMBERS = new Set([
  'organization_id',
  'rightsholder_id',
  'statement_id',
  'distributor_id',
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
for (const name of ID_MEMBERS)
  if (dimensionDefs.get(name)?.type !== 'string')
    throw new Error(`model: ${name} is no longer a string dimension; revisit ID_MEMBERS`);

/**
 * `resolve()`, with a DateParseError reported as the schema reports it (BAD_REQUEST,
 * VALIDATION_FAILED, the field path under the procedures' `query` input). The schema has resolved
 * every date already, a moment earlier: this answers the rare phrase that left the supported
 * calendar in between (`last 2025 years` across New Year) without an internal error.
 */
function resolvedAt<T>(path: (string | number)[], resolve: () => T): T {
  try {
    return resolve();
  } catch (error) {
    if (!(error instanceof DateParseError)) throw error;
    // a cause with the issues of a failed schema, as tRPC's input validation gives them
    const cause = Object.assign(new Error(error.message), {
      issues: [{ code: 'custom', path: ['query', ...path], message: error.message }],
    });
    throw new TRPCError({ code: 'BAD_REQUEST', message: error.message, cause });
  }
}

/**
 * Whether a filter is one on organization_id, which the server strips wherever it stands (spec,
 * analytics rule 3: the organization comes from the caller's identity, never from the query). A
 * group left empty by it goes too, so `or: [other organization, x]` is `x` and a lone
 * `other organization` filter changes nothing.
 */
export const isOrganizationFilter = (f: { member?: string | undefined }): boolean =>
  f.member === ORGANIZATION;

function normalizeFilter(
  f: FilterInput,
  clock: Clock,
  path: (string | number)[],
): NormalizedFilterNode | undefined {
  if (isOrganizationFilter(f)) return undefined;
  const children = f.and ?? f.or;
  if (children) {
    const key = f.and ? 'and' : 'or';
    const kept = children
      .map((c, i) => normalizeFilter(c, clock, [...path, key, i]))
      .filter((c): c is NormalizedFilterNode => c !== undefined);
    if (kept.length === 0) return undefined;
    return f.and ? { and: kept } : { or: kept };
  }
  const op = f.operator!;
  const values = (f.values ?? []).map((v) => (v === null ? null : String(v)));
  if (op === 'set' || op === 'notSet') return { member: f.member!, operator: op };
  if (DATE_OPERATORS.includes(op))
    return {
      member: f.member!,
      operator: op,
      values: resolvedAt([...path, 'values'], () =>
        resolveDateValues(op, values as string[], clock),
      ),
    };
  // a time member compares with its values in the one form of a bound (case, Z, offset and the
  // separator of the value as given mean nothing to the SQL); an id member with an id in the form
  // it is stored in, lower case (an id sent in capitals names the same row, as everywhere else)
  const time = kindOf(f.member!) === 'time';
  const id = ID_MEMBERS.has(memberOf(f.member!)!);
  const canonical = (v: string | null) =>
    v === null
      ? v
      : time
        ? absoluteBound(v, 'start', clock.tz)
        : id && UUID.test(v)
          ? v.toLowerCase()
          : v;
  if (COMPARISONS.includes(op))
    return { member: f.member!, operator: op, values: [canonical(values[0]!)] };
  if ((time || id) && (op === 'equals' || op === 'notEquals'))
    return { member: f.member!, operator: op, values: values.map(canonical) };
  return { member: f.member!, operator: op, values };
}

const dedupe = (items: string[]) => [...new Set(items)];

/**
 * The validated query in its canonical form: client filters on organization_id stripped, the
 * caller's organization filter added last.
 */
export function normalizeQuery(
  q: QueryInput,
  organizationId: string,
  now: number,
): NormalizedQuery {
  const tz = q.timezone === undefined ? 'UTC' : canonicalZone(q.timezone)!;
  const clock: Clock = { now, tz };
  const dimensions: string[] = [];
  const granularDimensions: NormalizedTimeDimension[] = [];
  for (const d of q.dimensions ?? []) {
    const granular = granularMemberOf(d);
    // `view.td.month` in dimensions means a time dimension with that granularity (as in Cube)
    if (granular)
      granularDimensions.push({
        dimension: full(granular.member),
        granularity: granular.granularity,
      });
    else dimensions.push(d);
  }
  const timeDimensions: NormalizedTimeDimension[] = (q.timeDimensions ?? []).map((td, i) => {
    const dateRange = td.dateRange;
    return {
      dimension: td.dimension,
      ...(td.granularity ? { granularity: td.granularity } : {}),
      ...(dateRange !== undefined
        ? {
            dateRange: resolvedAt(['timeDimensions', i, 'dateRange'], () =>
              resolveDateRange(dateRange, now, tz),
            ),
          }
        : {}),
    };
  });
  // after the query's own timeDimensions, where Cube's normalizeQuery appends them: the first
  // time dimension with a granularity decides the default order, and the echo lists them so
  timeDimensions.push(...granularDimensions);
  const filters = (q.filters ?? [])
    .map((f, i) => normalizeFilter(f, clock, ['filters', i]))
    .filter((f): f is NormalizedFilterNode => f !== undefined);
  filters.push({ member: ORGANIZATION, operator: 'equals', values: [organizationId] });
  const limit = q.limit ?? DEFAULT_LIMIT;
  const out: NormalizedQuery = {
    measures: dedupe(q.measures ?? []),
    dimensions: dedupe(dimensions),
    timeDimensions,
    limit,
    // echoed only when sent, where Cube's echo has it (after limit)
    ...(q.offset !== undefined ? { offset: q.offset } : {}),
    total: q.total ?? false,
    timezone: tz,
    filters,
    rowLimit: limit,
  };
  if (q.order)
    out.order = orderEntries(q.order).map(({ id, dir }) => ({ id, desc: dir === 'desc' }));
  if (q.ungrouped) out.ungrouped = true;
  return out;
}

/**
 * True when the filters name rightsholders on every path through them (spec, analytics rule 1): a
 * top-level filter, one inside an `and`, or every branch of an `or`, that is `equals` with at least
 * one UUID on rightsholder_id. The other operators (notEquals, contains '', gt, set, …) name none,
 * nor does an `or` with a branch that names none.
 */
export function hasRightsholderFilter(filters: readonly NormalizedFilterNode[]): boolean {
  const member = full('rightsholder_id');
  const names = (f: NormalizedFilterNode): boolean =>
    'and' in f
      ? f.and.some(names)
      : 'or' in f
        ? f.or.every(names)
        : f.member === member &&
          f.operator === 'equals' &&
          (f.values ?? []).some((v) => v !== null && UUID.test(v));
  return filters.some(names);
}
