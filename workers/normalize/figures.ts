// The last stage of a normalizer run: the statement's figures from the rows written (totals per
// currency, the statement's period, the raw sales types and sources with their amounts, the
// issues), as NormalizeOutput.
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

/** The raw sales types and sources of the rows, with their rows and net earnings per currency. */
async function rawValuesOf(plan: Plan, target: string): Promise<NormalizeOutput['rawValues']> {
  const rawValues: NormalizeOutput['rawValues'] = [];
  for (const [kind, column] of [
    ['sales_type', 'sales_type'],
    ['source', 'source'],
  ] as const) {
    const byCurrency = await rowsOf(
      plan,
      `SELECT ${column}, currency, count(*), sum(royalty_earnings), sum(sum(royalty_earnings)) OVER (PARTITION BY ${column})
       FROM ${target} WHERE ${column} IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2 NULLS LAST`,
    );
    for (const r of byCurrency) {
      const raw = String(r[0]);
      const amount = {
        currency: r[1] === null ? null : String(r[1]),
        amount: r[3] === null ? null : String(r[3]),
      };
      const last = rawValues.at(-1);
      if (last && last.kind === kind && last.raw === raw) {
        last.rows += Number(r[2]);
        last.amounts.push(amount);
      } else {
        rawValues.push({
          kind,
          raw,
          rows: Number(r[2]),
          amount: r[4] === null ? null : String(r[4]),
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
async function statementPeriod(
  plan: Plan,
  target: string,
): Promise<{ stmt: NormalizeOutput['stmt']; stmtPeriods: number }> {
  const stmtRows = await rowsOf(
    plan,
    `SELECT stmt_year, stmt_period, stmt_cadence, count(*) AS n FROM ${target}
      WHERE stmt_year IS NOT NULL AND stmt_period IS NOT NULL AND stmt_cadence IS NOT NULL
      GROUP BY ALL ORDER BY n DESC, stmt_year DESC, stmt_period DESC`,
  );
  const periods = stmtRows
    .map((r) => periodOf(Number(r[0]), Number(r[1]), String(r[2]) as Cadence))
    .filter((p): p is Period => p !== null);
  const covering = periods.length === stmtRows.length ? coveringPeriod(periods) : null;
  const stmt = covering
    ? { year: covering.year, period: covering.period, cadence: covering.cadence }
    : stmtRows[0]
      ? {
          year: Number(stmtRows[0][0]),
          period: Number(stmtRows[0][1]),
          cadence: String(stmtRows[0][2]) as Cadence,
        }
      : null;
  return { stmt, stmtPeriods: stmtRows.length };
}

/** The figures of the rows written to `target` (a Parquet reader or the preview's table). */
export async function figures(
  plan: Plan,
  surveyed: Survey,
  found: Lookups,
  target: string,
): Promise<NormalizeOutput> {
  const droppedRows = [
    { reason: 'blank', rows: surveyed.blankRows },
    { reason: 'footer', rows: surveyed.footer },
    { reason: 'repeated_header', rows: surveyed.headerRows },
  ].filter((d) => d.rows > 0);
  // the issue counts need only the written rows: a raw identifier is written beside its normalized
  // form, and an amount is NULL exactly when its cell was empty or unreadable
  const totals = (
    await rowsOf(
      plan,
      `SELECT count(*), sum(royalty_earnings), sum(gross_royalty_earnings), sum(units),
      min(sales_period_start), max(coalesce(sales_period_end, sales_period_start)),
      count(*) FILTER (WHERE royalty_earnings IS NULL),
      count(*) FILTER (WHERE isrc_raw IS NOT NULL AND isrc IS NULL),
      count(*) FILTER (WHERE upc_raw IS NOT NULL AND upc IS NULL),
      count(*) FILTER (WHERE stmt_year IS NULL OR stmt_period IS NULL OR stmt_cadence IS NULL) FROM ${target}`,
    )
  )[0]!;
  const perCurrency = (
    await rowsOf(
      plan,
      `SELECT currency, count(*), sum(royalty_earnings), sum(gross_royalty_earnings), sum(units) FROM ${target} GROUP BY currency ORDER BY currency NULLS LAST`,
    )
  ).map((r) => ({
    currency: r[0] === null ? null : String(r[0]),
    rows: Number(r[1]),
    net: r[2] === null ? null : String(r[2]),
    gross: r[3] === null ? null : String(r[3]),
    units: r[4] === null ? null : String(r[4]),
  }));
  const { stmt, stmtPeriods } = await statementPeriod(plan, target);
  const rawValues = await rawValuesOf(plan, target);
  const payors = (
    await rowsOf(
      plan,
      `SELECT DISTINCT payor FROM ${target} WHERE payor IS NOT NULL ORDER BY 1 LIMIT 1000`,
    )
  ).map((r) => String(r[0]));
  const unknownCountries = (
    await rowsOf(
      plan,
      `SELECT DISTINCT country_raw FROM ${target} WHERE country_raw IS NOT NULL AND country IS NULL ORDER BY 1 LIMIT 50`,
    )
  ).map((r) => String(r[0]));
  // the currency reader's misses among the distinct raw values of the kept rows
  const unknownCurrencies = (found.distinct.get('currency') ?? [])
    .filter((v) => parseCurrency(v) === null)
    .sort()
    .slice(0, 50);
  // amounts summed over several columns are never NULL (an unreadable part counts as 0)
  const invalidAmounts = sumsColumns(plan.fields.royaltyEarnings)
    ? 0
    : Math.max(0, Number(totals[6]) - found.missingAmounts);
  // money of several currencies is never added up: the statement's totals are then per currency only
  const oneCurrency = perCurrency.length <= 1;
  return {
    decimalComma: plan.input.decimalComma,
    dataRows: surveyed.total,
    keptRows: Number(totals[0]),
    dropped: droppedRows,
    net: totals[1] === null || !oneCurrency ? null : String(totals[1]),
    gross: totals[2] === null || !oneCurrency ? null : String(totals[2]),
    units: totals[3] === null ? null : String(totals[3]),
    perCurrency,
    stmt,
    stmtPeriods,
    salesPeriodStart: totals[4] === null ? null : String(totals[4]),
    salesPeriodEnd: totals[5] === null ? null : String(totals[5]),
    rawValues,
    payors,
    issues: {
      invalidAmounts,
      missingAmounts: found.missingAmounts,
      invalidIsrc: Number(totals[7]),
      invalidUpc: Number(totals[8]),
      missingStmtPeriod: Number(totals[9]),
      extraCells: surveyed.extraCells,
      unknownCountries,
      unknownCurrencies,
    },
  };
}

/** A preview's first 1,000 normalized rows. */
export async function previewRows(plan: Plan): Promise<Record<string, unknown>[]> {
  const reader = await plan.connections[0].runAndReadAll(
    `SELECT * EXCLUDE (organization_id, statement_id, rightsholder_id) FROM normalized ORDER BY source_row LIMIT 1000`,
  );
  return reader.getRowObjectsJson() as Record<string, unknown>[];
}
