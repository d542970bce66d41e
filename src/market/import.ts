// `market import`: price history, symbols and Treasury yield curves from files (or URLs) into the
// built-in provider's tables, in one transaction, recorded in reference_imports.
import type { Pool } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';
import {
  csvText,
  describeOrigin,
  readOrigin,
  recordImport,
  type ImportOrigin,
} from '../fx/import.ts';
import { ReferenceFileError } from '../lookups/csv.ts';
import { parseHistoryCsv, parseSymbolsCsv, parseTreasuryCsv } from './parse.ts';
import { upsertPrices, upsertSymbols, upsertTreasuryYields } from './store.ts';

export const marketImportKinds = ['history', 'symbols', 'treasury'] as const;
export type MarketImportKind = (typeof marketImportKinds)[number];

export interface MarketImportSummary {
  kind: MarketImportKind;
  rows: number;
  symbols?: string[];
  from: string | null;
  to: string | null;
}

const LOG_KIND: Record<MarketImportKind, string> = {
  history: 'market_history',
  symbols: 'market_symbols',
  treasury: 'treasury_yields',
};

export async function importMarketData(
  pool: Pool,
  kind: MarketImportKind,
  origin: ImportOrigin,
  opts: { symbol?: string | undefined } = {},
): Promise<MarketImportSummary> {
  try {
    const text = await csvText(await readOrigin(origin));
    let summary: MarketImportSummary;
    if (kind === 'history') {
      const rows = parseHistoryCsv(text, opts.symbol);
      if (rows.length === 0) throw new ReferenceFileError('The file holds no prices');
      const written = await withTransaction(pool, (db) => upsertPrices(db, rows));
      const dates = rows.map((r) => r.date).sort();
      summary = {
        kind,
        rows: written,
        symbols: [...new Set(rows.map((r) => r.symbol))].sort(),
        from: dates[0]!,
        to: dates.at(-1)!,
      };
    } else if (kind === 'symbols') {
      const rows = parseSymbolsCsv(text);
      if (rows.length === 0) throw new ReferenceFileError('The file holds no symbols');
      const written = await withTransaction(pool, (db) => upsertSymbols(db, rows));
      summary = {
        kind,
        rows: written,
        symbols: rows.map((r) => r.symbol).sort(),
        from: null,
        to: null,
      };
    } else {
      const rows = parseTreasuryCsv(text);
      if (rows.length === 0) throw new ReferenceFileError('The file holds no yields');
      const written = await withTransaction(pool, (db) => upsertTreasuryYields(db, rows));
      const dates = rows.map((r) => r.date).sort();
      summary = { kind, rows: written, from: dates[0]!, to: dates.at(-1)! };
    }
    await recordImport(pool, LOG_KIND[kind], describeOrigin(origin), { summary });
    return summary;
  } catch (error) {
    await recordImport(pool, LOG_KIND[kind], describeOrigin(origin), {
      error: (error as Error).message,
    }).catch(() => {});
    throw error;
  }
}
