// The last stage of a normalizer run: the statement's figures from the rows written (totals per
// currency, the statement's period, the raw sales types and sources with their amounts, the
// issues), as NormalizeOutput. One query answers them all, its grouping sets each a figure: the
// rows are read once, and a small statement's query is bound once (each query's binding, not its
// rows, was most of this stage's time).
import {
  parseCurrency,
  coveringPeriod,
  periodOf,
  type Cadence,
  type Period,
} from '../../src/ingest/values.ts';
import type { NormalizeOutput } from '../../src/ingest/normalizeTypes.ts';
import type { Lookups } from './lookups.ts';
import { rowsOf, sumsColumns, type Plan } from './plan.ts';
import type { Survey } from './survey.ts';

/** The columns the figures group by, in the order of GROUPING()'s bits (the first the highest). */
const GROUPED = [
  'currency',
  'stmt_year',
  'stmt_period',
  'stmt_cadence',
  'sales_type',
  'source',
  'payor',
  'country_raw',
] as const;
type Grouped = (typeof GROUPED)[number];

/** Each figure's grouping set. */
const SETS = {
  totals: [],
  perCurrency: ['currency'],
  stmt: ['stmt_year', 'stmt_period', 'stmt_cadence'],
  salesType: ['sales_type'],
  salesTypeByCurrency: ['sales_type', 'currency'],
  source: ['source'],
  sourceByCurrency: ['source', 'currency'],
  payor: ['payor'],
  countryRaw: ['country_raw'],
} as const satisfies Record<string, readonly Grouped[]>;
type Figure = keyof typeof SETS;

/** GROUPING()'s value for a set: a bit per column not grouped by. */
const groupingOf = (set: readonly Grouped[]) =>
  GROUPED.reduce(
    (bits, c, i) => (set.includes(c) ? bits : bits | (1 << (GROUPED.length - 1 - i))),
    0,
  );

/** One group's row: its columns by name, then its aggregates. */
interface Group {
  key: Record<Grouped, unknown>;
  rows: number;
  net: unknown;
  gross: unknown;
  units: unknown;
  firstSale: unknown;
  lastSale: unknown;
  noEarnings: number;
  invalidIsrc: number;
  invalidUpc: number;
  noStmtPeriod: number;
  noCountry: number;
}

// the aggregates of every group, in Group's order
const AGGREGATES = `count(*), sum(royalty_earnings), sum(gross_royalty_earnings), sum(units),
  min(sales_period_start), max(coalesce(sales_period_end, sales_period_start)),
  count(*) FILTER (WHERE royalty_earnings IS NULL),
  count(*) FILTER (WHERE isrc_raw IS NOT NULL AND isrc IS NULL),
  count(*) FILTER (WHERE upc_raw IS NOT NULL AND upc IS NULL),
  count(*) FILTER (WHERE stmt_year IS NULL OR stmt_period IS NULL OR stmt_cadence IS NULL),
  count(*) FILTER (WHERE country IS NULL)`;

/**
 * Every figure's groups from one pass over `target`, in each figure's order: the statement's
 * periods by their rows (most first), then year and period (latest first); every other by its
 * columns, NULL last (the other sets' columns are NULL in a set's rows, so one ORDER BY serves all).
 */
async function groupsOf(plan: Plan, target: string): Promise<Map<Figure, Group[]>> {
  const figures = Object.keys(SETS) as Figure[];
  const sets = figures.map((f) => `(${SETS[f].join(', ')})`).join(', ');
  const grouping = `GROUPING(${GROUPED.join(', ')})`;
  const stmtRows = `CASE WHEN ${grouping} = ${groupingOf(SETS.stmt)} THEN count(*) END`;
  const rows = await rowsOf(
    plan,
    `SELECT ${grouping}, ${GROUPED.join(', ')}, ${AGGREGATES} FROM ${target}
      GROUP BY GROUPING SETS (${sets})
      ORDER BY 1, ${stmtRows} DESC, stmt_year DESC, stmt_period DESC, sales_type, source, payor, country_raw, currency NULLS LAST`,
  );
  const byGrouping = new Map(figures.map((f) => [groupingOf(SETS[f]), f]));
  const groups = new Map<Figure, Group[]>(figures.map((f) => [f, []]));
  for (const r of rows) {
    const key = Object.fromEntries(GROUPED.map((c, i) => [c, r[1 + i]])) as Group['key'];
    const a = r.slice(1 + GROUPED.length);
    groups.get(byGrouping.get(Number(r[0]))!)!.push({
      key,
      rows: Number(a[0]),
      net: a[1],
      gross: a[2],
      units: a[3],
      firstSale: a[4],
      lastSale: a[5],
      noEarnings: Number(a[6]),
      invalidIsrc: Number(a[7]),
      invalidUpc: Number(a[8]),
      noStmtPeriod: Number(a[9]),
      noCountry: Number(a[10]),
    });
  }
  return groups;
}

const text = (v: unknown) => (v === null ? null : String(v));

/** The raw sales types and sources of the rows, with their rows and net earnings per currency. */
function rawValuesOf(groups: Map<Figure, Group[]>): NormalizeOutput['rawValues'] {
  const rawValues: NormalizeOutput['rawValues'] = [];
  for (const [kind, total, byCurrency] of [
    ['sales_type', 'salesType', 'salesTypeByCurrency'],
    ['source', 'source', 'sourceByCurrency'],
  ] as const) {
    const net = new Map(groups.get(total)!.map((g) => [g.key[kind], g.net]));
    for (const g of groups.get(byCurrency)!) {
      if (g.key[kind] === null) continue;
      const raw = String(g.key[kind]);
      const amount = { currency: text(g.key.currency), amount: text(g.net) };
      const last = rawValues.at(-1);
      if (last && last.kind === kind && last.raw === raw) {
        last.rows += g.rows;
        last.amounts.push(amount);
      } else {
        rawValues.push({
          kind,
          raw,
          rows: g.rows,
          amount: text(net.get(g.key[kind]) ?? null),
          amounts: [amount],
        });
      }
    }
  }
  return rawValues;
}

/**
 * The statement's period: its rows' one, else the quarter, half or year that holds all of theirs,
 * else (rows of two calendar years) the most common. Also how many periods its rows have.
 */
function statementPeriod(groups: Map<Figure, Group[]>): {
  stmt: NormalizeOutput['stmt'];
  stmtPeriods: number;
} {
  const stmtRows = groups
    .get('stmt')!
    .map((g) => g.key)
    .filter((k) => k.stmt_year !== null && k.stmt_period !== null && k.stmt_cadence !== null);
  const periods = stmtRows
    .map((k) =>
      periodOf(Number(k.stmt_year), Number(k.stmt_period), String(k.stmt_cadence) as Cadence),
    )
    .filter((p): p is Period => p !== null);
  const covering = periods.length === stmtRows.length ? coveringPeriod(periods) : null;
  const stmt = covering
    ? { year: covering.year, period: covering.period, cadence: covering.cadence }
    : stmtRows[0]
      ? {
          year: Number(stmtRows[0].stmt_year),
          period: Number(stmtRows[0].stmt_period),
          cadence: String(stmtRows[0].stmt_cadence) as Cadence,
        }
      : null;
  return { stmt, stmtPeriods: stmtRows.length };
}

/** The issues of the rows: the counts need only the written rows (a raw identifier is written beside its normalized form). */
function issuesOf(
  plan: Plan,
  surveyed: Survey,
  found: Lookups,
  groups: Map<Figure, Group[]>,
): NormalizeOutput['issues'] {
  const totals = groups.get('totals')![0]!;
  const unknownCountries = groups
    .get('countryRaw')!
    .filter((g) => g.key.country_raw !== null && g.noCountry > 0)
    .slice(0, 50)
    .map((g) => String(g.key.country_raw));
  // the currency reader's misses among the distinct raw values of the kept rows
  const unknownCurrencies = (found.distinct.get('currency') ?? [])
    .filter((v) => parseCurrency(v) === null)
    .sort()
    .slice(0, 50);
  return {
    // an amount is NULL exactly when its cell was empty or unreadable; amounts summed over
    // several columns are never NULL (an unreadable part counts as 0)
    invalidAmounts: sumsColumns(plan.fields.royaltyEarnings)
      ? 0
      : Math.max(0, totals.noEarnings - found.missingAmounts),
    missingAmounts: found.missingAmounts,
    invalidIsrc: totals.invalidIsrc,
    invalidUpc: totals.invalidUpc,
    missingStmtPeriod: totals.noStmtPeriod,
    extraCells: surveyed.extraCells,
    unknownCountries,
    unknownCurrencies,
  };
}

/** The figures of the rows written to `target` (a Parquet reader or a table of them). */
export async function figures(
  plan: Plan,
  surveyed: Survey,
  found: Lookups,
  target: string,
): Promise<NormalizeOutput> {
  const groups = await groupsOf(plan, target);
  const totals = groups.get('totals')![0]!;
  const perCurrency = groups.get('perCurrency')!.map((g) => ({
    currency: text(g.key.currency),
    rows: g.rows,
    net: text(g.net),
    gross: text(g.gross),
    units: text(g.units),
  }));
  // money of several currencies is never added up: the statement's totals are then per currency only
  const oneCurrency = perCurrency.length <= 1;
  return {
    decimalComma: plan.input.decimalComma,
    dataRows: surveyed.total,
    keptRows: totals.rows,
    dropped: [
      { reason: 'blank', rows: surveyed.blankRows },
      { reason: 'footer', rows: surveyed.footer },
      { reason: 'repeated_header', rows: surveyed.headerRows },
    ].filter((d) => d.rows > 0),
    net: oneCurrency ? text(totals.net) : null,
    gross: oneCurrency ? text(totals.gross) : null,
    units: text(totals.units),
    perCurrency,
    ...statementPeriod(groups),
    salesPeriodStart: text(totals.firstSale),
    salesPeriodEnd: text(totals.lastSale),
    rawValues: rawValuesOf(groups),
    payors: groups
      .get('payor')!
      .filter((g) => g.key.payor !== null)
      .slice(0, 1000)
      .map((g) => String(g.key.payor)),
    issues: issuesOf(plan, surveyed, found, groups),
  };
}

/** A preview's first 1,000 normalized rows. */
export async function previewRows(plan: Plan): Promise<Record<string, unknown>[]> {
  const reader = await plan.connections[0].runAndReadAll(
    `SELECT * EXCLUDE (organization_id, statement_id, rightsholder_id) FROM normalized ORDER BY source_row LIMIT 1000`,
  );
  return reader.getRowObjectsJson() as Record<string, unknown>[];
}
