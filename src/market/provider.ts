// Market data behind one small interface: the built-in provider answers from imported data
// (`npm run admin -- market import`), the Yahoo provider from the live chart API and the
// Treasury's published CSV. Unknown symbols are MARKET_SYMBOL_NOT_FOUND with the symbols listed.
import type { MarketSettings } from '../config.ts';
import type { Queryable } from '../db/pool.ts';
import { curvesFrom, MAX_CURVES, quoteFrom, unknownSymbols, type MarketProvider, type PricePoint } from './answers.ts';
import { yahooProvider } from './yahoo.ts';

export function builtinMarketProvider(db: Queryable): MarketProvider {
  return {
    name: 'builtin',
    async quotes(symbols) {
      const { rows } = await db.query<{
        symbol: string;
        name: string | null;
        currency: string | null;
        exchange: string | null;
        price: string;
        date: string;
        previous_close: string | null;
      }>(
        `SELECT s.symbol, s.name, s.currency, s.exchange, p.close::text AS price, to_char(p.price_date, 'YYYY-MM-DD') AS date,
                (SELECT q.close::text FROM market_prices q WHERE q.symbol = s.symbol AND q.price_date < p.price_date
                 ORDER BY q.price_date DESC LIMIT 1) AS previous_close
         FROM market_symbols s
         JOIN LATERAL (SELECT close, price_date FROM market_prices WHERE symbol = s.symbol ORDER BY price_date DESC LIMIT 1) p ON true
         WHERE s.symbol = ANY($1)`,
        [symbols],
      );
      const bySymbol = new Map(rows.map((r) => [r.symbol, r]));
      const missing = symbols.filter((s) => !bySymbol.has(s));
      if (missing.length > 0) throw unknownSymbols(missing);
      return symbols.map((s) => {
        const r = bySymbol.get(s)!;
        return quoteFrom({ symbol: r.symbol, name: r.name, currency: r.currency, exchange: r.exchange, price: r.price, date: r.date, previousClose: r.previous_close });
      });
    },
    async history(symbol, range) {
      const { rows: meta } = await db.query<{ symbol: string; name: string | null; currency: string | null; exchange: string | null }>(
        'SELECT symbol, name, currency, exchange FROM market_symbols WHERE symbol = $1',
        [symbol],
      );
      if (!meta[0]) throw unknownSymbols([symbol]);
      const { rows } = await db.query<PricePoint>(
        `SELECT * FROM (
           SELECT to_char(price_date, 'YYYY-MM-DD') AS date, open::text AS open, high::text AS high, low::text AS low,
                  close::text AS close, volume::text AS volume
           FROM market_prices WHERE symbol = $1 AND ($2::date IS NULL OR price_date >= $2::date) AND ($3::date IS NULL OR price_date <= $3::date)
           ORDER BY price_date DESC LIMIT 5000) latest
         ORDER BY date`,
        [symbol, range.from ?? null, range.to ?? null],
      );
      return { ...meta[0], points: rows };
    },
    async treasuryYields(range) {
      const { rows } = range.latestOnly
        ? await db.query<{ date: string; tenor: string; value: string }>(
            `SELECT to_char(curve_date, 'YYYY-MM-DD') AS date, tenor, yield_percent::text AS value FROM treasury_yields
             WHERE curve_date = (SELECT max(curve_date) FROM treasury_yields WHERE $1::date IS NULL OR curve_date <= $1::date)
             ORDER BY tenor_months`,
            [range.to ?? null],
          )
        : // whole curves, at most the latest MAX_CURVES days of the range (a row limit cut the range's
          // newest curves off, and left the last one it kept with some tenors missing)
          await db.query<{ date: string; tenor: string; value: string }>(
            `WITH days AS (
               SELECT DISTINCT curve_date FROM treasury_yields
               WHERE ($1::date IS NULL OR curve_date >= $1::date) AND ($2::date IS NULL OR curve_date <= $2::date)
               ORDER BY curve_date DESC LIMIT $3)
             SELECT to_char(curve_date, 'YYYY-MM-DD') AS date, tenor, yield_percent::text AS value
             FROM treasury_yields JOIN days USING (curve_date)
             ORDER BY curve_date, tenor_months`,
            [range.from ?? null, range.to ?? null, MAX_CURVES],
          );
      return curvesFrom(rows);
    },
  };
}

export function createMarketProvider(settings: MarketSettings, db: Queryable): MarketProvider {
  return settings.provider === 'yahoo' ? yahooProvider(settings) : builtinMarketProvider(db);
}
