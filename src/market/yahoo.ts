// The live provider: quotes and daily history from the Yahoo Finance chart API
// (GET {base}/v8/finance/chart/{symbol}), yields from the US Treasury's daily par yield curve CSV
// (the same format `market import --kind treasury` reads).
import type { MarketSettings } from '../config.ts';
import { AppError } from '../errors.ts';
import { plainNumber } from '../decimal.ts';
import { parseTreasuryCsv, type YieldRow } from './parse.ts';
import {
  curvesFrom,
  quoteFrom,
  unknownSymbols,
  type DateRange,
  type MarketProvider,
  type PricePoint,
  type YieldCurve,
} from './answers.ts';

interface ChartResult {
  meta: {
    symbol?: string;
    currency?: string | null;
    exchangeName?: string;
    fullExchangeName?: string;
    longName?: string;
    shortName?: string;
    regularMarketPrice?: number;
    regularMarketTime?: number;
    previousClose?: number;
    chartPreviousClose?: number;
    gmtoffset?: number;
  };
  timestamp?: number[];
  indicators?: {
    quote?: {
      open?: (number | null)[];
      high?: (number | null)[];
      low?: (number | null)[];
      close?: (number | null)[];
      volume?: (number | null)[];
    }[];
  };
}

async function get(
  settings: MarketSettings,
  url: string,
): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(url, {
      headers: { accept: 'application/json, text/csv' },
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    return { status: res.status, text: await res.text() };
  } catch (error) {
    throw new AppError('MARKET_PROVIDER_FAILED', 'The market data provider could not be reached', {
      cause: error,
    });
  }
}

async function chart(
  settings: MarketSettings,
  symbol: string,
  query: string,
): Promise<ChartResult | null> {
  const { status, text } = await get(
    settings,
    `${settings.baseUrl}/v8/finance/chart/${encodeURIComponent(symbol)}?${query}`,
  );
  let body: { chart?: { result?: ChartResult[] | null; error?: { code?: string } | null } };
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new AppError(
      'MARKET_PROVIDER_FAILED',
      `The chart API answered HTTP ${status} with something that is not JSON`,
      { cause: error },
    );
  }
  const result = body.chart?.result?.[0];
  if (status === 404 || body.chart?.error?.code === 'Not Found' || (status === 200 && !result))
    return null;
  if (status !== 200 || !result)
    throw new AppError('MARKET_PROVIDER_FAILED', `The chart API answered HTTP ${status}`);
  return result;
}

const day = (seconds: number, offset = 0) =>
  new Date((seconds + offset) * 1000).toISOString().slice(0, 10);
const text = (v: number | null | undefined) =>
  typeof v === 'number' && Number.isFinite(v) ? plainNumber(v) : null;

function unixSeconds(date: string, endOfDay = false): number {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / 1000) + (endOfDay ? 86_400 : 0);
}

/** The instrument's names as the chart's meta gives them, longest name first. */
function instrumentOf(m: ChartResult['meta']) {
  return {
    name: m.longName ?? m.shortName ?? null,
    currency: m.currency ?? null,
    exchange: m.fullExchangeName ?? m.exchangeName ?? null,
  };
}

/** The daily points of a chart; a day without a close is left out. */
function pricePoints(r: ChartResult): PricePoint[] {
  const q = r.indicators?.quote?.[0] ?? {};
  const points: PricePoint[] = [];
  for (const [i, ts] of (r.timestamp ?? []).entries()) {
    const close = text(q.close?.[i]);
    if (close === null) continue;
    const volume = q.volume?.[i];
    points.push({
      date: day(ts, r.meta.gmtoffset),
      open: text(q.open?.[i]),
      high: text(q.high?.[i]),
      low: text(q.low?.[i]),
      close,
      volume: typeof volume === 'number' ? String(Math.round(volume)) : null,
    });
  }
  return points;
}

/** One year's par yield curve rows from the Treasury's CSV. */
async function treasuryYear(settings: MarketSettings, year: number): Promise<YieldRow[]> {
  const { status, text: csv } = await get(
    settings,
    `${settings.treasuryBaseUrl}/resource-center/data-chart-center/interest-rates/daily-treasury-rates.csv/${year}/all?type=daily_treasury_yield_curve&field_tdr_date_value=${year}&page&_format=csv`,
  );
  if (status !== 200)
    throw new AppError(
      'MARKET_PROVIDER_FAILED',
      `The Treasury answered HTTP ${status} for ${year}`,
    );
  try {
    return parseTreasuryCsv(csv);
  } catch (error) {
    throw new AppError(
      'MARKET_PROVIDER_FAILED',
      `The Treasury's ${year} file is not a par yield curve CSV`,
      { cause: error },
    );
  }
}

/** Reads the Treasury's yearly files newest first (at most ten years) and keeps the rows in range. */
async function treasuryYields(
  settings: MarketSettings,
  range: DateRange & { latestOnly: boolean },
): Promise<YieldCurve[]> {
  const to = range.to ?? new Date().toISOString().slice(0, 10);
  const lastYear = Number(to.slice(0, 4));
  const firstYear = range.latestOnly
    ? lastYear - 1
    : Math.max(Number((range.from ?? to).slice(0, 4)), lastYear - 9);
  const rows = [];
  for (let year = lastYear; year >= firstYear; year--) {
    const inRange = (await treasuryYear(settings, year)).filter(
      (r) => r.date <= to && (range.latestOnly || range.from === undefined || r.date >= range.from),
    );
    rows.push(...inRange);
    // the latest curve is in the newest year that has any, unless it is early January
    if (range.latestOnly && inRange.length > 0) break;
  }
  rows.sort((a, b) => a.date.localeCompare(b.date) || Number(a.months) - Number(b.months));
  if (range.latestOnly) {
    const latest = rows.at(-1)?.date;
    return curvesFrom(rows.filter((r) => r.date === latest));
  }
  return curvesFrom(rows);
}

export function yahooProvider(settings: MarketSettings): MarketProvider {
  return {
    name: 'yahoo',
    async quotes(symbols) {
      const results = await Promise.all(
        symbols.map((s) => chart(settings, s, 'range=1d&interval=1d')),
      );
      const missing = symbols.filter(
        (_, i) => !results[i] || typeof results[i]!.meta.regularMarketPrice !== 'number',
      );
      if (missing.length > 0) throw unknownSymbols(missing);
      return results.map((r, i) => {
        const m = r!.meta;
        return quoteFrom({
          symbol: symbols[i]!,
          ...instrumentOf(m),
          price: text(m.regularMarketPrice)!,
          date: day(m.regularMarketTime ?? 0, m.gmtoffset),
          previousClose: text(m.previousClose ?? m.chartPreviousClose),
        });
      });
    },
    async history(symbol, range) {
      const to = range.to ?? new Date().toISOString().slice(0, 10);
      const from =
        range.from ??
        new Date(Date.parse(`${to}T00:00:00Z`) - 365 * 86_400_000).toISOString().slice(0, 10);
      const r = await chart(
        settings,
        symbol,
        `period1=${unixSeconds(from)}&period2=${unixSeconds(to, true)}&interval=1d`,
      );
      if (!r) throw unknownSymbols([symbol]);
      return { symbol, ...instrumentOf(r.meta), points: pricePoints(r) };
    },
    treasuryYields: (range) => treasuryYields(settings, range),
  };
}
