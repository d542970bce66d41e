// Statement periods: a year, a cadence (M monthly, Q quarterly, H half-yearly, Y yearly) and the
// period's number within the year; the months a period spans, the month index the analytics facts
// count in, and the sortable period ids. The one home of period arithmetic, in TypeScript and as
// SQL (the SQL reads the same in PostgreSQL and DuckDB unless a function says otherwise).

export type Cadence = 'M' | 'Q' | 'H' | 'Y';

/** The cadences, shortest first. */
export const CADENCES: readonly Cadence[] = ['M', 'Q', 'H', 'Y'];

/** How many calendar months a period of each cadence spans. */
export const CADENCE_MONTHS: Readonly<Record<Cadence, number>> = { M: 1, Q: 3, H: 6, Y: 12 };

export interface Period {
  year: number;
  /** 1-12 monthly, 1-4 quarterly, 1-2 half-yearly, 1 yearly */
  period: number;
  cadence: Cadence;
  /**
   * first and last day, ISO dates; for a range that is no calendar period (`2024-03-03 - 2024-03-30`)
   * the range's own first and last day
   */
  start: string;
  end: string;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The last day (28-31) of a month (1-12) of a year. */
export function lastDay(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The calendar period, or null for a year outside 1900-2200 or a period number the cadence has not. */
export function periodOf(year: number, period: number, cadence: Cadence): Period | null {
  if (!Number.isInteger(year) || year < 1900 || year > 2200) return null;
  const span = CADENCE_MONTHS[cadence];
  if (!Number.isInteger(period) || period < 1 || period > 12 / span) return null;
  const firstMonth = (period - 1) * span + 1;
  const lastMonth = firstMonth + span - 1;
  return {
    year,
    period,
    cadence,
    start: `${year}-${pad(firstMonth)}-01`,
    end: `${year}-${pad(lastMonth)}-${pad(lastDay(year, lastMonth))}`,
  };
}

/** The period of the cadence an ISO date falls in: its month, quarter, half or year. */
export function periodFromDate(isoDate: string, cadence: Cadence): Period | null {
  const year = +isoDate.slice(0, 4);
  const month = +isoDate.slice(5, 7);
  return periodOf(year, Math.floor((month - 1) / CADENCE_MONTHS[cadence]) + 1, cadence);
}

/** Months counted from year 0 (year × 12 + month − 1) of an ISO date or a YYYY-MM month. */
export function monthIndex(isoDateOrMonth: string): number {
  return Number(isoDateOrMonth.slice(0, 4)) * 12 + Number(isoDateOrMonth.slice(5, 7)) - 1;
}

/** The sortable id of a period: year, cadence and two-digit number (2024M03, 2024Q02, 2024Y01). */
export function periodId(year: number, period: number, cadence: Cadence | string): string {
  return `${year}${cadence}${pad(period)}`;
}

/**
 * A period as the period readers (src/ingest/values.ts parsePeriod) read it back: 2024M05, 2023Q3,
 * 2023H2, 2023. Not the period id: they read no `2024Q01`.
 */
export function periodText(p: Pick<Period, 'year' | 'period' | 'cadence'>): string {
  if (p.cadence === 'M') return `${p.year}M${pad(p.period)}`;
  return p.cadence === 'Y' ? String(p.year) : `${p.year}${p.cadence}${p.period}`;
}

/** The columns (or expressions) of a statement period in SQL. */
export interface PeriodColumns {
  year: string;
  period: string;
  cadence: string;
}

/** SQL: the months a period of the cadence spans (1, 3, 6, 12); NULL for another cadence. */
export function cadenceMonthsSql(cadence: string): string {
  return `CASE ${cadence} ${CADENCES.map((c) => `WHEN '${c}' THEN ${CADENCE_MONTHS[c]}`).join(' ')} END`;
}

/**
 * SQL: the month index of the period's last month (year × 12 + last month − 1): the facts'
 * month_index. NULL when a part is unknown or the period number is not one of the cadence's.
 */
export function monthIndexSql(c: PeriodColumns): string {
  const lastMonth = CADENCES.map(
    (k) =>
      `WHEN '${k}' THEN CASE WHEN ${c.period} BETWEEN 1 AND ${12 / CADENCE_MONTHS[k]} THEN ${c.period} * ${CADENCE_MONTHS[k]} END`,
  ).join('\n  ');
  return `CASE WHEN ${c.year} IS NULL OR ${c.period} IS NULL THEN NULL ELSE ${c.year} * 12 + CASE ${c.cadence}\n  ${lastMonth} END - 1 END`;
}

/** SQL: the month index of the period's first month (year × 12 + first month − 1). */
export function firstMonthIndexSql(c: PeriodColumns): string {
  return `${c.year} * 12 + (${c.period} - 1) * ${cadenceMonthsSql(c.cadence)}`;
}

/** SQL: the period's id (periodId), NULL when a part is unknown. */
export function periodIdSql(c: PeriodColumns): string {
  return (
    `CASE WHEN ${c.year} IS NOT NULL AND ${c.period} IS NOT NULL AND ${c.cadence} IS NOT NULL ` +
    `THEN CAST(${c.year} AS VARCHAR) || ${c.cadence} || lpad(CAST(${c.period} AS VARCHAR), 2, '0') END`
  );
}

/** DuckDB SQL (`//` divides integers): the first day of the month of a month index (a DATE), NULL for NULL. */
export function monthStartSql(index: string): string {
  return `make_date(CAST(${index} // 12 AS BIGINT), CAST(${index} % 12 + 1 AS BIGINT), 1)`;
}

/** DuckDB SQL (`//` divides integers): the monthly period id of a month index (2024M09), NULL for NULL. */
export function monthIdSql(index: string): string {
  return `CASE WHEN ${index} IS NOT NULL THEN CAST(${index} // 12 AS VARCHAR) || 'M' || lpad(CAST(${index} % 12 + 1 AS VARCHAR), 2, '0') END`;
}
