// statement_upload_expire: direct uploads that nobody finished (no `complete`, no heartbeat
// before their TTL ran out) become `expired`; the objects of aborted and expired statements are
// removed once their last presigned PUT URL has stopped working (a client may still PUT until
// then). Runs every minute from the job runner's crontab.
import type { Deps } from '../../deps.ts';
import {
  abandonedWithDeadUrls,
  clearObjectSweeps,
  markAbandonedSwept,
  objectSweepsDue,
} from '../../ingest/objectSweepStore.ts';
import { expireDueUploads } from '../../ingest/statementStatus.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

const SWEEP_BATCH = 500;

/** Every direct upload past its time-to-live becomes expired; how many. */
export async function expireUploads(deps: Pick<Deps, 'pool'>): Promise<number> {
  return (await expireDueUploads(deps.pool, 'all')).length;
}

/**
 * Removes the objects of aborted and expired statements whose PUT URLs are dead, and those of
 * deleted statements that a live PUT URL could still write (object_sweeps, filled by a trigger on
 * their deletion) once it is dead; how many.
 */
export async function sweepAbandonedObjects(deps: Pick<Deps, 'pool' | 'store'>): Promise<number> {
  const rows = await abandonedWithDeadUrls(deps.pool, SWEEP_BATCH);
  for (const r of rows) await deps.store.delete(r.object_key);
  await markAbandonedSwept(
    deps.pool,
    rows.map((r) => r.id),
  );
  const due = await objectSweepsDue(deps.pool, SWEEP_BATCH);
  for (const key of due) await deps.store.delete(key);
  await clearObjectSweeps(deps.pool, due);
  return rows.length + due.length;
}

export const statementUploadExpireTask = defineTask(
  TASK.statement_upload_expire,
  async (_payload, { deps, helpers }) => {
    const n = await expireUploads(deps);
    if (n > 0) helpers.logger.info(`expired ${n} unfinished uploads`);
    const swept = await sweepAbandonedObjects(deps);
    if (swept > 0)
      helpers.logger.info(`removed the objects of ${swept} aborted or expired uploads`);
  },
);
