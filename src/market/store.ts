// Imported market data: symbols, daily prices and the Treasury par yield curve. Values are the
// published decimal text, stored as numeric.
import type { Queryable } from '../db/pool.ts';
import type { PricePoint } from './answers.ts';
import type { PriceRow, SymbolRow, YieldRow } from './parse.ts';

export const SYMBOLS_UPSERT_SQL = `INSERT INTO market_symbols (symbol, name, currency, exchange)
SELECT symbol, name, currency, exchange FROM jsonb_to_recordset($1::jsonb) AS r(symbol text, name text, currency text, exchange text)
ON CONFLICT (symbol) DO UPDATE SET name = coalesce(EXCLUDED.name, market_symbols.name),
  currency = coalesce(EXCLUDED.currency, market_symbols.currency), exchange = coalesce(EXCLUDED.exchange, market_symbols.exchange)`;

export const PRICES_UPSERT_SQL = `WITH r AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS r(symbol text, date date, open numeric, high numeric, low numeric, close numeric, volume bigint, currency text, name text)
), s AS (
  INSERT INTO market_symbols (symbol, name, currency)
  SELECT DISTINCT ON (symbol) symbol, name, currency FROM r ORDER BY symbol
  ON CONFLICT (symbol) DO UPDATE SET name = coalesce(EXCLUDED.name, market_symbols.name), currency = coalesce(EXCLUDED.currency, market_symbols.currency)
)
INSERT INTO market_prices (symbol, price_date, open, high, low, close, volume)
SELECT symbol, date, open, high, low, close, volume FROM r
ON CONFLICT (symbol, price_date) DO UPDATE SET open = EXCLUDED.open, high = EXCLUDED.high, low = EXCLUDED.low,
  close = EXCLUDED.close, volume = EXCLUDED.volume`;

export const TREASURY_UPSERT_SQL = `INSERT INTO treasury_yields (curve_date, tenor, tenor_months, yield_percent)
SELECT date, tenor, months, value FROM jsonb_to_recordset($1::jsonb) AS r(date date, tenor text, months numeric, value numeric)
ON CONFLICT (curve_date, tenor) DO UPDATE SET tenor_months = EXCLUDED.tenor_months, yield_percent = EXCLUDED.yield_percent`;

async function inChunks<T>(db: Queryable, sql: string, rows: T[], size = 2000): Promise<number> {
  let written = 0;
  for (let i = 0; i < rows.length; i += size)
    written += (await db.query(sql, [JSON.stringify(rows.slice(i, i + size))])).rowCount ?? 0;
  return written;
}

export const upsertSymbols = (db: Queryable, rows: SymbolRow[]) =>
  inChunks(db, SYMBOLS_UPSERT_SQL, rows);
export const upsertPrices = (db: Queryable, rows: PriceRow[]) =>
  inChunks(db, PRICES_UPSERT_SQL, rows);
export const upsertTreasuryYields = (db: Queryable, rows: YieldRow[]) =>
  inChunks(db, TREASURY_UPSERT_SQL, rows);

// ---------------------------------------------------------------------------------------------
// Reading (the built-in market provider, src/market/provider.ts)

export interface LatestClose {
  symbol: string;
  name: string | null;
  currency: string | null;
  exchange: string | null;
  /** the latest close */
  price: string;
  date: string;
  /** the close of the trading day before it */
  previousClose: string | null;
}

/** Each known symbol's latest close and the one before it; unknown symbols and symbols without prices are left out. */
export async function latestCloses(
  db: Queryable,
  symbols: readonly string[],
): Promise<LatestClose[]> {
  const { rows } = await db.query<LatestClose>(
    `SELECT s.symbol, s.name, s.currency, s.exchange, p.close::text AS price, to_char(p.price_date, 'YYYY-MM-DD') AS date,
            (SELECT q.close::text FROM market_prices q WHERE q.symbol = s.symbol AND q.price_date < p.price_date
             ORDER BY q.price_date DESC LIMIT 1) AS "previousClose"
     FROM market_symbols s
     JOIN LATERAL (SELECT close, price_date FROM market_prices WHERE symbol = s.symbol ORDER BY price_date DESC LIMIT 1) p ON true
     WHERE s.symbol = ANY($1)`,
    [symbols],
  );
  return rows;
}

export interface MarketSymbol {
  symbol: string;
  name: string | null;
  currency: string | null;
  exchange: string | null;
}

export async function marketSymbol(
  db: Queryable,
  symbol: string,
): Promise<MarketSymbol | undefined> {
  const { rows } = await db.query<MarketSymbol>(
    'SELECT symbol, name, currency, exchange FROM market_symbols WHERE symbol = $1',
    [symbol],
  );
  return rows[0];
}

/** A symbol's daily prices between the dates (null: unbounded), oldest first: the latest 5000 of them. */
export async function latestPricePoints(
  db: Queryable,
  symbol: string,
  from: string | null,
  to: string | null,
): Promise<PricePoint[]> {
  const { rows } = await db.query<PricePoint>(
    `SELECT * FROM (
       SELECT to_char(price_date, 'YYYY-MM-DD') AS date, open::text AS open, high::text AS high, low::text AS low,
              close::text AS close, volume::text AS volume
       FROM market_prices WHERE symbol = $1 AND ($2::date IS NULL OR price_date >= $2::date) AND ($3::date IS NULL OR price_date <= $3::date)
       ORDER BY price_date DESC LIMIT 5000) latest
     ORDER BY date`,
    [symbol, from, to],
  );
  return rows;
}

export interface TreasuryYieldRow {
  date: string;
  tenor: string;
  /** percent, as published */
  value: string;
}

/** The latest curve on or before `upTo` (null: the latest of all), shortest tenor first. */
export async function latestTreasuryCurve(
  db: Queryable,
  upTo: string | null,
): Promise<TreasuryYieldRow[]> {
  const { rows } = await db.query<TreasuryYieldRow>(
    `SELECT to_char(curve_date, 'YYYY-MM-DD') AS date, tenor, yield_percent::text AS value FROM treasury_yields
     WHERE curve_date = (SELECT max(curve_date) FROM treasury_yields WHERE $1::date IS NULL OR curve_date <= $1::date)
     ORDER BY tenor_months`,
    [upTo],
  );
  return rows;
}

/**
 * Whole curves between the dates (null: unbounded), at most the latest `maxCurves` days of the
 * range (a row limit cut the range's newest curves off, and left the last one it kept with some
 * tenors missing); by day, then shortest tenor first.
 */
export async function treasuryCurvesIn(
  db: Queryable,
  from: string | null,
  to: string | null,
  maxCurves: number,
): Promise<TreasuryYieldRow[]> {
  const { rows } = await db.query<TreasuryYieldRow>(
    `WITH days AS (
       SELECT DISTINCT curve_date FROM treasury_yields
       WHERE ($1::date IS NULL OR curve_date >= $1::date) AND ($2::date IS NULL OR curve_date <= $2::date)
       ORDER BY curve_date DESC LIMIT $3)
     SELECT to_char(curve_date, 'YYYY-MM-DD') AS date, tenor, yield_percent::text AS value
     FROM treasury_yields JOIN days USING (curve_date)
     ORDER BY curve_date, tenor_months`,
    [from, to, maxCurves],
  );
  return rows;
}
