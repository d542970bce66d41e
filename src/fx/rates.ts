// Daily reference rates against the US dollar. Stored both ways as exact quotients of the
// published figures (numeric division in PostgreSQL, never JavaScript floats). A missing rate is
// null, never 1: a statement whose currency has no rate must say so, not silently count as USD.
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';

/** Upserts ECB rows `{ d, c, v }` (v = units of c per euro, USD among them) as US-dollar rates. */
export const ECB_UPSERT_SQL = `WITH r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(d date, c text, v numeric)),
usd AS (SELECT d, v FROM r WHERE c = 'USD'),
converted AS (
  SELECT r.c, r.d, trim_scale(r.v / usd.v) AS per_usd, trim_scale(usd.v / r.v) AS usd_per_unit FROM r JOIN usd USING (d) WHERE r.c <> 'USD'
  UNION ALL
  SELECT 'EUR', d, trim_scale(1 / v), trim_scale(v) FROM usd
)
INSERT INTO fx_rates (currency, rate_date, per_usd, usd_per_unit, source)
SELECT c, d, per_usd, usd_per_unit, 'ecb' FROM converted
ON CONFLICT (currency, rate_date) DO UPDATE SET per_usd = EXCLUDED.per_usd, usd_per_unit = EXCLUDED.usd_per_unit,
  source = EXCLUDED.source, imported_at = now()`;

/** Upserts plain rows `{ d, c, v }` (v = units of c per US dollar). */
export const PLAIN_UPSERT_SQL = `INSERT INTO fx_rates (currency, rate_date, per_usd, usd_per_unit, source)
SELECT c, d, trim_scale(v), trim_scale(1 / v), 'plain' FROM jsonb_to_recordset($1::jsonb) AS r(d date, c text, v numeric)
ON CONFLICT (currency, rate_date) DO UPDATE SET per_usd = EXCLUDED.per_usd, usd_per_unit = EXCLUDED.usd_per_unit,
  source = EXCLUDED.source, imported_at = now()`;

/**
 * For ingestion: US dollars for one unit of `currency` (so usd = amount × rate) on `date`
 * (YYYY-MM-DD), or on the nearest earlier day with a published rate; `date` is the day used.
 * USD itself is '1'. Null when no rate was published on or before that day: never 1.
 */
export async function usdRate(
  db: Queryable,
  currency: string,
  date: string,
): Promise<{ rate: string; date: string } | null> {
  const code = currencyCode(currency);
  if (code === 'USD') return { rate: '1', date };
  const { rows } = await db.query<{ rate: string; date: string }>(latestRateSql('$1', '$2'), [
    code,
    date,
  ]);
  return rows[0] ?? null;
}

/** The code a statement's currency is looked up by in fx_rates (USD needs none: '1'). */
export function currencyCode(currency: string): string {
  return currency.trim().toUpperCase();
}

/** The published rate of `code` (a currencyCode) on `date` or the nearest earlier day: `rate`, `date` as text; no row without one. */
export function latestRateSql(code: string, date: string): string {
  return `SELECT usd_per_unit::text AS rate, to_char(rate_date, 'YYYY-MM-DD') AS date FROM fx_rates
     WHERE currency = ${code} AND rate_date <= ${date}::date ORDER BY rate_date DESC LIMIT 1`;
}

export interface RatesOn {
  /** the latest day with published rates on or before the one asked for */
  date: string;
  base: 'USD';
  /** units of each currency for one US dollar, as exact decimal strings; USD is '1' */
  rates: Record<string, string>;
  /** currencies whose latest rate is older than `date`, with the day it is from */
  earlierDates: Record<string, string>;
}

/** The rates in force on `date` (latest when absent): each currency's latest rate on or before the day used. */
export async function ratesOn(db: Queryable, date: string | undefined): Promise<RatesOn> {
  const { rows: latest } = await db.query<{ date: string | null }>(
    `SELECT to_char(max(rate_date), 'YYYY-MM-DD') AS date FROM fx_rates WHERE ($1::date IS NULL OR rate_date <= $1::date)`,
    [date ?? null],
  );
  const used = latest[0]?.date;
  if (!used)
    throw new AppError(
      'FX_RATES_NOT_FOUND',
      date
        ? `No exchange rates were published on or before ${date}`
        : 'No exchange rates have been imported',
    );
  const { rows } = await db.query<{ currency: string; per_usd: string; date: string }>(
    `SELECT DISTINCT ON (currency) currency, per_usd::text AS per_usd, to_char(rate_date, 'YYYY-MM-DD') AS date
     FROM fx_rates WHERE rate_date <= $1::date ORDER BY currency, rate_date DESC`,
    [used],
  );
  const rates: Record<string, string> = { USD: '1' };
  const earlierDates: Record<string, string> = {};
  for (const r of rows) {
    rates[r.currency] = r.per_usd;
    if (r.date !== used) earlierDates[r.currency] = r.date;
  }
  return { date: used, base: 'USD', rates, earlierDates };
}
