// Exports and their files in PostgreSQL: one small function per operation. An export is visible
// to a caller when every rightsholder it names is within the caller's data access (the same rule
// that decides which rows analytics shows them); anything else answers NOT_FOUND.
import { inRightsholderScope, type RightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
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
export function effectiveStatus(e: Pick<ExportRow, 'status' | 'expires_at'>, now = Date.now()): ExportStatus {
  return e.status === 'completed' && e.expires_at !== null && e.expires_at.getTime() <= now ? 'expired' : e.status;
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
const VISIBLE = `organization_id = $1 AND ($3::uuid[] IS NULL OR rightsholder_ids <@ $3::uuid[])`;

export async function insertExport(
  db: Queryable,
  e: { organizationId: string; requestedBy: string; type: ExportType; format: ExportFormat; rightsholderIds: string[]; filters: ExportFilters; partRows: number },
): Promise<ExportRow> {
  const { rows } = await db.query<ExportRow>(
    `INSERT INTO exports (organization_id, requested_by, type, format, rightsholder_ids, filters, part_rows)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [e.organizationId, e.requestedBy, e.type, e.format, e.rightsholderIds, JSON.stringify(e.filters), e.partRows],
  );
  return rows[0]!;
}

export async function visibleExport(db: Queryable, organizationId: string, scope: RightsholderScope, exportId: string): Promise<ExportRow> {
  const { rows } = await db.query<ExportRow>(`SELECT * FROM exports WHERE ${VISIBLE} AND id = $2`, [organizationId, exportId, scope]);
  if (!rows[0]) throw new AppError('EXPORT_NOT_FOUND');
  return rows[0];
}

const exportSortColumns = {
  createdAt: 'created_at',
  startedAt: 'started_at',
  finishedAt: 'finished_at',
  type: 'type',
  status: EFFECTIVE_STATUS,
  rowCount: 'row_count',
} as const;
export type ExportSort = keyof typeof exportSortColumns;
export const exportSorts = Object.keys(exportSortColumns) as [ExportSort, ...ExportSort[]];

export async function listExports(
  db: Queryable,
  organizationId: string,
  scope: RightsholderScope,
  opts: { status?: ExportStatus[] | undefined; type?: ExportType[] | undefined; sortBy: ExportSort; sortOrder: 'asc' | 'desc'; limit: number; offset: number },
): Promise<{ rows: ExportRow[]; total: number }> {
  const where = `${VISIBLE} AND ($2::text[] IS NULL OR ${EFFECTIVE_STATUS} = ANY ($2)) AND ($4::text[] IS NULL OR type = ANY ($4))`;
  const params = [organizationId, opts.status ?? null, scope, opts.type ?? null];
  const dir = opts.sortOrder === 'asc' ? 'ASC' : 'DESC';
  const [rows, count] = await Promise.all([
    db.query<ExportRow>(`SELECT * FROM exports WHERE ${where} ORDER BY ${exportSortColumns[opts.sortBy]} ${dir} NULLS LAST, id ${dir} LIMIT $5 OFFSET $6`, [...params, opts.limit, opts.offset]),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM exports WHERE ${where}`, params),
  ]);
  return { rows: rows.rows, total: Number(count.rows[0]!.n) };
}

export async function exportFiles(db: Queryable, exportId: string): Promise<ExportFileRow[]> {
  const { rows } = await db.query<ExportFileRow>('SELECT * FROM export_files WHERE export_id = $1 ORDER BY part', [exportId]);
  return rows;
}

export async function exportFile(db: Queryable, exportId: string, fileId: string): Promise<ExportFileRow> {
  const { rows } = await db.query<ExportFileRow>('SELECT * FROM export_files WHERE export_id = $1 AND id = $2', [exportId, fileId]);
  if (!rows[0]) throw new AppError('EXPORT_FILE_NOT_FOUND');
  return rows[0];
}

/** The prefix of an export's objects, under its organization's. */
export function exportPrefix(organizationId: string, exportId: string): string {
  return `orgs/${organizationId}/exports/${exportId}/`;
}

/** Which of these statement ids are statements of the organization within the scope, not deleted (an export's filters.statementIds). */
export async function visibleStatementIds(db: Queryable, organizationId: string, scope: RightsholderScope, ids: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM statements WHERE organization_id = $1 AND id = ANY ($2::uuid[]) AND deleted_at IS NULL AND ${inRightsholderScope('rightsholder_id', '$3')}`,
    [organizationId, ids, scope],
  );
  return rows.map((r) => r.id);
}
