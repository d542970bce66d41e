// Market data behind one small interface: the built-in provider answers from imported data
// (`npm run admin -- market import`), the Yahoo provider from the live chart API and the
// Treasury's published CSV. Unknown symbols are MARKET_SYMBOL_NOT_FOUND with the symbols listed.
import type { MarketSettings } from '../config.ts';
import type { Queryable } from '../db/pool.ts';
import {
  curvesFrom,
  MAX_CURVES,
  quoteFrom,
  unknownSymbols,
  type MarketProvider,
} from './answers.ts';
import {
  latestCloses,
  latestPricePoints,
  latestTreasuryCurve,
  marketSymbol,
  treasuryCurvesIn,
} from './store.ts';
import { yahooProvider } from './yahoo.ts';

export function builtinMarketProvider(db: Queryable): MarketProvider {
  return {
    name: 'builtin',
    async quotes(symbols) {
      const rows = await latestCloses(db, symbols);
      const bySymbol = new Map(rows.map((r) => [r.symbol, r]));
      const missing = symbols.filter((s) => !bySymbol.has(s));
      if (missing.length > 0) throw unknownSymbols(missing);
      return symbols.map((s) => {
        const r = bySymbol.get(s)!;
        return quoteFrom({
          symbol: r.symbol,
          name: r.name,
          currency: r.currency,
          exchange: r.exchange,
          price: r.price,
          date: r.date,
          previousClose: r.previousClose,
        });
      });
    },
    async history(symbol, range) {
      const meta = await marketSymbol(db, symbol);
      if (!meta) throw unknownSymbols([symbol]);
      return {
        ...meta,
        points: await latestPricePoints(db, symbol, range.from ?? null, range.to ?? null),
      };
    },
    async treasuryYields(range) {
      const rows = range.latestOnly
        ? await latestTreasuryCurve(db, range.to ?? null)
        : await treasuryCurvesIn(db, range.from ?? null, range.to ?? null, MAX_CURVES);
      return curvesFrom(rows);
    },
  };
}

export function createMarketProvider(settings: MarketSettings, db: Queryable): MarketProvider {
  return settings.provider === 'yahoo' ? yahooProvider(settings) : builtinMarketProvider(db);
}
