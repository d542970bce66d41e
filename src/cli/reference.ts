// `admin fx import` and `admin market import`: reference data files into the database.
import type { Pool } from '../db/pool.ts';
import { importFxRates, type ImportOrigin } from '../fx/import.ts';
import { ReferenceFileError } from '../lookups/csv.ts';
import { importMarketData, marketImportKinds, type MarketImportKind } from '../market/import.ts';
import { CommandError, UsageError } from './errors.ts';

type Values = Record<string, string | boolean | undefined>;

function origin(values: Values): ImportOrigin {
  const file = typeof values.file === 'string' ? values.file.trim() : '';
  const url = typeof values.url === 'string' ? values.url.trim() : '';
  if ((file === '') === (url === '')) throw new UsageError('give exactly one of --file and --url');
  if (url !== '' && !/^https?:\/\//.test(url)) throw new UsageError('--url must be an http(s) URL');
  return file !== '' ? { file } : { url };
}

/** what reading the --file fails with (a database connection's errors have codes of their own) */
const FILE_ERRORS = new Set([
  'ENOENT',
  'EISDIR',
  'ENOTDIR',
  'EACCES',
  'EPERM',
  'ELOOP',
  'ENAMETOOLONG',
]);

/** How readOrigin (src/fx/import.ts) fails to download: fetch's network error or timeout, or its HTTP status error. */
function downloadFailed(error: Error): boolean {
  return (
    (error instanceof TypeError && error.message === 'fetch failed') ||
    error.name === 'TimeoutError' ||
    /^GET \S+ answered HTTP \d+$/.test(error.message)
  );
}

/** The import's failures an operator can act on, as messages: a file that cannot be read or used, a download that failed. */
async function asUsage<T>(from: ImportOrigin, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ReferenceFileError) throw new UsageError(error.message);
    const e = error as NodeJS.ErrnoException;
    if ('file' in from && FILE_ERRORS.has(e.code ?? '')) {
      throw new UsageError(
        e.code === 'ENOENT'
          ? `no such file: ${from.file}`
          : `cannot read ${from.file}: ${e.message}`,
      );
    }
    if ('url' in from && downloadFailed(e)) {
      const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
      throw new CommandError(`cannot download ${from.url}: ${e.message}${cause}`);
    }
    throw error;
  }
}

/** fx import --file F | --url U [--format ecb|plain] */
export async function fxImport(pool: Pool, values: Values): Promise<Record<string, unknown>> {
  const format = values.format;
  if (format !== undefined && format !== 'ecb' && format !== 'plain')
    throw new UsageError('--format must be ecb or plain');
  const from = origin(values);
  return asUsage(from, async () => ({ ...(await importFxRates(pool, from, format)) }));
}

/** market import --kind history|symbols|treasury --file F | --url U [--symbol S] */
export async function marketImport(pool: Pool, values: Values): Promise<Record<string, unknown>> {
  const kind = values.kind;
  if (typeof kind !== 'string' || !(marketImportKinds as readonly string[]).includes(kind)) {
    throw new UsageError(`--kind must be one of ${marketImportKinds.join(', ')}`);
  }
  const symbol = typeof values.symbol === 'string' ? values.symbol : undefined;
  // only a price history reads it: with the other kinds it would be ignored
  if (symbol !== undefined && kind !== 'history')
    throw new UsageError('--symbol applies to --kind history only');
  const from = origin(values);
  return asUsage(from, async () => ({
    ...(await importMarketData(pool, kind as MarketImportKind, from, { symbol })),
  }));
}
