// A job added as graphile-worker's WorkerUtils.addJob adds it, for tests that add jobs the
// service's typed enqueue (src/jobs/enqueue.ts) refuses: test tasks, payloads a task must reject.
import type { Queryable } from '../../src/db/pool.ts';

/** Adds a job of any task with any payload; its id. */
export async function addJobUnchecked(
  db: Queryable,
  task: string,
  payload: unknown,
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    'SELECT (graphile_worker.add_job($1::text, payload => $2::json)).id::text AS id',
    [task, JSON.stringify(payload)],
  );
  return rows[0]!.id;
}
