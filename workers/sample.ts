// Reads rows [startRow, endRow) of one file variant with DuckDB, in a worker thread: Parquet for
// `normalized`, CSV with a header for `trimmed`, `standardized` and `removed`, and the raw
// delimited table (no header, every line) for `original` and `single`.
import { DuckDBInstance } from '@duckdb/node-api';
import { sqlLiteral } from '../src/db/sql.ts';
import { connect, disconnect, stopping } from './duckdb.ts';
import type { TaskInput, TaskOutput } from '../src/workers/tasks.ts';
import { fail, type WorkerResult } from './results.ts';

export type { SampleInput } from '../src/workers/tasks.ts';

const lit = (v: string) => sqlLiteral(v.replace(/\0/g, ''));

export async function sampleFile(
  input: TaskInput<'sample'>,
): Promise<WorkerResult<TaskOutput<'sample'>>> {
  const instance = await DuckDBInstance.create(':memory:', {
    threads: '1',
    memory_limit: '256MB',
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
  });
  const connection = await connect(instance);
  try {
    const limit = Math.max(0, input.endRow - input.startRow);
    const offset = Math.max(0, input.startRow);
    const source =
      input.kind === 'parquet'
        ? `read_parquet(${lit(input.path)})`
        : input.kind === 'csv_with_header'
          ? `read_csv(${lit(input.path)}, header=true, all_varchar=true, null_padding=true, strict_mode=false)`
          : `read_csv(${lit(input.path)}, header=false, all_varchar=true, null_padding=true, strict_mode=false, auto_detect=true, delim=${lit(input.delimiter ?? ',')}, ${input.quote === '' ? "quote=''" : `quote='"'`})`;
    const reader = await connection.runAndReadAll(
      `SELECT * FROM ${source} LIMIT ${limit} OFFSET ${offset}`,
    );
    return { ok: true, columns: reader.columnNames(), rows: reader.getRowsJson() as unknown[][] };
  } catch (error) {
    if (stopping())
      return fail('SERVICE_UNAVAILABLE', 'sampling was interrupted: the service is stopping');
    return fail(
      'STATEMENT_UNREADABLE',
      `the file could not be sampled: ${String((error as Error).message)
        .split('\n')[0]!
        .slice(0, 300)}`,
    );
  } finally {
    disconnect(connection);
    instance.closeSync();
  }
}
