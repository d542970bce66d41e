// Imported market data: symbols, daily prices and the Treasury par yield curve. Values are the
// published decimal text, stored as numeric.
import type { Queryable } from '../db/pool.ts';
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
  for (let i = 0; i < rows.length; i += size) written += (await db.query(sql, [JSON.stringify(rows.slice(i, i + size))])).rowCount ?? 0;
  return written;
}

export const upsertSymbols = (db: Queryable, rows: SymbolRow[]) => inChunks(db, SYMBOLS_UPSERT_SQL, rows);
export const upsertPrices = (db: Queryable, rows: PriceRow[]) => inChunks(db, PRICES_UPSERT_SQL, rows);
export const upsertTreasuryYields = (db: Queryable, rows: YieldRow[]) => inChunks(db, TREASURY_UPSERT_SQL, rows);
