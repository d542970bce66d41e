// `royalty query` options as an analytics query (Cube query format) on analytics_full_view:
// members by their short names, filters as `member=value`, a month range on the sales period.
import type { AnalyticsQuery } from '../client/index.ts';
import { monthIndex, periodOf, type Period } from '../periods.ts';
import { UsageError } from './output.ts';

export const VIEW = 'analytics_full_view';
const TIME_DIMENSION = `${VIEW}.sales_period_start`;

export function member(name: string): string {
  if (!/^[A-Za-z_][\w.]*$/.test(name))
    throw new UsageError(`${name} is not a member name (royalty call cube.meta lists them)`);
  return name.includes('.') ? name : `${VIEW}.${name}`;
}

// longest first: `>=` before `>`, `!=` before `=`
const FILTER_OPERATORS: [string, string][] = [
  ['!=', 'notEquals'],
  ['>=', 'gte'],
  ['<=', 'lte'],
  ['!~', 'notContains'],
  ['=', 'equals'],
  ['~', 'contains'],
  ['>', 'gt'],
  ['<', 'lt'],
];

export interface Filter {
  member: string;
  operator: string;
  values: string[];
}

/** `territory=US,DE`, `source~spot`, `units>=10`, `payor!=X`: the first operator sign splits it. */
export function parseFilter(text: string): Filter {
  let best: { at: number; sign: string; operator: string } | undefined;
  for (const [sign, operator] of FILTER_OPERATORS) {
    const at = text.indexOf(sign);
    if (
      at > 0 &&
      (best === undefined || at < best.at || (at === best.at && sign.length > best.sign.length))
    )
      best = { at, sign, operator };
  }
  if (!best)
    throw new UsageError(
      `--filter ${text}: write member=value (also != ~ !~ > >= < <=; values split on commas)`,
    );
  const values = text.slice(best.at + best.sign.length).split(',');
  return { member: member(text.slice(0, best.at).trim()), operator: best.operator, values };
}

/** `2024-01..2024-06` or `2024-03`: the first and last day of those months. */
export function monthRange(text: string): [string, string] {
  const m = /^(\d{4}-\d{2})(?:\.\.(\d{4}-\d{2}))?$/.exec(text.trim());
  if (!m)
    throw new UsageError(`--month-range ${text}: write YYYY-MM..YYYY-MM (or one month YYYY-MM)`);
  const [from, to] = [monthOf(m[1]!), monthOf(m[2] ?? m[1]!)];
  if (!from || !to)
    throw new UsageError(`--month-range ${text}: months are 01 to 12, years 1900 to 2200`);
  if (monthIndex(to.start) < monthIndex(from.start))
    throw new UsageError(`--month-range ${text}: the range ends before it starts`);
  return [from.start, to.end];
}

/** The calendar month of a `YYYY-MM`, or null for a month outside 01-12. */
function monthOf(yearMonth: string): Period | null {
  return periodOf(Number(yearMonth.slice(0, 4)), Number(yearMonth.slice(5, 7)), 'M');
}

export interface QueryOptions {
  measure?: string[];
  dimension?: string[];
  filter?: string[];
  monthRange?: string;
  granularity?: string;
  order?: string[];
  limit?: string;
}

export function buildQuery(options: QueryOptions, rightsholderIds: string[]): AnalyticsQuery {
  const measures = (options.measure ?? []).map(member);
  const dimensions = (options.dimension ?? []).map(member);
  if (measures.length === 0 && dimensions.length === 0)
    throw new UsageError('Name at least one --measure or --dimension');
  const filters = [
    { member: `${VIEW}.rightsholder_id`, operator: 'equals', values: rightsholderIds },
    ...(options.filter ?? []).map(parseFilter),
  ];
  const range = options.monthRange ? monthRange(options.monthRange) : undefined;
  const timeDimensions =
    range || options.granularity
      ? [
          {
            dimension: TIME_DIMENSION,
            ...(range ? { dateRange: range } : {}),
            ...(options.granularity ? { granularity: options.granularity } : {}),
          },
        ]
      : [];
  const order = (options.order ?? []).map((o) => {
    const [name, direction = 'asc'] = o.split(':');
    if (direction !== 'asc' && direction !== 'desc')
      throw new UsageError(`--order ${o}: write member or member:desc`);
    return [member(name!), direction];
  });
  const limit = options.limit === undefined ? undefined : Number(options.limit);
  if (limit !== undefined && !Number.isInteger(limit))
    throw new UsageError(`--limit ${options.limit} is not a whole number`);
  return {
    measures,
    dimensions,
    filters,
    ...(timeDimensions.length > 0 ? { timeDimensions } : {}),
    ...(order.length > 0 ? { order } : {}),
    ...(limit !== undefined ? { limit } : {}),
  } as AnalyticsQuery;
}

/** An answer's rows with the view's prefix taken off the column names, for the table. */
export function shortRows(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([k, v]) => [
        k.startsWith(`${VIEW}.`) ? k.slice(VIEW.length + 1) : k,
        v,
      ]),
    ),
  );
}
