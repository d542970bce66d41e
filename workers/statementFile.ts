// The statement file reader, run in a piscina thread: untrusted bytes in, the located table (or
// { ok: false, errorCode, message }) out. Pure CPU and local files: no database, no network.
import { locate } from '../src/ingest/file/locate.ts';
import { namedEncoding } from '../src/ingest/file/encoding.ts';
import { FileError } from '../src/ingest/file/limits.ts';
import type { TaskInput, TaskOutput } from '../src/workers/tasks.ts';
import { fail, type WorkerResult } from './results.ts';

export async function locateTable(
  input: TaskInput<'locateTable'>,
): Promise<WorkerResult<TaskOutput<'locateTable'>>> {
  if (
    typeof input !== 'object' ||
    input === null ||
    typeof input.sourcePath !== 'string' ||
    typeof input.fileName !== 'string' ||
    typeof input.workDir !== 'string' ||
    (input.limits !== undefined && (typeof input.limits !== 'object' || input.limits === null)) ||
    (input.encoding !== undefined && typeof input.encoding !== 'string')
  ) {
    return fail(
      'VALIDATION_FAILED',
      'locateTable needs { sourcePath, fileName, workDir, limits?, encoding? }',
    );
  }
  const encoding = input.encoding === undefined ? undefined : namedEncoding(input.encoding);
  if (encoding === null)
    return fail(
      'ENCODING_UNKNOWN',
      `The encoding "${input.encoding!.slice(0, 40)}" is not one the reader decodes.`,
    );
  try {
    return { ok: true, ...(await locate(encoding === undefined ? input : { ...input, encoding })) };
  } catch (error) {
    if (error instanceof FileError) return fail(error.errorCode, error.message);
    throw error;
  }
}
