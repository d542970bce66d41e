// Retention: a completed export keeps its files for EXPORT_RETENTION_HOURS (default 168, 7 days)
// after it completed, until its `expiresAt`. Then it is `expired`: its objects and file rows are
// deleted and export.downloadFile answers EXPORT_EXPIRED (the export itself stays listed, with its
// rowCount, fileCount and totalBytes). A caller sees an export past its expiry as expired at once;
// the deletion is the export_expire job's, scheduled with each completion for its expiry time.
// Each run sweeps every export that is due, so one whose job was lost is swept by the next one;
// the hourly export_expire_sweep of the job runner's crontab runs the same sweep, so exports fall
// due (and their objects go) even when no export completes for a long time.
// An export naming a rightsholder that was deleted is due at once (retireExportsOf; a sweep finds
// it too), and its files are never handed out meanwhile. So is every export of a soft-deleted
// organization (retireExportsOfOrganization with organization.delete; a sweep finds them too):
// no procedure answers for the organization any more, and its files do not wait out the retention.
import type { Config } from '../config.ts';
import { recordActivity } from '../activity/record.ts';
import { withTransaction, type Queryable } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { TASK } from '../jobs/payloads.ts';
import { removeObjects } from './objects.ts';
import { exportPrefix, type ExportRow } from './store.ts';

const SWEEP_BATCH = 100;

/** The retention in seconds: config.exports.retentionHours (EXPORT_RETENTION_HOURS, default 7 days). */
export function retentionSeconds(config: Config): number {
  return config.exports.retentionHours * 3600;
}

/** An export names a rightsholder that is deleted (or flagged deleted): its files must go. */
const NAMES_GONE = `EXISTS (SELECT 1 FROM unnest(exports.rightsholder_ids) AS n(id)
  WHERE NOT EXISTS (SELECT 1 FROM rightsholders r WHERE r.id = n.id AND r.organization_id = exports.organization_id AND r.deleted_at IS NULL))`;

/** The export's organization is soft-deleted: nobody may download it, its files must go. */
const ORGANIZATION_GONE = `EXISTS (SELECT 1 FROM organizations o WHERE o.id = exports.organization_id AND o.deleted_at IS NOT NULL)`;

/** Whether every rightsholder the export names is still there (its files may be handed out). */
export async function rightsholdersKept(db: Queryable, exportId: string): Promise<boolean> {
  const { rows } = await db.query<{ gone: boolean }>(
    `SELECT ${NAMES_GONE} AS gone FROM exports WHERE id = $1`,
    [exportId],
  );
  return rows[0]?.gone === false;
}

/**
 * A rightsholder is deleted (or flagged deleted): the completed exports naming it, which hold its
 * data, expire now and their files are deleted by an export_expire job run at once. Call it in the
 * deleting transaction (the job is added with it).
 */
export async function retireExportsOf(
  db: Queryable,
  organizationId: string,
  rightsholderId: string,
): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE exports SET expires_at = clock_timestamp(), updated_at = clock_timestamp()
     WHERE organization_id = $1 AND $2::uuid = ANY (rightsholder_ids) AND status = 'completed' RETURNING id`,
    [organizationId, rightsholderId],
  );
  for (const r of rows) await scheduleExpiry(db, r.id, new Date());
  return rows.length;
}

/**
 * An organization is soft-deleted: its completed exports expire now and their files are deleted
 * by an export_expire job run at once. Call it in the deleting transaction.
 */
export async function retireExportsOfOrganization(
  db: Queryable,
  organizationId: string,
): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE exports SET expires_at = clock_timestamp(), updated_at = clock_timestamp()
     WHERE organization_id = $1 AND status = 'completed' RETURNING id`,
    [organizationId],
  );
  for (const r of rows) await scheduleExpiry(db, r.id, new Date());
  return rows.length;
}

/** Adds the export_expire job for the export's expiry, in the caller's transaction. */
export async function scheduleExpiry(db: Queryable, exportId: string, at: Date): Promise<void> {
  await enqueue(
    db,
    TASK.export_expire,
    { exportId },
    { runAt: at, maxAttempts: 10, jobKey: `${TASK.export_expire}:${exportId}` },
  );
}

/**
 * Expires every completed export past its expiry and deletes the objects of every expired (or
 * failed) one whose objects are not yet gone; answers how many exports it expired and purged.
 */
export async function expireExports(
  deps: Pick<Deps, 'pool' | 'store'>,
): Promise<{ expired: number; purged: number }> {
  let expired = 0;
  let purged = 0;
  for (;;) {
    const batch = await withTransaction(deps.pool, async (client) => {
      const { rows } = await client.query<ExportRow>(
        `SELECT * FROM exports
         WHERE (status = 'completed' AND (expires_at <= clock_timestamp() OR ${NAMES_GONE} OR ${ORGANIZATION_GONE})) OR (status IN ('expired', 'failed') AND purged_at IS NULL)
         ORDER BY expires_at NULLS LAST LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED`,
      );
      for (const e of rows.filter((x) => x.status === 'completed')) {
        await client.query(
          `UPDATE exports SET status = 'expired', expires_at = least(expires_at, clock_timestamp()), updated_at = clock_timestamp() WHERE id = $1`,
          [e.id],
        );
        await client.query('DELETE FROM export_files WHERE export_id = $1', [e.id]);
        await recordActivity(client, null, {
          organizationId: e.organization_id,
          action: 'export.expired',
          subjectType: 'export',
          subjectId: e.id,
          subjectLabel: `${e.type} (${e.format})`,
          changes: { status: { before: 'completed', after: 'expired' } },
        });
        expired++;
      }
      return rows;
    });
    // the objects go once no caller can get a download link any more
    for (const e of batch) {
      await removeObjects(deps, exportPrefix(e.organization_id, e.id));
      await deps.pool.query('UPDATE exports SET purged_at = clock_timestamp() WHERE id = $1', [
        e.id,
      ]);
      purged++;
    }
    if (batch.length < SWEEP_BATCH) return { expired, purged };
  }
}
