// The SQL of the file procedures (src/api/file/*), which treat statements as files: listing them,
// what deleting some would remove, and removing them for good. One function per query; `org` is
// the caller's organization with its rightsholder scope (`ctx.org`).
import { inRightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { likeContains, sortDirection } from '../db/sql.ts';
import { AppError } from '../errors.ts';
import { STATEMENT_SELECT, type StatementRecord } from './statements.ts';
import { dateRangeCondition, type Page, type VisibleTo } from './uploadStore.ts';

export interface FileToDelete {
  id: string;
  fileName: string;
  status: string;
  rightsholderId: string;
  keptRows: number | null;
  netEarnings: string | null;
  currency: string | null;
  objectKeys: string[];
}

/** The statements of one upload the caller may see, by id (locked when asked); any other id answers NOT_FOUND. */
export async function filesOfUpload(
  db: Queryable,
  org: VisibleTo,
  uploadId: string,
  fileIds: string[],
  lock = false,
): Promise<FileToDelete[]> {
  const { rows } = await db.query<
    FileToDelete & { variants: Record<string, string>; objectKey: string }
  >(
    `SELECT id, file_name AS "fileName", status, rightsholder_id AS "rightsholderId", kept_rows AS "keptRows",
       net_earnings::text AS "netEarnings", currency, variants, object_key AS "objectKey"
     FROM statements WHERE organization_id = $1 AND upload_id = $2 AND id = ANY ($3) AND ${inRightsholderScope('rightsholder_id', '$4')}
     ORDER BY created_at, id ${lock ? 'FOR UPDATE' : ''}`,
    [org.id, uploadId, fileIds, org.rightsholderScope],
  );
  const found = new Set(rows.map((r) => r.id));
  const missing = fileIds.filter((id) => !found.has(id));
  if (missing.length > 0)
    throw new AppError('STATEMENT_NOT_FOUND', `No file with id ${missing[0]} in that upload`);
  return rows.map(({ variants, objectKey, ...r }) => ({
    ...r,
    objectKeys: [...new Set([objectKey, ...Object.values(variants)])],
  }));
}

/**
 * Locks the upload, as upload.uploadFile does to add a file: a file added meanwhile is either in
 * before a delete looks (and keeps the upload), or finds the upload gone (UPLOAD_NOT_FOUND).
 */
export async function lockUpload(
  db: Queryable,
  organizationId: string,
  uploadId: string,
): Promise<void> {
  await db.query('SELECT 1 FROM uploads WHERE id = $1 AND organization_id = $2 FOR UPDATE', [
    uploadId,
    organizationId,
  ]);
}

/** Deletes statements for good (their rows, flags and raw values go with them). */
export async function deleteStatementRows(
  db: Queryable,
  statementIds: readonly string[],
): Promise<void> {
  await db.query('DELETE FROM statements WHERE id = ANY ($1)', [statementIds]);
}

/** Deletes the upload if no file is left in it. */
export async function deleteUploadIfEmpty(db: Queryable, uploadId: string): Promise<void> {
  await db.query(
    'DELETE FROM uploads u WHERE u.id = $1 AND NOT EXISTS (SELECT 1 FROM statements s WHERE s.upload_id = u.id)',
    [uploadId],
  );
}

/** The flags of the statements, counted, and the periods they cover, per rightsholder. */
export async function flagsAndPeriodsOf(
  db: Queryable,
  statementIds: readonly string[],
): Promise<{ flags: number; periods: unknown }> {
  const { rows } = await db.query<{ flags: number; periods: unknown }>(
    `SELECT (SELECT count(*) FROM statement_flags WHERE statement_id = ANY ($1))::int AS flags,
       coalesce((SELECT json_agg(DISTINCT jsonb_build_object('rightsholderId', rightsholder_id, 'stmtYear', stmt_year, 'stmtPeriod', stmt_period, 'stmtCadence', stmt_cadence))
         FROM statements WHERE id = ANY ($1) AND stmt_year IS NOT NULL), '[]') AS periods`,
    [statementIds],
  );
  return rows[0]!;
}

export interface BlockOfFiles {
  id: string;
  rightsholderId: string;
  rightsholderName: string;
  state: string;
  statements: number;
  statementsRemoved: number;
  musicalDetails: number;
  tracks: number;
  albums: number;
}

/** The catalog blocks of these rightsholders built from any of the statements, with their counts. */
export async function blocksBuiltFrom(
  db: Queryable,
  organizationId: string,
  statementIds: readonly string[],
  rightsholderIds: readonly string[],
): Promise<BlockOfFiles[]> {
  const { rows } = await db.query<BlockOfFiles>(
    `SELECT b.id, b.rightsholder_id AS "rightsholderId", r.name AS "rightsholderName", b.state,
       (SELECT count(*) FROM jsonb_object_keys(b.source_versions))::int AS statements,
       (SELECT count(*) FROM jsonb_object_keys(b.source_versions) k WHERE k = ANY ($2::text[]))::int AS "statementsRemoved",
       (SELECT count(*) FROM musical_details d WHERE d.block_id = b.id)::int AS "musicalDetails",
       (SELECT count(*) FROM products p WHERE p.block_id = b.id AND p.kind = 'track')::int AS tracks,
       (SELECT count(*) FROM products p WHERE p.block_id = b.id AND p.kind = 'album')::int AS albums
     FROM catalog_blocks b JOIN rightsholders r ON r.id = b.rightsholder_id
     WHERE b.organization_id = $1 AND b.rightsholder_id = ANY ($3::uuid[]) AND b.source_versions ?| $2::text[]
     ORDER BY r.name, b.id`,
    [organizationId, statementIds, rightsholderIds],
  );
  return rows;
}

const fileSortColumns = {
  createdAt: 's.created_at',
  name: 'lower(s.file_name)',
  updatedAt: 's.updated_at',
} as const;
export type FileSort = keyof typeof fileSortColumns;

export interface FileFilter {
  fileId?: string[] | undefined;
  dateStart?: string | undefined;
  dateEnd?: string | undefined;
  rightsholderId?: string | undefined;
  distributorId?: string | undefined;
  /** an ILIKE pattern (customNameFilter), or null */
  customName?: string | null | undefined;
  name?: string | undefined;
}

function filesWhere(org: VisibleTo, f: FileFilter) {
  return {
    where: `s.organization_id = $1 AND s.deleted_at IS NULL AND ${inRightsholderScope('s.rightsholder_id', '$2')}
    AND ($3::uuid[] IS NULL OR s.id = ANY ($3)) AND ${dateRangeCondition('s.created_at', '$4', '$5')}
    AND ($6::uuid IS NULL OR s.rightsholder_id = $6) AND ($7::uuid IS NULL OR s.distributor_id = $7)
    AND ($8::text IS NULL OR s.custom_name ILIKE $8) AND ($9::text IS NULL OR s.file_name ILIKE $9)`,
    params: [
      org.id,
      org.rightsholderScope,
      f.fileId ?? null,
      f.dateStart ?? null,
      f.dateEnd ?? null,
      f.rightsholderId ?? null,
      f.distributorId ?? null,
      f.customName ?? null,
      f.name ? likeContains(f.name) : null,
    ],
  };
}

/** A page of the files (statements not deleted). */
export async function listFiles(
  db: Queryable,
  org: VisibleTo,
  filter: FileFilter,
  page: Page & { sortBy: FileSort },
): Promise<StatementRecord[]> {
  const { where, params } = filesWhere(org, filter);
  const order = `${fileSortColumns[page.sortBy]} ${sortDirection(page.sortOrder)}, s.id`;
  const { rows } = await db.query<StatementRecord>(
    `SELECT ${STATEMENT_SELECT} FROM statements s WHERE ${where} ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}`,
    params,
  );
  return rows;
}

export async function countFiles(
  db: Queryable,
  org: VisibleTo,
  filter: FileFilter,
): Promise<number> {
  const { where, params } = filesWhere(org, filter);
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM statements s WHERE ${where}`,
    params,
  );
  return rows[0]!.n;
}
