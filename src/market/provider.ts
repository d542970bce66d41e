// Market data behind one small interface: the built-in provider answers from imported data
// (`npm run admin -- market import`), the Yahoo provider from the live chart API and the
// Treasury's published CSV. Unknown symbols are MARKET_SYMBOL_NOT_FOUND with the symbols listed.
import type { MarketSettings } from '../config.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { decimalPercent, decimalSub } from './decimal.ts';
import { latestCloses, latestPricePoints, latestTreasuryCurve, marketSymbol, treasuryCurvesIn, type PricePoint } from './store.ts';
import { yahooProvider } from './yahoo.ts';

export type { PricePoint } from './store.ts';

export interface Quote {
  symbol: string;
  name: string | null;
  currency: string | null;
  exchange: string | null;
  /** last close (built-in) or regular-market price (live) */
  price: string;
  date: string;
  previousClose: string | null;
  change: string | null;
  /** percent, rounded to 4 decimals */
  changePercent: string | null;
}

export interface History {
  symbol: string;
  name: string | null;
  currency: string | null;
  exchange: string | null;
  points: PricePoint[];
}

export interface YieldCurve {
  date: string;
  /** percent by tenor ("1M" … "30Y"), shortest first */
  yields: Record<string, string>;
}

export interface DateRange {
  from?: string | undefined;
  to?: string | undefined;
}

export interface MarketProvider {
  readonly name: 'builtin' | 'yahoo';
  quotes(symbols: string[]): Promise<Quote[]>;
  history(symbol: string, range: DateRange): Promise<History>;
  /** with a range: every curve in it; without: the latest curve on or before `to` (or the latest) */
  treasuryYields(range: DateRange & { latestOnly: boolean }): Promise<YieldCurve[]>;
}

/** The most curves one range answers: the latest ones (about 20 years of business days). */
export const MAX_CURVES = 5000;

export function quoteFrom(q: Omit<Quote, 'change' | 'changePercent'>): Quote {
  const change = q.previousClose === null ? null : decimalSub(q.price, q.previousClose);
  return { ...q, change, changePercent: change === null ? null : decimalPercent(change, q.previousClose!) };
}

export function unknownSymbols(symbols: string[]): AppError {
  return new AppError('MARKET_SYMBOL_NOT_FOUND', `Unknown symbol${symbols.length > 1 ? 's' : ''}: ${symbols.join(', ')}`, { details: { symbols } });
}

export function curvesFrom(rows: { date: string; tenor: string; value: string }[]): YieldCurve[] {
  const curves = new Map<string, Record<string, string>>();
  for (const r of rows) {
    const curve = curves.get(r.date) ?? {};
    curve[r.tenor] = r.value;
    curves.set(r.date, curve);
  }
  return [...curves].map(([date, yields]) => ({ date, yields }));
}

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
        return quoteFrom({ symbol: r.symbol, name: r.name, currency: r.currency, exchange: r.exchange, price: r.price, date: r.date, previousClose: r.previousClose });
      });
    },
    async history(symbol, range) {
      const meta = await marketSymbol(db, symbol);
      if (!meta) throw unknownSymbols([symbol]);
      return { ...meta, points: await latestPricePoints(db, symbol, range.from ?? null, range.to ?? null) };
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
