// statement_upload_expire: direct uploads that nobody finished (no `complete`, no heartbeat
// before their TTL ran out) become `expired`; the objects of aborted and expired statements are
// removed once their last presigned PUT URL has stopped working (a client may still PUT until
// then). Runs every minute from the job runner's crontab.
import type { Deps } from '../../deps.ts';
import { expireDueUploads } from '../../ingest/statementStatus.ts';
import { defineTask } from '../defineTask.ts';
import { TASK } from '../payloads.ts';

/** Past a URL's expiry by this much, no PUT of it is still arriving. */
const PUT_URL_GRACE = `interval '1 minute'`;
const SWEEP_BATCH = 500;
/** Statements whose upload was given up: aborted or expired, and such ones deleted since. */
const ABANDONED = `(status IN ('aborted', 'expired') OR (status = 'deleted' AND status_before_delete IN ('aborted', 'expired')))`;

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
  const { rows } = await deps.pool.query<{ id: string; object_key: string }>(
    `SELECT id, object_key FROM statements
     WHERE ${ABANDONED} AND put_url_expires_at < clock_timestamp() - ${PUT_URL_GRACE}
     ORDER BY put_url_expires_at LIMIT ${SWEEP_BATCH}`,
  );
  for (const r of rows) await deps.store.delete(r.object_key);
  await deps.pool.query(
    `UPDATE statements SET put_url_expires_at = NULL WHERE id = ANY ($1) AND ${ABANDONED}`,
    [rows.map((r) => r.id)],
  );
  const due = await deps.pool.query<{ object_key: string }>(
    `SELECT object_key FROM object_sweeps WHERE delete_after < clock_timestamp() ORDER BY delete_after LIMIT ${SWEEP_BATCH}`,
  );
  for (const r of due.rows) await deps.store.delete(r.object_key);
  await deps.pool.query(
    'DELETE FROM object_sweeps WHERE object_key = ANY ($1) AND delete_after < clock_timestamp()',
    [due.rows.map((r) => r.object_key)],
  );
  return rows.length + due.rows.length;
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
