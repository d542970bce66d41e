// The SQL of the upload procedures (src/api/upload/*): uploads, their statements as the caller
// may see them, and the statement flags. One function per query; `org` is the caller's
// organization with its rightsholder scope as the procedure middleware loaded it
// (`ctx.org`), and every statement query keeps to that scope. Status changes are not here: they
// are the state machine's (src/ingest/statementStatus.ts).
import {
  inRightsholderScope,
  uploadInRightsholderScope,
  type RightsholderScope,
} from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { likeContains, sortable } from '../db/sql.ts';
import { AppError } from '../errors.ts';
import { STATEMENT_SELECT, type StatementRecord } from './statements.ts';
import { WAS_READ } from './statementStatus.ts';

/** The caller's organization and the rightsholders they may see (null: all of them). */
export interface VisibleTo {
  id: string;
  rightsholderScope: RightsholderScope;
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

/** A text filter as a case-insensitive substring pattern (`%`, `_` and `\` are characters), or null. */
function containing(text: string | undefined): string | null {
  return text ? likeContains(text) : null;
}

// ---- statements as the caller may see them ------------------------------------------------------

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
       declared_size AS "declaredSize", file_name AS "fileName", object_etag AS "objectEtag", ${WAS_READ} AS "wasRead"
     FROM statements`;

/** A statement of the organization within the caller's data access, locked when asked. */
export async function visibleStatement(
  db: Queryable,
  org: VisibleTo,
  statementId: string,
  opts: { lock?: boolean } = {},
): Promise<VisibleStatement> {
  const { rows } = await db.query<VisibleStatement>(
    `${VISIBLE_STATEMENT_SELECT} WHERE organization_id = $1 AND id = $2 AND ${inRightsholderScope('rightsholder_id', '$3')}
     ${opts.lock ? 'FOR UPDATE' : ''}`,
    [org.id, statementId, org.rightsholderScope],
  );
  if (!rows[0]) throw new AppError('STATEMENT_NOT_FOUND');
  return rows[0];
}

/**
 * The statements of an upload within the caller's data access, oldest first, locked; an upload
 * of which the caller may see no statement is not found.
 */
export async function visibleStatementsOfUpload(
  db: Queryable,
  org: VisibleTo,
  uploadId: string,
): Promise<VisibleStatement[]> {
  const { rows } = await db.query<VisibleStatement>(
    `${VISIBLE_STATEMENT_SELECT} WHERE organization_id = $1 AND upload_id = $2 AND ${inRightsholderScope('rightsholder_id', '$3')}
     ORDER BY created_at, id FOR UPDATE`,
    [org.id, uploadId, org.rightsholderScope],
  );
  if (rows.length === 0) throw new AppError('UPLOAD_NOT_FOUND');
  return rows;
}

/** The records of an upload's statements the caller may see, oldest first. */
export async function statementRecordsOfUpload(
  db: Queryable,
  org: VisibleTo,
  uploadId: string,
): Promise<StatementRecord[]> {
  const { rows } = await db.query<StatementRecord>(
    `SELECT ${STATEMENT_SELECT} FROM statements s WHERE s.organization_id = $1 AND s.upload_id = $2 AND ${inRightsholderScope('s.rightsholder_id', '$3')}
     ORDER BY s.created_at, s.id`,
    [org.id, uploadId, org.rightsholderScope],
  );
  return rows;
}

/** Whether the caller may see a statement of that id (not deleted; of that upload, when given). */
export async function statementVisible(
  db: Queryable,
  org: VisibleTo,
  statementId: string,
  uploadId: string | null,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM statements WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL AND ${inRightsholderScope('rightsholder_id', '$3')}
       AND ($4::uuid IS NULL OR upload_id = $4)`,
    [statementId, org.id, org.rightsholderScope, uploadId],
  );
  return (rowCount ?? 0) > 0;
}

/** Whether the caller may see a statement of the upload. */
export async function uploadVisible(
  db: Queryable,
  org: VisibleTo,
  uploadId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM statements WHERE upload_id = $1 AND organization_id = $2 AND ${inRightsholderScope('rightsholder_id', '$3')} LIMIT 1`,
    [uploadId, org.id, org.rightsholderScope],
  );
  return (rowCount ?? 0) > 0;
}

/** The values of the mapping's variables, for this reading of the file and the ones after it. */
export async function setStatementVariables(
  db: Queryable,
  statementId: string,
  variables: Record<string, string>,
): Promise<void> {
  await db.query('UPDATE statements SET variables = $2 WHERE id = $1', [
    statementId,
    JSON.stringify(variables),
  ]);
}

/** The file's text encoding (null: detected again). */
export async function setStatementEncoding(
  db: Queryable,
  statementId: string,
  encoding: string | null,
): Promise<void> {
  await db.query('UPDATE statements SET encoding = $2 WHERE id = $1', [statementId, encoding]);
}

// ---- starting an upload -------------------------------------------------------------------------

/** Whether the caller may see the rightsholder (not deleted). */
export async function rightsholderVisible(
  db: Queryable,
  org: VisibleTo,
  rightsholderId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM rightsholders WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL AND ${inRightsholderScope('id', '$3')}`,
    [org.id, rightsholderId, org.rightsholderScope],
  );
  return (rowCount ?? 0) > 0;
}

/** Whether the distributor is the organization's or a shared one. */
export async function distributorUsable(
  db: Queryable,
  organizationId: string,
  distributorId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    'SELECT 1 FROM distributors WHERE id = $1 AND (organization_id = $2 OR organization_id IS NULL)',
    [distributorId, organizationId],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Locks an upload the caller may add a file to: one they started, or one with a file of theirs (a
 * member restricted to some rightsholders does not add files to another's upload); whether it is.
 */
export async function lockUploadForAdding(
  db: Queryable,
  org: VisibleTo,
  uploadId: string,
  userId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM uploads u WHERE u.id = $1 AND u.organization_id = $2
       AND (u.created_by = $4 OR ${uploadInRightsholderScope('u.id', '$3')})
     FOR UPDATE`,
    [uploadId, org.id, org.rightsholderScope, userId],
  );
  return (rowCount ?? 0) > 0;
}

export async function touchUpload(db: Queryable, uploadId: string): Promise<void> {
  await db.query('UPDATE uploads SET updated_at = clock_timestamp() WHERE id = $1', [uploadId]);
}

export async function createUpload(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO uploads (organization_id, created_by) VALUES ($1, $2) RETURNING id',
    [organizationId, userId],
  );
  return rows[0]!.id;
}

/** A new statement's id, chosen before its row is written (its object key carries it). */
export async function newStatementId(db: Queryable): Promise<string> {
  return (await db.query<{ id: string }>('SELECT gen_random_uuid() AS id')).rows[0]!.id;
}

export interface UploadingStatement {
  id: string;
  organizationId: string;
  uploadId: string;
  rightsholderId: string;
  distributorId: string | null;
  customName: string | null;
  fileName: string;
  contentType: string;
  declaredSize: number | null;
  declaredSha256: string | null;
  objectKey: string;
  createdBy: string;
  variables: Record<string, string>;
  encoding: string | null;
}

/** A direct upload's statement, `uploading` for `ttlSeconds` (as its PUT URL); answers when it expires. */
export async function insertUploadingStatement(
  db: Queryable,
  s: UploadingStatement,
  ttlSeconds: number,
): Promise<Date> {
  const { rows } = await db.query<{ expiresAt: Date }>(
    `INSERT INTO statements (id, organization_id, upload_id, rightsholder_id, distributor_id, custom_name, file_name, content_type,
       declared_size, declared_sha256, object_key, status, upload_expires_at, put_url_expires_at, created_by, variables, encoding)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'uploading', clock_timestamp() + make_interval(secs => $12),
       clock_timestamp() + make_interval(secs => $12), $13, $14, $15)
     RETURNING upload_expires_at AS "expiresAt"`,
    [
      s.id,
      s.organizationId,
      s.uploadId,
      s.rightsholderId,
      s.distributorId,
      s.customName,
      s.fileName,
      s.contentType,
      s.declaredSize,
      s.declaredSha256,
      s.objectKey,
      ttlSeconds,
      s.createdBy,
      JSON.stringify(s.variables),
      s.encoding,
    ],
  );
  return rows[0]!.expiresAt;
}

/**
 * Extends the time-to-live (and the PUT URL's) of the given direct uploads still in progress and
 * not past it; answers those extended.
 */
export async function extendUploads(
  db: Queryable,
  org: VisibleTo,
  statementIds: readonly string[],
  ttlSeconds: number,
) {
  const { rows } = await db.query<{
    id: string;
    expiresAt: Date;
    objectKey: string;
    contentType: string;
    size: string | null;
  }>(
    `UPDATE statements SET upload_expires_at = clock_timestamp() + make_interval(secs => $4),
       put_url_expires_at = clock_timestamp() + make_interval(secs => $4), updated_at = clock_timestamp()
     WHERE organization_id = $1 AND id = ANY ($2) AND status = 'uploading' AND upload_expires_at > clock_timestamp() AND ${inRightsholderScope('rightsholder_id', '$3')}
     RETURNING id, upload_expires_at AS "expiresAt", object_key AS "objectKey", content_type AS "contentType", declared_size AS "size"`,
    [org.id, statementIds, org.rightsholderScope, ttlSeconds],
  );
  return rows;
}

// ---- lists --------------------------------------------------------------------------------------

export interface Page {
  limit: number;
  offset: number;
  sortOrder: 'asc' | 'desc';
}

const uploadSort = sortable(
  { createdAt: 'u.created_at', updatedAt: 'u.updated_at', fileCount: '"fileCount"' },
  'u.id',
  { tiebreakFollows: true },
);
export const uploadSorts = uploadSort.keys;
export type UploadSort = (typeof uploadSorts)[number];

export interface UploadFilter {
  search?: string | undefined;
  date_start?: string | undefined;
  date_end?: string | undefined;
}

/** An upload is visible when the caller may see at least one of its files. */
function uploadsWhere(org: VisibleTo, filter: UploadFilter | undefined) {
  return {
    where: `u.organization_id = $1
    AND EXISTS (SELECT 1 FROM statements s WHERE s.upload_id = u.id AND ${inRightsholderScope('s.rightsholder_id', '$2')}
      AND ($3::text IS NULL OR s.file_name ILIKE $3))
    AND ${dateRangeCondition('u.created_at', '$4', '$5')}`,
    params: [
      org.id,
      org.rightsholderScope,
      containing(filter?.search),
      filter?.date_start ?? null,
      filter?.date_end ?? null,
    ],
  };
}

/** A page of the uploads, with their files counted by status. */
export async function listUploads(
  db: Queryable,
  org: VisibleTo,
  filter: UploadFilter | undefined,
  page: Page & { sortBy: UploadSort },
) {
  const { where, params } = uploadsWhere(org, filter);
  const { rows } = await db.query(
    `SELECT u.id, u.created_at AS "createdAt", u.updated_at AS "updatedAt", u.created_by AS "createdBy",
       (SELECT count(*) FROM statements s WHERE s.upload_id = u.id AND s.deleted_at IS NULL AND ${inRightsholderScope('s.rightsholder_id', '$2')})::int AS "fileCount",
       coalesce((SELECT json_object_agg(status, n) FROM (SELECT s.status, count(*) AS n FROM statements s
          WHERE s.upload_id = u.id AND ${inRightsholderScope('s.rightsholder_id', '$2')} GROUP BY s.status) c), '{}'::json) AS "statusCounts"
     FROM uploads u WHERE ${where} ORDER BY ${uploadSort.orderBy(page.sortBy, page.sortOrder)} LIMIT ${page.limit} OFFSET ${page.offset}`,
    params,
  );
  return rows;
}

export async function countUploads(
  db: Queryable,
  org: VisibleTo,
  filter: UploadFilter | undefined,
): Promise<number> {
  const { where, params } = uploadsWhere(org, filter);
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM uploads u WHERE ${where}`,
    params,
  );
  return rows[0]!.n;
}

const statementSort = sortable(
  {
    createdAt: 's.created_at',
    fileName: 'lower(s.file_name)',
    status: 's.status',
    updatedAt: 's.updated_at',
  },
  's.id',
);
export type StatementSort = (typeof statementSort.keys)[number];

export interface StatementFilter {
  rightsholderId?: string | undefined;
  /** an ILIKE pattern (customNameFilter), or null */
  customName?: string | null | undefined;
  statementStatus?: string[] | undefined;
  statementIds?: string[] | undefined;
  includeDeleted: boolean;
  fileName?: string | undefined;
  uploadId?: string | undefined;
}

function statementsWhere(org: VisibleTo, f: StatementFilter) {
  return {
    where: `s.organization_id = $1 AND ${inRightsholderScope('s.rightsholder_id', '$2')}
    AND ($3::uuid IS NULL OR s.rightsholder_id = $3) AND ($4::text IS NULL OR s.custom_name ILIKE $4)
    AND ($5::text[] IS NULL OR s.status = ANY ($5)) AND ($6::uuid[] IS NULL OR s.id = ANY ($6))
    AND ($7 OR s.deleted_at IS NULL) AND ($8::text IS NULL OR s.file_name ILIKE $8) AND ($9::uuid IS NULL OR s.upload_id = $9)`,
    params: [
      org.id,
      org.rightsholderScope,
      f.rightsholderId ?? null,
      f.customName ?? null,
      f.statementStatus ?? null,
      f.statementIds ?? null,
      f.includeDeleted,
      containing(f.fileName),
      f.uploadId ?? null,
    ],
  };
}

/** A page of the statements (upload.statements). */
export async function listStatements(
  db: Queryable,
  org: VisibleTo,
  filter: StatementFilter,
  page: Page & { sortBy: StatementSort },
): Promise<StatementRecord[]> {
  const { where, params } = statementsWhere(org, filter);
  const order = statementSort.orderBy(page.sortBy, page.sortOrder);
  const { rows } = await db.query<StatementRecord>(
    `SELECT ${STATEMENT_SELECT} FROM statements s WHERE ${where} ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}`,
    params,
  );
  return rows;
}

export async function countStatements(
  db: Queryable,
  org: VisibleTo,
  filter: StatementFilter,
): Promise<number> {
  const { where, params } = statementsWhere(org, filter);
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM statements s WHERE ${where}`,
    params,
  );
  return rows[0]!.n;
}

// ---- flags --------------------------------------------------------------------------------------

/** Marks one flag of the statement resolved (the first time's time and user kept); its kind, or null when there is none. */
export async function resolveFlag(
  db: Queryable,
  statementId: string,
  flagId: string,
  userId: string,
): Promise<string | null> {
  const { rows } = await db.query<{ kind: string }>(
    `UPDATE statement_flags SET resolved = true, resolved_at = coalesce(resolved_at, clock_timestamp()), resolved_by = coalesce(resolved_by, $3)
     WHERE id = $1 AND statement_id = $2 RETURNING kind`,
    [flagId, statementId, userId],
  );
  return rows[0]?.kind ?? null;
}

/** Marks every unresolved flag of the statement resolved; how many. */
export async function resolveAllFlags(
  db: Queryable,
  statementId: string,
  userId: string,
): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE statement_flags SET resolved = true, resolved_at = clock_timestamp(), resolved_by = $2 WHERE statement_id = $1 AND NOT resolved`,
    [statementId, userId],
  );
  return rowCount ?? 0;
}

/** Shows or hides one flag of the statement; whether it was shown before, or null when there is no such flag. */
export async function setFlagShown(
  db: Queryable,
  statementId: string,
  flagId: string,
  shown: boolean,
): Promise<boolean | null> {
  const { rows } = await db.query<{ before: boolean }>(
    `UPDATE statement_flags f SET shown = $3 FROM (SELECT id, shown AS before FROM statement_flags WHERE id = $1 AND statement_id = $2) old
     WHERE f.id = old.id RETURNING old.before`,
    [flagId, statementId, shown],
  );
  return rows[0]?.before ?? null;
}

// ---- mappings seen from an upload ---------------------------------------------------------------

/** The header hash of a mapping of the organization or the shared library, or null. */
export async function mappingHeaderHash(
  db: Queryable,
  organizationId: string,
  mappingId: string,
): Promise<string | null> {
  const { rows } = await db.query<{ header_hash: string }>(
    'SELECT header_hash FROM mappings WHERE id = $1 AND (organization_id = $2 OR organization_id IS NULL)',
    [mappingId, organizationId],
  );
  return rows[0]?.header_hash ?? null;
}
