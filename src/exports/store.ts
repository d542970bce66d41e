// Exports and their files in PostgreSQL: one small function per operation. An export is visible
// to a caller when every rightsholder it names is within the caller's data access (the same rule
// that decides which rows analytics shows them); anything else answers NOT_FOUND.
import {
  allInRightsholderScope,
  inRightsholderScope,
  type RightsholderScope,
} from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { sortable } from '../db/sql.ts';
import { AppError } from '../errors.ts';
import { monthIndexSql } from '../periods.ts';
import type { ExportFilters, ExportFormat, ExportStatus, ExportType } from './definitions.ts';

export interface ExportRow {
  id: string;
  organization_id: string;
  requested_by: string | null;
  type: ExportType;
  format: ExportFormat;
  rightsholder_ids: string[];
  filters: ExportFilters;
  part_rows: number;
  status: ExportStatus;
  progress_done: string;
  progress_total: string | null;
  row_count: string | null;
  file_count: number | null;
  total_bytes: string | null;
  error_code: string | null;
  error_reason: string | null;
  attempts: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  expires_at: Date | null;
  purged_at: Date | null;
}

export interface ExportFileRow {
  id: string;
  part: number;
  file_name: string;
  object_key: string;
  content_type: string;
  row_count: string;
  size_bytes: string;
  sha256: string;
}

/**
 * The export's status as callers see it: a completed export past its expiry is expired at once,
 * even before the export_expire job removed its files.
 */
export function effectiveStatus(
  e: Pick<ExportRow, 'status' | 'expires_at'>,
  now = Date.now(),
): ExportStatus {
  return e.status === 'completed' && e.expires_at !== null && e.expires_at.getTime() <= now
    ? 'expired'
    : e.status;
}

/** The same in SQL, over the exports table. */
const EFFECTIVE_STATUS = `(CASE WHEN status = 'completed' AND expires_at <= clock_timestamp() THEN 'expired' ELSE status END)`;

/** The public shape of an export (status, list). */
export function exportView(e: ExportRow) {
  const n = (v: string | null) => (v === null ? null : Number(v));
  return {
    id: e.id,
    type: e.type,
    format: e.format,
    status: effectiveStatus(e),
    rightsholderIds: e.rightsholder_ids,
    filters: e.filters,
    partRows: e.part_rows,
    progress: { done: Number(e.progress_done), total: n(e.progress_total) },
    rowCount: n(e.row_count),
    fileCount: e.file_count,
    totalBytes: n(e.total_bytes),
    errorCode: e.error_code,
    reason: e.error_reason,
    requestedBy: e.requested_by,
    createdAt: e.created_at.toISOString(),
    startedAt: e.started_at?.toISOString() ?? null,
    finishedAt: e.finished_at?.toISOString() ?? null,
    expiresAt: e.expires_at?.toISOString() ?? null,
  };
}

export function fileView(f: ExportFileRow) {
  return {
    id: f.id,
    part: f.part,
    fileName: f.file_name,
    contentType: f.content_type,
    rowCount: Number(f.row_count),
    sizeBytes: Number(f.size_bytes),
    sha256: f.sha256,
  };
}

// the export's rightsholders all lie within the scope ($3 NULL: every rightsholder)
const VISIBLE = `organization_id = $1 AND ${allInRightsholderScope('rightsholder_ids', '$3')}`;

export async function insertExport(
  db: Queryable,
  e: {
    organizationId: string;
    requestedBy: string;
    type: ExportType;
    format: ExportFormat;
    rightsholderIds: string[];
    filters: ExportFilters;
    partRows: number;
  },
): Promise<ExportRow> {
  const { rows } = await db.query<ExportRow>(
    `INSERT INTO exports (organization_id, requested_by, type, format, rightsholder_ids, filters, part_rows)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [
      e.organizationId,
      e.requestedBy,
      e.type,
      e.format,
      e.rightsholderIds,
      JSON.stringify(e.filters),
      e.partRows,
    ],
  );
  return rows[0]!;
}

export async function visibleExport(
  db: Queryable,
  organizationId: string,
  scope: RightsholderScope,
  exportId: string,
): Promise<ExportRow> {
  const { rows } = await db.query<ExportRow>(`SELECT * FROM exports WHERE ${VISIBLE} AND id = $2`, [
    organizationId,
    exportId,
    scope,
  ]);
  if (!rows[0]) throw new AppError('EXPORT_NOT_FOUND');
  return rows[0];
}

const exportSort = sortable(
  {
    createdAt: 'created_at',
    startedAt: 'started_at',
    finishedAt: 'finished_at',
    type: 'type',
    status: EFFECTIVE_STATUS,
    rowCount: 'row_count',
  },
  'id',
  { nullsLast: true, tiebreakFollows: true },
);
export const exportSorts = exportSort.keys;
export type ExportSort = (typeof exportSorts)[number];

export async function listExports(
  db: Queryable,
  organizationId: string,
  scope: RightsholderScope,
  opts: {
    status?: ExportStatus[] | undefined;
    type?: ExportType[] | undefined;
    sortBy: ExportSort;
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
): Promise<{ rows: ExportRow[]; total: number }> {
  const where = `${VISIBLE} AND ($2::text[] IS NULL OR ${EFFECTIVE_STATUS} = ANY ($2)) AND ($4::text[] IS NULL OR type = ANY ($4))`;
  const params = [organizationId, opts.status ?? null, scope, opts.type ?? null];
  const [rows, count] = await Promise.all([
    db.query<ExportRow>(
      `SELECT * FROM exports WHERE ${where} ORDER BY ${exportSort.orderBy(opts.sortBy, opts.sortOrder)} LIMIT $5 OFFSET $6`,
      [...params, opts.limit, opts.offset],
    ),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM exports WHERE ${where}`, params),
  ]);
  return { rows: rows.rows, total: Number(count.rows[0]!.n) };
}

export async function exportFiles(db: Queryable, exportId: string): Promise<ExportFileRow[]> {
  const { rows } = await db.query<ExportFileRow>(
    'SELECT * FROM export_files WHERE export_id = $1 ORDER BY part',
    [exportId],
  );
  return rows;
}

export async function exportFile(
  db: Queryable,
  exportId: string,
  fileId: string,
): Promise<ExportFileRow> {
  const { rows } = await db.query<ExportFileRow>(
    'SELECT * FROM export_files WHERE export_id = $1 AND id = $2',
    [exportId, fileId],
  );
  if (!rows[0]) throw new AppError('EXPORT_FILE_NOT_FOUND');
  return rows[0];
}

/** The prefix of an export's objects, under its organization's. */
export function exportPrefix(organizationId: string, exportId: string): string {
  return `orgs/${organizationId}/exports/${exportId}/`;
}

// --- building an export (the export_build job: attempts.ts, access.ts, rowSources.ts) ----------

const OPEN = `status IN ('queued', 'running')`;

/** A new attempt of an open export: running, its attempts counted (the attempt's number). */
export async function claimExport(db: Queryable, exportId: string): Promise<ExportRow | undefined> {
  const { rows } = await db.query<ExportRow>(
    `UPDATE exports SET status = 'running', attempts = attempts + 1, progress_done = 0, started_at = coalesce(started_at, clock_timestamp()),
       error_code = NULL, error_reason = NULL, updated_at = clock_timestamp()
     WHERE id = $1 AND ${OPEN} RETURNING *`,
    [exportId],
  );
  return rows[0];
}

/** The export, locked for update (in a transaction). */
export async function lockExport(db: Queryable, exportId: string): Promise<ExportRow | undefined> {
  const { rows } = await db.query<ExportRow>(`SELECT * FROM exports WHERE id = $1 FOR UPDATE`, [
    exportId,
  ]);
  return rows[0];
}

/** The status of the export if it is open, locked for update (in a transaction). */
export async function lockOpenExport(
  db: Queryable,
  exportId: string,
): Promise<{ status: string } | undefined> {
  const { rows } = await db.query<{ status: string }>(
    `SELECT status FROM exports WHERE id = $1 AND ${OPEN} FOR UPDATE`,
    [exportId],
  );
  return rows[0];
}

export async function deleteExportFiles(db: Queryable, exportId: string): Promise<void> {
  await db.query('DELETE FROM export_files WHERE export_id = $1', [exportId]);
}

export async function markExportFailed(
  db: Queryable,
  exportId: string,
  errorCode: string,
  reason: string,
): Promise<void> {
  await db.query(
    `UPDATE exports SET status = 'failed', error_code = $2, error_reason = $3, row_count = NULL, file_count = NULL, total_bytes = NULL,
       finished_at = clock_timestamp(), updated_at = clock_timestamp() WHERE id = $1`,
    [exportId, errorCode, reason.slice(0, 1000)],
  );
}

export async function markExportPurged(db: Queryable, exportId: string): Promise<void> {
  await db.query('UPDATE exports SET purged_at = clock_timestamp() WHERE id = $1', [exportId]);
}

/** Back to queued when `attempt` is the latest one of a running export; answers the export either way. */
export async function requeueExportAttempt(
  db: Queryable,
  exportId: string,
  attempt: number,
): Promise<ExportRow | undefined> {
  const { rows } = await db.query<ExportRow>(
    `UPDATE exports SET status = CASE WHEN status = 'running' AND attempts = $2 THEN 'queued' ELSE status END,
       progress_done = CASE WHEN status = 'running' AND attempts = $2 THEN 0 ELSE progress_done END, updated_at = clock_timestamp()
     WHERE id = $1 RETURNING *`,
    [exportId, attempt],
  );
  return rows[0];
}

export interface ExportFileInsert {
  part: number;
  fileName: string;
  objectKey: string;
  contentType: string;
  rowCount: number;
  sizeBytes: number;
  sha256: string;
}

export async function insertExportFile(
  db: Queryable,
  e: Pick<ExportRow, 'id' | 'organization_id'>,
  f: ExportFileInsert,
): Promise<void> {
  await db.query(
    `INSERT INTO export_files (export_id, organization_id, part, file_name, object_key, content_type, row_count, size_bytes, sha256)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      e.id,
      e.organization_id,
      f.part,
      f.fileName,
      f.objectKey,
      f.contentType,
      f.rowCount,
      f.sizeBytes,
      f.sha256,
    ],
  );
}

/** Completed with these totals, expiring `retentionSeconds` from now; answers when it expires. */
export async function markExportCompleted(
  db: Queryable,
  exportId: string,
  totals: { rowCount: number; fileCount: number; bytes: number },
  retentionSeconds: number,
): Promise<Date> {
  const { rows } = await db.query<{ expires_at: Date }>(
    `UPDATE exports SET status = 'completed', progress_done = $2, progress_total = $2, row_count = $2, file_count = $3, total_bytes = $4,
       finished_at = clock_timestamp(), expires_at = clock_timestamp() + make_interval(secs => $5), updated_at = clock_timestamp()
     WHERE id = $1 RETURNING expires_at`,
    [exportId, totals.rowCount, totals.fileCount, totals.bytes, retentionSeconds],
  );
  return rows[0]!.expires_at;
}

/** Records the progress when `attempt` is the latest of a running export; answers the export's status (undefined: gone). */
export async function reportExportProgress(
  db: Queryable,
  exportId: string,
  attempt: number,
  done: number,
  total: number,
): Promise<string | undefined> {
  const { rows } = await db.query<{ status: string }>(
    `WITH reported AS (
       UPDATE exports SET progress_done = $2, progress_total = $3, updated_at = clock_timestamp() WHERE id = $1 AND status = 'running' AND attempts = $4
     )
     SELECT status FROM exports WHERE id = $1`,
    [exportId, done, total, attempt],
  );
  return rows[0]?.status;
}

/** Whether the organization is not deleted; with `lock`, its row share-locked (in a transaction). */
export async function organizationIsLive(
  db: Queryable,
  organizationId: string,
  lock: boolean,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL${lock ? ' FOR SHARE' : ''}`,
    [organizationId],
  );
  return !!rowCount;
}

/** Which of these rightsholders are not deleted; with `lock`, their rows share-locked (in a transaction). */
export async function liveRightsholderIds(
  db: Queryable,
  organizationId: string,
  ids: string[],
  lock: boolean,
): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM rightsholders WHERE organization_id = $1 AND id = ANY ($2::uuid[]) AND deleted_at IS NULL${lock ? ' FOR SHARE' : ''}`,
    [organizationId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** A user's membership status in the organization (null: none) and platform role. */
export async function requesterStanding(
  db: Queryable,
  organizationId: string,
  userId: string,
): Promise<{ status: string | null; platform_role: string | null } | undefined> {
  const { rows } = await db.query<{ status: string | null; platform_role: string | null }>(
    `SELECT m.status, u.platform_role FROM users u LEFT JOIN memberships m ON m.user_id = u.id AND m.organization_id = $1 WHERE u.id = $2`,
    [organizationId, userId],
  );
  return rows[0];
}

// the statement period as its last month's index (the facts' month_index)
const PG_MONTH_INDEX = monthIndexSql({
  year: 's.stmt_year',
  period: 's.stmt_period',
  cadence: 's.stmt_cadence',
});

/** The columns of statementInventory, in the statements export's stage order. */
export const INVENTORY_COLUMNS = [
  'statement_id',
  'file_name',
  'custom_name',
  'rightsholder_id',
  'rightsholder_name',
  'distributor_id',
  'distributor_name',
  'status',
  'failure_code',
  'failure_reason',
  'stmt_year',
  'stmt_period',
  'stmt_cadence',
  'currency',
  'sales_period_start',
  'sales_period_end',
  'file_rows',
  'kept_rows',
  'removed_rows',
  'net',
  'gross',
  'units',
  'open_flags',
  'open_flag_count',
  'resolved_flag_count',
  'uploaded_at',
  'processed_at',
] as const;

/** The statements of the rightsholders for the statements export, every column as text; the filters NULL where not given. */
export async function statementInventory(
  db: Queryable,
  organizationId: string,
  rightsholderIds: string[] | null,
  filters: {
    fromMonth: number | null;
    toMonth: number | null;
    distributorIds: string[] | null;
    statementIds: string[] | null;
  },
): Promise<Record<(typeof INVENTORY_COLUMNS)[number], string | null>[]> {
  const { rows } = await db.query<Record<(typeof INVENTORY_COLUMNS)[number], string | null>>(
    `SELECT s.id::text AS statement_id, s.file_name, s.custom_name, s.rightsholder_id::text AS rightsholder_id, r.name AS rightsholder_name,
     s.distributor_id::text AS distributor_id, d.name AS distributor_name, s.status, s.failure_code, s.failure_reason,
     s.stmt_year::text AS stmt_year, s.stmt_period::text AS stmt_period, s.stmt_cadence, s.currency,
     s.sales_period_start::text AS sales_period_start, s.sales_period_end::text AS sales_period_end,
     s.row_count::text AS file_rows, s.kept_rows::text AS kept_rows, s.removed_rows::text AS removed_rows,
     s.net_earnings::text AS net, s.gross_earnings::text AS gross, s.units::text AS units,
     (SELECT string_agg(DISTINCT fl.kind, ',' ORDER BY fl.kind) FROM statement_flags fl WHERE fl.statement_id = s.id AND NOT fl.resolved) AS open_flags,
     (SELECT count(*) FROM statement_flags fl WHERE fl.statement_id = s.id AND NOT fl.resolved)::text AS open_flag_count,
     (SELECT count(*) FROM statement_flags fl WHERE fl.statement_id = s.id AND fl.resolved)::text AS resolved_flag_count,
     to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS uploaded_at,
     to_char(s.processed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS processed_at
   FROM statements s
   JOIN rightsholders r ON r.id = s.rightsholder_id
   LEFT JOIN distributors d ON d.id = s.distributor_id
   WHERE s.organization_id = $1 AND s.deleted_at IS NULL AND s.rightsholder_id = ANY ($2::uuid[])
     AND ($3::int IS NULL OR ${PG_MONTH_INDEX} >= $3) AND ($4::int IS NULL OR ${PG_MONTH_INDEX} <= $4)
     AND ($5::uuid[] IS NULL OR s.distributor_id = ANY ($5)) AND ($6::uuid[] IS NULL OR s.id = ANY ($6))`,
    [
      organizationId,
      rightsholderIds,
      filters.fromMonth,
      filters.toMonth,
      filters.distributorIds,
      filters.statementIds,
    ],
  );
  return rows;
}

/** A page of the rightsholders' musical details (ids after `after`), with overrides, cluster, track and album, for the catalog export. */
export async function catalogDetailsPage(
  db: Queryable,
  organizationId: string,
  rightsholderIds: string[] | null,
  after: string,
  limit: number,
): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT md.id::text AS musical_detail_id, md.block_id::text AS block_id, b.rightsholder_id::text AS rightsholder_id, r.name AS rightsholder_name,
       md.identity_key, md.isrc, md.title, md.artist, md.release_title, md.release_artist, jsonb_array_length(md.variants) AS variant_count,
       md.row_count::text AS row_count, usd_answer(md.earnings_usd)::text AS earnings_usd, md.rows_without_rate::text AS rows_without_rate,
       tc.display_title AS cluster_title, md.state, md.ignored, md.provider, md.provider_id, md.result,
       to_char(md.fetched_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS fetched_at,
       (SELECT coalesce(json_agg(json_build_object('id', o.id, 'kind', o.kind, 'ruleId', o.rule_id, 'values', o."values", 'createdBy', o.created_by,
           'createdAt', to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')) ORDER BY o.created_at, o.id), '[]')
        FROM musical_detail_overrides o WHERE o.musical_detail_id = md.id) AS overrides,
       t.id::text AS track_id, t.link_source, t.title AS track_title, t.artist AS track_artist, t.isrc AS track_isrc,
       t.release_date::text AS track_release_date, t.genres AS track_genres,
       a.id::text AS album_id, a.title AS album_title, a.artist AS album_artist, a.upc AS album_upc, a.release_date::text AS album_release_date
     FROM musical_details md
     JOIN catalog_blocks b ON b.id = md.block_id
     JOIN rightsholders r ON r.id = b.rightsholder_id
     LEFT JOIN title_clusters tc ON tc.id = md.cluster_id
     LEFT JOIN LATERAL (
       SELECT p.*, pm.source AS link_source FROM product_musical_details pm JOIN products p ON p.id = pm.product_id AND p.kind = 'track'
       WHERE pm.musical_detail_id = md.id ORDER BY p.id LIMIT 1
     ) t ON true
     LEFT JOIN products a ON a.id = t.parent_id
     WHERE md.organization_id = $1 AND b.organization_id = $1 AND b.rightsholder_id = ANY ($2::uuid[]) AND md.id > $3::uuid
     ORDER BY md.id LIMIT $4`,
    [organizationId, rightsholderIds, after, limit],
  );
  return rows;
}

/** Which of these statement ids are statements of the organization within the scope, not deleted (an export's filters.statementIds). */
export async function visibleStatementIds(
  db: Queryable,
  organizationId: string,
  scope: RightsholderScope,
  ids: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM statements WHERE organization_id = $1 AND id = ANY ($2::uuid[]) AND deleted_at IS NULL AND ${inRightsholderScope('rightsholder_id', '$3')}`,
    [organizationId, ids, scope],
  );
  return rows.map((r) => r.id);
}
