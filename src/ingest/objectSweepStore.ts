// The SQL of the object sweep (src/jobs/tasks/statement_upload_expire.ts): the objects of
// statements whose upload was given up, and those of deleted statements a live PUT URL could
// still write (object_sweeps, filled by a trigger on their deletion). One function per query.
import type { Queryable } from '../db/pool.ts';

/** Past a URL's expiry by this much, no PUT of it is still arriving. */
const PUT_URL_GRACE = `interval '1 minute'`;
/** Statements whose upload was given up: aborted or expired, and such ones deleted since. */
const ABANDONED = `(status IN ('aborted', 'expired') OR (status = 'deleted' AND status_before_delete IN ('aborted', 'expired')))`;

/** Up to `limit` abandoned statements whose PUT URLs are dead, oldest expiry first. */
export async function abandonedWithDeadUrls(
  db: Queryable,
  limit: number,
): Promise<{ id: string; object_key: string }[]> {
  const { rows } = await db.query<{ id: string; object_key: string }>(
    `SELECT id, object_key FROM statements
     WHERE ${ABANDONED} AND put_url_expires_at < clock_timestamp() - ${PUT_URL_GRACE}
     ORDER BY put_url_expires_at LIMIT $1`,
    [limit],
  );
  return rows;
}

/** The statements' objects are removed: nothing is left for a sweep to do for them. */
export async function markAbandonedSwept(db: Queryable, ids: readonly string[]): Promise<void> {
  await db.query(
    `UPDATE statements SET put_url_expires_at = NULL WHERE id = ANY ($1) AND ${ABANDONED}`,
    [ids],
  );
}

/** Up to `limit` object keys of deleted statements whose wait is over, oldest first. */
export async function objectSweepsDue(db: Queryable, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ object_key: string }>(
    'SELECT object_key FROM object_sweeps WHERE delete_after < clock_timestamp() ORDER BY delete_after LIMIT $1',
    [limit],
  );
  return rows.map((r) => r.object_key);
}

/** The due sweeps of these keys are done. */
export async function clearObjectSweeps(db: Queryable, keys: readonly string[]): Promise<void> {
  await db.query(
    'DELETE FROM object_sweeps WHERE object_key = ANY ($1) AND delete_after < clock_timestamp()',
    [keys],
  );
}
