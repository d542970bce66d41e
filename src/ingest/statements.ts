// Statements in PostgreSQL: the record clients see and the statements whose rows count. Their
// status changes are the state machine's (src/ingest/statementStatus.ts).
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import type { FooterTotal } from './fileTypes.ts';

/**
 * The statements whose normalized rows analytics, exports and the catalog read (SQL over the
 * statements table as `alias`): those with a processed version, not deleted and not set aside
 * (skipped, bad). A statement being reprocessed, or whose reprocess failed or now needs a mapping,
 * keeps its previous rows until a new version replaces them.
 */
export function withRows(alias?: string): string {
  const s = alias ? `${alias}.` : '';
  return `${s}normalized_key IS NOT NULL AND ${s}deleted_at IS NULL AND ${s}status NOT IN ('skipped', 'bad')`;
}

export const statementStatuses = [
  'uploading',
  'uploaded',
  'processing',
  'processed',
  'needs_mapping',
  'failed',
  'skipped',
  'bad',
  'aborted',
  'expired',
  'deleted',
] as const;
export type StatementStatus = (typeof statementStatuses)[number];

/**
 * What a processing statement's run is doing: reading (downloading the file and finding its
 * table), surveying (counting its rows, reading their distinct values), writing (the normalized
 * rows: progress.done moves), saving (storing the files, committing).
 */
export const progressStages = ['reading', 'surveying', 'writing', 'saving'] as const;
export type ProgressStage = (typeof progressStages)[number];

export interface StatementFlag {
  id: string;
  kind: string;
  severity: 'info' | 'warning' | 'error';
  message: string;
  details: unknown;
  resolved: boolean;
  resolvedAt: string | null;
  shown: boolean;
  createdAt: string;
}

export interface StatementRecord {
  id: string;
  organizationId: string;
  uploadId: string;
  rightsholderId: string;
  distributorId: string | null;
  mappingId: string | null;
  mappingRevision: number | null;
  /** why the statement uses its mapping: `{ by: 'header_hash' | 'columns', source, mappingId, revision, … }` (src/ingest/library.ts) */
  mappingMatch: unknown;
  customName: string | null;
  fileName: string;
  contentType: string;
  size: number | null;
  sha256: string | null;
  status: StatementStatus;
  /** `details`: what the errorCode points at, for those that say (AMOUNT_FORMAT_CONFLICT: the offending rows) */
  failureReason: { errorCode: string; message: string; details?: Record<string, unknown> } | null;
  /** the text encoding the uploader named for the file (read instead of the detected one), or null */
  encoding: string | null;
  headerHash: string | null;
  headers: string[] | null;
  suggestedMapping: unknown;
  /** values of the mapping's variables, given with the upload (`{ "currency": "EUR" }`) */
  variables: Record<string, string>;
  rowCount: number | null;
  keptRows: number | null;
  removedRows: number | null;
  /**
   * rows written of the rows below the header; while processing, `stage` says what the run does
   * (ProgressStage), `since` when it entered that stage and `seconds` how long ago that is (by the
   * database's clock), else all three are null
   */
  progress: {
    done: number;
    total: number;
    stage: ProgressStage | null;
    since: string | null;
    seconds: number | null;
  };
  stmtYear: number | null;
  stmtPeriod: number | null;
  stmtCadence: string | null;
  currency: string | null;
  salesPeriodStart: string | null;
  salesPeriodEnd: string | null;
  netEarnings: string | null;
  grossEarnings: string | null;
  units: string | null;
  /** per currency: every statement has them once processed; net and gross above only for one currency */
  currencyTotals:
    | {
        currency: string | null;
        rows: number;
        net: string | null;
        gross: string | null;
        units: string | null;
      }[]
    | null;
  /** how the file was read, once it has been (docs/ingestion.md: "How the file was read") */
  layout: StatementLayout | null;
  variants: string[];
  uploadExpiresAt: string | null;
  processedAt: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
  flags: StatementFlag[];
}

export interface StatementLayout {
  format: 'delimited' | 'xlsx' | 'xls' | 'pdf';
  container: 'none' | 'gzip' | 'zip' | 'tar';
  encoding: string;
  delimiter: string;
  /** the sheet read (the first of `sheets`), null for a text file */
  sheet: string | null;
  /** the sheets read as one table, in workbook order; [] for a text file */
  sheets: string[];
  /** the archive member read (the first of `archiveEntries`), when the upload was an archive */
  archiveEntry: string | null;
  /** the archive members read as one table, in archive order; [] when the upload was no archive */
  archiveEntries: string[];
  /** 0-based line of the header in the table as text (the `single` variant, or the upload itself) */
  headerLine: number;
  footerRecords: number;
  /** key/value lines above the header (Period, Payee, Account #, ...) */
  preambleValues: Record<string, string>;
  /** the file's own totals and balance lines, as written (FooterTotal in src/ingest/fileTypes.ts) */
  statedTotals: FooterTotal[];
}

/** The statement's layout from its `located` column (older rows lack archiveEntry and footerTotals). */
const LAYOUT_SELECT = `CASE WHEN s.located IS NULL THEN NULL ELSE jsonb_build_object(
    'format', s.located->'format', 'container', s.located->'container', 'encoding', s.located->'encoding',
    'delimiter', s.located->'delimiter', 'sheet', s.located#>'{sheet,name}',
    'sheets', coalesce(s.located#>'{sheet,combined}', CASE WHEN jsonb_typeof(s.located#>'{sheet,name}') = 'string' THEN jsonb_build_array(s.located#>'{sheet,name}') ELSE '[]'::jsonb END),
    'archiveEntry', coalesce(s.located->'archiveEntry', 'null'::jsonb),
    'archiveEntries', coalesce(s.located->'archiveEntries', CASE WHEN jsonb_typeof(s.located->'archiveEntry') = 'string' THEN jsonb_build_array(s.located->'archiveEntry') ELSE '[]'::jsonb END),
    'headerLine', s.located->'headerLine', 'footerRecords', s.located->'footerRecords',
    'preambleValues', coalesce(s.located->'preambleValues', '{}'::jsonb), 'statedTotals', coalesce(s.located->'footerTotals', '[]'::jsonb)) END`;

/** The SELECT list that builds a StatementRecord from `statements s`. */
export const STATEMENT_SELECT = `
  s.id, s.organization_id AS "organizationId", s.upload_id AS "uploadId", s.rightsholder_id AS "rightsholderId",
  s.distributor_id AS "distributorId", s.mapping_id AS "mappingId", s.mapping_revision AS "mappingRevision",
  s.mapping_match AS "mappingMatch", s.custom_name AS "customName", s.file_name AS "fileName", s.content_type AS "contentType",
  coalesce(s.size_bytes, s.declared_size) AS size, s.sha256, s.status,
  CASE WHEN s.failure_code IS NULL THEN NULL WHEN s.failure_details IS NULL THEN json_build_object('errorCode', s.failure_code, 'message', s.failure_reason)
    ELSE json_build_object('errorCode', s.failure_code, 'message', s.failure_reason, 'details', s.failure_details) END AS "failureReason",
  s.encoding,
  s.header_hash AS "headerHash", s.headers, s.suggested_mapping AS "suggestedMapping", s.variables,
  s.row_count AS "rowCount", s.kept_rows AS "keptRows", s.removed_rows AS "removedRows",
  json_build_object('done', s.progress_done, 'total', s.progress_total,
    'stage', CASE WHEN s.status = 'processing' THEN s.progress_stage END,
    'since', CASE WHEN s.status = 'processing' THEN s.progress_stage_at END,
    'seconds', CASE WHEN s.status = 'processing' THEN floor(extract(epoch FROM clock_timestamp() - s.progress_stage_at))::int END) AS progress,
  s.stmt_year AS "stmtYear", s.stmt_period AS "stmtPeriod", s.stmt_cadence AS "stmtCadence", s.currency,
  to_char(s.sales_period_start, 'YYYY-MM-DD') AS "salesPeriodStart", to_char(s.sales_period_end, 'YYYY-MM-DD') AS "salesPeriodEnd",
  s.net_earnings::text AS "netEarnings", s.gross_earnings::text AS "grossEarnings", s.units::text AS units,
  s.currency_totals AS "currencyTotals", ${LAYOUT_SELECT} AS layout,
  ARRAY(SELECT jsonb_object_keys(s.variants) ORDER BY 1) AS variants,
  s.upload_expires_at AS "uploadExpiresAt", s.processed_at AS "processedAt",
  s.created_at AS "createdAt", s.updated_at AS "updatedAt", s.deleted_at AS "deletedAt",
  coalesce((SELECT json_agg(json_build_object('id', f.id, 'kind', f.kind, 'severity', f.severity, 'message', f.message,
      'details', f.details, 'resolved', f.resolved, 'resolvedAt', f.resolved_at, 'shown', f.shown, 'createdAt', f.created_at)
      ORDER BY f.created_at, f.id) FROM statement_flags f WHERE f.statement_id = s.id), '[]'::json) AS flags`;

export async function getStatement(
  db: Queryable,
  organizationId: string,
  statementId: string,
): Promise<StatementRecord> {
  const { rows } = await db.query<StatementRecord>(
    `SELECT ${STATEMENT_SELECT} FROM statements s WHERE s.organization_id = $1 AND s.id = $2`,
    [organizationId, statementId],
  );
  if (!rows[0]) throw new AppError('STATEMENT_NOT_FOUND');
  return rows[0];
}

/** Every stored object of the given statements: the upload and every variant of every version. */
export async function statementObjectKeys(
  db: Queryable,
  statementIds: readonly string[],
): Promise<string[]> {
  const { rows } = await db.query<{ key: string }>(
    `SELECT DISTINCT k AS key FROM statements s, LATERAL (SELECT s.object_key UNION ALL SELECT value FROM jsonb_each_text(s.variants)) v(k)
     WHERE s.id = ANY ($1) ORDER BY 1`,
    [statementIds],
  );
  return rows.map((r) => r.key);
}
