// Building an export (the export_build job): the rows come from the organization's analytics
// database (the same DuckDB file, tables and member SQL cube.query reads), are written by DuckDB
// itself (`COPY ... TO` for CSV and Parquet) or streamed chunk by chunk into the XLSX writer, one
// part at a time, into a scratch directory; each part is hashed, uploaded under the export's prefix
// and deleted before the next one starts, so memory and disk stay flat whatever the export size.
//
// Attempts and their outcomes are attempts.ts's; the rows of each type rowSources.ts's; writing
// a part writers.ts's. A retried job finds a completed export and does nothing.
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { analyticsFor } from '../analytics/engine.ts';
import type { Deps } from '../deps.ts';
import { AppError } from '../errors.ts';
import { restrictionsOf } from './access.ts';
import { AttemptEnded, claim, complete, failExport, progress, requeueExport } from './attempts.ts';
import { columnsOf } from './definitions.ts';
import { attemptPrefix, removeObjects } from './objects.ts';
import { dataVersion, partsOf } from './rowSources.ts';
import type { ExportRow } from './store.ts';
import { contentTypes, partFileName, sha256Of, writePart, type WrittenFile } from './writers.ts';

export { failExport } from './attempts.ts';
export { neutralizedSql } from './writers.ts';

/**
 * Runs one attempt of an export and records its outcome: 'completed' (this attempt's files are the
 * export's), 'failed' (a permanent failure, an AppError: recorded on the export with its
 * errorCode), 'skipped' (nothing to do: the export is finished, unknown, or another attempt
 * finished it meanwhile, this attempt's objects removed). Anything else is retryable: the export
 * goes back to queued (on the final attempt: fails with EXPORT_FAILED), unless a later attempt
 * runs it, and the error is thrown.
 */
export async function buildExport(
  deps: Deps,
  exportId: string,
  opts: { finalAttempt?: boolean } = {},
): Promise<'completed' | 'failed' | 'skipped'> {
  const e = await claim(deps, exportId);
  if (!e) return 'skipped';
  const attempt = e.attempts;
  try {
    const files = await writeAttempt(deps, e, attempt);
    return (await complete(deps, e, attempt, files)) ? 'completed' : await ended(deps, e, attempt);
  } catch (error) {
    if (error instanceof AttemptEnded) return ended(deps, e, attempt);
    if (error instanceof AppError) {
      await failExport(deps, exportId, error.errorCode, error.message);
      return 'failed';
    }
    if (opts.finalAttempt)
      await failExport(
        deps,
        exportId,
        'EXPORT_FAILED',
        'Building the export failed on every attempt; the cause is in the server log.',
        attempt,
      );
    else await requeueExport(deps, exportId, attempt);
    throw error;
  }
}

/** Another attempt finished the export first: this one's objects go. */
async function ended(deps: Deps, e: ExportRow, attempt: number): Promise<'skipped'> {
  await removeObjects(deps, attemptPrefix(e, attempt));
  return 'skipped';
}

/** Writes and uploads every part of the export under the attempt's prefix; answers the files. */
async function writeAttempt(deps: Deps, e: ExportRow, attempt: number): Promise<WrittenFile[]> {
  const restrictions = await restrictionsOf(deps, e);
  const engine = analyticsFor(deps);
  const facts = await engine.freshFacts(e.organization_id);
  const dir = path.join(
    deps.config.analytics.dir,
    'exports',
    `${e.id}-${randomBytes(6).toString('hex')}`,
  );
  await mkdir(dir, { recursive: true });
  const table = `export_${randomBytes(6).toString('hex')}`;
  try {
    return await facts.withConnection(async (c) => {
      const before = await dataVersion(c);
      const parts = await partsOf(deps, c, e, restrictions, table);
      const total = parts.reduce((n, p) => n + p.rows, 0);
      await progress(deps, e.id, attempt, 0, total);
      const columns = columnsOf(e.type);
      const written: WrittenFile[] = [];
      let done = 0;
      for (const [i, part] of parts.entries()) {
        const fileName = partFileName(e, i + 1);
        const file = path.join(dir, fileName);
        const rows = await writePart(c, e.format, e.type, columns, part, file);
        if (rows !== part.rows)
          throw new Error(
            `export ${e.id} part ${i + 1}: ${rows} rows written, ${part.rows} planned (the data changed)`,
          );
        const objectKey = `${attemptPrefix(e, attempt)}${fileName}`;
        const [{ size }, sha256] = await Promise.all([stat(file), sha256Of(file)]);
        await deps.store.put(objectKey, createReadStream(file), contentTypes[e.format]);
        await rm(file, { force: true });
        written.push({
          part: i + 1,
          fileName,
          objectKey,
          contentType: contentTypes[e.format],
          rowCount: rows,
          sizeBytes: size,
          sha256,
        });
        done += rows;
        await progress(deps, e.id, attempt, done, total);
      }
      if ((await dataVersion(c)) !== before)
        throw new Error(`export ${e.id}: the organization's data changed while it was written`);
      await c.run(`DROP TABLE IF EXISTS ${table}`);
      await c.run(`DROP TABLE IF EXISTS ${table}_stage`);
      return written;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
