// Enqueues an export build. The job key makes a second request for the same export replace the
// queued job instead of running twice; the build itself is idempotent (src/exports/run.ts). An
// organization's exports share one job queue, so they are built one at a time: however many a
// member asks for at once, they take one job runner slot, and the other organizations' work
// (statements, their exports) keeps the rest.
import type { Queryable } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { TASK } from '../jobs/payloads.ts';

export const EXPORT_MAX_ATTEMPTS = 3;

/** `db`: the pool, or a transaction the job is added with. */
export async function enqueueExportBuild(
  deps: Pick<Deps, 'pool'>,
  organizationId: string,
  exportId: string,
  db: Queryable = deps.pool,
): Promise<void> {
  await enqueue(
    db,
    TASK.export_build,
    { organizationId, exportId },
    {
      jobKey: `${TASK.export_build}:${exportId}`,
      queueName: `${TASK.export_build}:${organizationId}`,
      maxAttempts: EXPORT_MAX_ATTEMPTS,
    },
  );
}
