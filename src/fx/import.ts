// Loading exchange-rate files: from a path or a URL, zipped (as the ECB publishes its CSV) or
// not, in one transaction, recorded in reference_imports whatever the outcome.
import { readFile, stat } from 'node:fs/promises';
import yauzl from 'yauzl';
import type { Pool, Queryable } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';
import { ReferenceFileError } from '../lookups/csv.ts';
import { parseFxCsv, type FxFormat, type ParsedRate } from './parse.ts';
import { rerateStatements } from './rerate.ts';
import { ECB_UPSERT_SQL, PLAIN_UPSERT_SQL } from './rates.ts';
import { readCappedBody } from '../net/cappedBody.ts';

export interface FxImportSummary {
  format: FxFormat;
  /** rows written to fx_rates (one per currency and day, EUR included for ECB files) */
  rows: number;
  days: number;
  from: string | null;
  to: string | null;
  currencies: string[];
  skippedCurrencies: string[];
  /** ECB days without a US-dollar rate, which cannot be converted */
  skippedDays: string[];
  /** processed statements whose rates these rates changed (src/fx/rerate.ts) */
  statementsRerated: number;
}

export type ImportOrigin = { file: string } | { url: string };

/** The most bytes a reference file may have: downloaded, read from disk, or unzipped (the ECB's whole history is about 7 MB). */
export const MAX_REFERENCE_BYTES = 64 * 1024 * 1024;

export function describeOrigin(origin: ImportOrigin): string {
  return 'file' in origin ? `file:${origin.file}` : origin.url;
}

function tooLarge(what: string): ReferenceFileError {
  return new ReferenceFileError(`${what} is larger than ${MAX_REFERENCE_BYTES} bytes`);
}

export async function readOrigin(origin: ImportOrigin, timeoutMs = 60_000): Promise<Buffer> {
  if ('file' in origin) {
    if ((await stat(origin.file)).size > MAX_REFERENCE_BYTES) throw tooLarge(origin.file);
    return readFile(origin.file);
  }
  const res = await fetch(origin.url, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`GET ${origin.url} answered HTTP ${res.status}`);
  // counted while it arrives: an endless or oversized body is refused before it fills the memory
  return readCappedBody(res, MAX_REFERENCE_BYTES, () => tooLarge(origin.url));
}

/** The CSV text of the bytes: the first .csv entry when they are a zip archive (at most MAX_REFERENCE_BYTES unzipped). */
export async function csvText(bytes: Buffer): Promise<string> {
  if (bytes.length < 4 || bytes.readUInt32LE(0) !== 0x04034b50) return bytes.toString('utf8');
  return new Promise<string>((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (err, zip) => {
      if (err || !zip)
        return reject(
          new ReferenceFileError(`Not a readable zip archive: ${err?.message ?? 'unknown error'}`),
        );
      const fail = (error: Error) => {
        zip.close();
        reject(error);
      };
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!/\.csv$/i.test(entry.fileName)) return zip.readEntry();
        // a zip bomb is refused by its declared size (yauzl checks the inflated bytes against it) and again while inflating
        if (entry.uncompressedSize > MAX_REFERENCE_BYTES)
          return fail(tooLarge(`${entry.fileName} in the archive`));
        zip.openReadStream(entry, (streamErr, stream) => {
          if (streamErr || !stream)
            return fail(new ReferenceFileError(`Cannot read ${entry.fileName} in the archive`));
          const chunks: Buffer[] = [];
          let size = 0;
          stream.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_REFERENCE_BYTES) {
              stream.destroy();
              return fail(tooLarge(`${entry.fileName} in the archive`));
            }
            chunks.push(c);
          });
          stream.on('error', (e: Error) =>
            fail(
              new ReferenceFileError(`Cannot read ${entry.fileName} in the archive: ${e.message}`),
            ),
          );
          stream.on('end', () => {
            zip.close();
            resolve(Buffer.concat(chunks).toString('utf8'));
          });
        });
      });
      zip.on('end', () => reject(new ReferenceFileError('The zip archive holds no .csv file')));
      zip.on('error', (e: Error) =>
        reject(new ReferenceFileError(`Not a readable zip archive: ${e.message}`)),
      );
      zip.readEntry();
    });
  });
}

/** Writes parsed rates; the ECB conversion happens in SQL, day by day. */
export async function writeFxRates(
  db: Queryable,
  format: FxFormat,
  rates: ParsedRate[],
): Promise<{ rows: number; skippedDays: string[] }> {
  const byDay = new Map<string, ParsedRate[]>();
  for (const r of rates) byDay.set(r.date, [...(byDay.get(r.date) ?? []), r]);
  const skippedDays =
    format === 'ecb'
      ? [...byDay].filter(([, rs]) => !rs.some((r) => r.currency === 'USD')).map(([d]) => d)
      : [];
  const days = [...byDay.keys()].filter((d) => !skippedDays.includes(d)).sort();
  let written = 0;
  for (let i = 0; i < days.length; i += 200) {
    const chunk = days
      .slice(i, i + 200)
      .flatMap((d) => byDay.get(d)!.map((r) => ({ d: r.date, c: r.currency, v: r.value })));
    const res = await db.query(format === 'ecb' ? ECB_UPSERT_SQL : PLAIN_UPSERT_SQL, [
      JSON.stringify(chunk),
    ]);
    written += res.rowCount ?? 0;
  }
  return { rows: written, skippedDays: skippedDays.sort() };
}

export async function recordImport(
  db: Queryable,
  kind: string,
  origin: string,
  outcome: { summary?: unknown; error?: string },
): Promise<void> {
  await db.query(
    'INSERT INTO reference_imports (kind, origin, status, summary, error) VALUES ($1, $2, $3, $4::jsonb, $5)',
    [
      kind,
      origin,
      outcome.error === undefined ? 'succeeded' : 'failed',
      outcome.summary === undefined ? null : JSON.stringify(outcome.summary),
      outcome.error ?? null,
    ],
  );
}

/** Imports an exchange-rate file. A file that cannot be read as rates throws ReferenceFileError. */
export async function importFxRates(
  pool: Pool,
  origin: ImportOrigin,
  format?: FxFormat,
): Promise<FxImportSummary> {
  try {
    const parsed = parseFxCsv(await csvText(await readOrigin(origin)), format);
    if (parsed.rates.length === 0) throw new ReferenceFileError('The file holds no exchange rates');
    const { rows, skippedDays } = await withTransaction(pool, (db) =>
      writeFxRates(db, parsed.format, parsed.rates),
    );
    const days = [...new Set(parsed.rates.map((r) => r.date))]
      .filter((d) => !skippedDays.includes(d))
      .sort();
    const currencies = [...new Set(parsed.rates.map((r) => r.currency).filter((c) => c !== 'USD'))];
    if (parsed.format === 'ecb') currencies.push('EUR');
    const summary: FxImportSummary = {
      format: parsed.format,
      rows,
      days: days.length,
      from: days[0] ?? null,
      to: days.at(-1) ?? null,
      currencies: currencies.sort(),
      skippedCurrencies: parsed.skippedCurrencies,
      skippedDays,
      statementsRerated: await rerateStatements(pool),
    };
    await recordImport(pool, 'fx', describeOrigin(origin), { summary });
    return summary;
  } catch (error) {
    await recordImport(pool, 'fx', describeOrigin(origin), {
      error: (error as Error).message,
    }).catch(() => {});
    throw error;
  }
}
