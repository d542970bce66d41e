// What the upload procedures share: finding a statement the caller may see, the caller's
// rightsholder scope as a SQL condition, and the date range filters of the lists.
import { z } from 'zod';
import { rightsholderScope, type RightsholderScope } from '../../access/dataAccess.ts';
import type { Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { likeContains } from '../../db/sql.ts';

/**
 * An id as stored and answered: a UUID in any case, lower-cased, so that an id sent in capitals
 * names the same row and compares equal to the stored one wherever ids are compared or echoed.
 */
export const storedId = () => z.uuid().transform((id) => id.toLowerCase());

/**
 * The `customName` filter of upload.statements and file.list: trimmed, as uploadFile stores the
 * name, and matched as a case-insensitive substring like the name filters (`%`, `_` and `\` are
 * characters); blank is no filter. As the ILIKE pattern of a `text` parameter (null: no filter).
 */
export const customNameFilter = z
  .string()
  .trim()
  .max(200)
  .transform((name) => (name === '' ? null : likeContains(name)));

export interface Caller {
  organizationId: string;
  userId: string;
}

export async function callerScope(db: Queryable, caller: Caller): Promise<RightsholderScope> {
  return rightsholderScope(db, caller.organizationId, caller.userId);
}

export interface VisibleStatement {
  id: string;
  status: string;
  uploadId: string;
  rightsholderId: string;
  objectKey: string;
  declaredSize: number | null;
  fileName: string;
  /** the ETag of the object as complete checked it (null before then, and for statements completed before migration 22) */
  objectEtag: string | null;
  /** whether a pipeline run has read the file (it failed, was processed or located): no upload in progress any more */
  wasRead: boolean;
}

const VISIBLE_STATEMENT_SELECT = `SELECT id, status, upload_id AS "uploadId", rightsholder_id AS "rightsholderId", object_key AS "objectKey",
       declared_size AS "declaredSize", file_name AS "fileName", object_etag AS "objectEtag",
       (located IS NOT NULL OR normalized_key IS NOT NULL OR failure_code IS NOT NULL) AS "wasRead"
     FROM statements`;

/** A statement of the organization within the caller's data access, locked when asked. */
export async function visibleStatement(
  db: Queryable,
  caller: Caller,
  statementId: string,
  opts: { lock?: boolean } = {},
): Promise<VisibleStatement> {
  const scope = await callerScope(db, caller);
  const { rows } = await db.query<VisibleStatement>(
    `${VISIBLE_STATEMENT_SELECT} WHERE organization_id = $1 AND id = $2 AND ($3::uuid[] IS NULL OR rightsholder_id = ANY ($3))
     ${opts.lock ? 'FOR UPDATE' : ''}`,
    [caller.organizationId, statementId, scope],
  );
  if (!rows[0]) throw new AppError('STATEMENT_NOT_FOUND');
  return rows[0];
}

/**
 * The statements of an upload within the caller's data access, oldest first, locked; an upload
 * of which the caller may see no statement is not found.
 */
export async function visibleStatementsOfUpload(db: Queryable, caller: Caller, uploadId: string): Promise<VisibleStatement[]> {
  const scope = await callerScope(db, caller);
  const { rows } = await db.query<VisibleStatement>(
    `${VISIBLE_STATEMENT_SELECT} WHERE organization_id = $1 AND upload_id = $2 AND ($3::uuid[] IS NULL OR rightsholder_id = ANY ($3))
     ORDER BY created_at, id FOR UPDATE`,
    [caller.organizationId, uploadId, scope],
  );
  if (rows.length === 0) throw new AppError('UPLOAD_NOT_FOUND');
  return rows;
}

/**
 * Marks `expired` the direct uploads among the given statements (by id, or every one of an upload)
 * whose time-to-live has run out, before anything acts on them: an upload past its TTL is expired
 * whether or not the minute job (statement_upload_expire) has recorded it yet, so a heartbeat or a
 * complete arriving after the TTL is refused the same way at any moment.
 */
export async function expireDueUploads(db: Queryable, organizationId: string, which: { statementIds: readonly string[] } | { uploadId: string }): Promise<void> {
  const byUpload = 'uploadId' in which;
  await db.query(
    `UPDATE statements SET status = 'expired', updated_at = clock_timestamp()
     WHERE organization_id = $1 AND ${byUpload ? 'upload_id = $2' : 'id = ANY ($2)'} AND status = 'uploading' AND upload_expires_at <= clock_timestamp()`,
    [organizationId, byUpload ? which.uploadId : which.statementIds],
  );
}

/**
 * The SQL condition of a date range filter (`dateFilter()` values as the parameters `start` and
 * `end`, either may be NULL) on a timestamptz column: a calendar date covers its whole day, an ISO
 * date-time is that instant (with its offset); both ends are inclusive.
 */
export function dateRangeCondition(column: string, start: string, end: string): string {
  return `(${start}::text IS NULL OR ${column} >= ${start}::timestamptz)
    AND (${end}::text IS NULL OR CASE WHEN ${end}::text ~ '^\\d{4}-\\d{2}-\\d{2}$' THEN ${column} < ${end}::date + 1 ELSE ${column} <= ${end}::timestamptz END)`;
}
