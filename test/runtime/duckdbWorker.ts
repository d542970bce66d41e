// A worker file for test/runtime/threadsClose.test.ts, run by the real thread pool: a DuckDB
// query of some seconds (a thread ended meanwhile waits for it, then aborts the process), on a
// connection of workers/duckdb.ts as the service's workers have theirs. It writes `startedFile`
// once the query is under way.
import { writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { connect, disconnect, stopping } from '../../workers/duckdb.ts';
import { fail, type WorkerResult } from '../../workers/results.ts';

export async function slowQuery(input: { startedFile: string }): Promise<WorkerResult<object>> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await connect(instance);
  try {
    const query = c.run('SELECT count(*) FROM range(4000000000)');
    writeFileSync(input.startedFile, 'started');
    await query;
    return { ok: true };
  } catch (error) {
    return stopping()
      ? fail('SERVICE_UNAVAILABLE', 'interrupted: the pool is closing')
      : fail('WORKER_FAILED', String(error));
  } finally {
    disconnect(c);
    instance.closeSync();
  }
}
