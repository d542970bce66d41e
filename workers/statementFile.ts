// The statement file reader, run in a piscina thread: untrusted bytes in, the located table (or
// { ok: false, errorCode, message }) out. Pure CPU and local files: no database, no network.
import { locate } from '../src/ingest/file/locate.ts';
import { FileError } from '../src/ingest/file/limits.ts';
import type { LocateInput, LocatedTable } from '../src/ingest/fileTypes.ts';
import { fail, type WorkerResult } from './results.ts';

export async function locateTable(input: LocateInput): Promise<WorkerResult<LocatedTable>> {
  if (
    typeof input !== 'object' ||
    input === null ||
    typeof input.sourcePath !== 'string' ||
    typeof input.fileName !== 'string' ||
    typeof input.workDir !== 'string' ||
    (input.limits !== undefined && (typeof input.limits !== 'object' || input.limits === null))
  ) {
    return fail('VALIDATION_FAILED', 'locateTable needs { sourcePath, fileName, workDir, limits? }');
  }
  try {
    return { ok: true, ...(await locate(input)) };
  } catch (error) {
    if (error instanceof FileError) return fail(error.errorCode, error.message);
    throw error;
  }
}
