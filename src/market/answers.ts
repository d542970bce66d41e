// What every market provider answers (src/market/provider.ts, yahoo.ts): the shapes, the
// interface, and the helpers both providers build their answers with.
import { AppError } from '../errors.ts';
import { decimalPercent, subtractDecimals } from '../decimal.ts';

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

export interface PricePoint {
  date: string;
  open: string | null;
  high: string | null;
  low: string | null;
  close: string;
  volume: string | null;
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
  const change = q.previousClose === null ? null : subtractDecimals(q.price, q.previousClose);
  return {
    ...q,
    change,
    changePercent: change === null ? null : decimalPercent(change, q.previousClose!),
  };
}

export function unknownSymbols(symbols: string[]): AppError {
  return new AppError(
    'MARKET_SYMBOL_NOT_FOUND',
    `Unknown symbol${symbols.length > 1 ? 's' : ''}: ${symbols.join(', ')}`,
    { details: { symbols } },
  );
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
