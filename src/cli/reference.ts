// `admin fx import` and `admin market import`: reference data files into the database.
import type { Pool } from '../db/pool.ts';
import { importFxRates, type ImportOrigin } from '../fx/import.ts';
import { ReferenceFileError } from '../lookups/csv.ts';
import { importMarketData, marketImportKinds, type MarketImportKind } from '../market/import.ts';
import { UsageError } from './admin.ts';

type Values = Record<string, string | boolean | undefined>;

function origin(values: Values): ImportOrigin {
  const file = typeof values.file === 'string' ? values.file.trim() : '';
  const url = typeof values.url === 'string' ? values.url.trim() : '';
  if ((file === '') === (url === '')) throw new UsageError('give exactly one of --file and --url');
  if (url !== '' && !/^https?:\/\//.test(url)) throw new UsageError('--url must be an http(s) URL');
  return file !== '' ? { file } : { url };
}

async function asUsage<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ReferenceFileError) throw new UsageError(error.message);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`no such file: ${(error as NodeJS.ErrnoException).path}`);
    throw error;
  }
}

/** fx import --file F | --url U [--format ecb|plain] */
export async function fxImport(pool: Pool, values: Values): Promise<Record<string, unknown>> {
  const format = values.format;
  if (format !== undefined && format !== 'ecb' && format !== 'plain') throw new UsageError('--format must be ecb or plain');
  const from = origin(values);
  return asUsage(async () => ({ ...(await importFxRates(pool, from, format)) }));
}

/** market import --kind history|symbols|treasury --file F | --url U [--symbol S] */
export async function marketImport(pool: Pool, values: Values): Promise<Record<string, unknown>> {
  const kind = values.kind;
  if (typeof kind !== 'string' || !(marketImportKinds as readonly string[]).includes(kind)) {
    throw new UsageError(`--kind must be one of ${marketImportKinds.join(', ')}`);
  }
  const from = origin(values);
  const symbol = typeof values.symbol === 'string' ? values.symbol : undefined;
  return asUsage(async () => ({ ...(await importMarketData(pool, kind as MarketImportKind, from, { symbol })) }));
}
