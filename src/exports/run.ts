// Building an export (the export_build job): the rows come from the organization's analytics
// database (the same DuckDB file, tables and member SQL cube.query reads), are written by DuckDB
// itself (`COPY ... TO` for CSV and Parquet) or streamed chunk by chunk into the XLSX writer, one
// part at a time, into a scratch directory; each part is hashed, uploaded under the export's prefix
// and deleted before the next one starts, so memory and disk stay flat whatever the export size.
//
// Attempts: the job may run twice at once (the dead-runner recovery can take a live but slow runner
// for dead and hand its job to another). Each attempt writes its objects under a prefix of its own
// (`attempt-<n>/`, n from the claim), so no attempt can overwrite another's; the first attempt to
// complete wins, atomically, in the transaction that writes the file rows and `completed` under the
// export's row lock; the other attempts find the export finished (at their next part or at their
// own completion), remove what they wrote and end. Only the latest attempt reports progress, and a
// retryable failure requeues or fails the export only when no later attempt runs it. A failure
// removes every object under the export's prefix, after it is recorded; a completion removes the
// objects of the other attempts after it commits. A retried job finds a completed export and does
// nothing.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { DuckDBConnection } from '@duckdb/node-api';
import { rightsholderScope } from '../access/dataAccess.ts';
import { recordActivity } from '../activity/record.ts';
import { analyticsFor } from '../analytics/engine.ts';
import type { Restrictions } from '../analytics/compile.ts';
import { semantic } from '../analytics/semantic.ts';
import { withTransaction, type Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import type { Deps } from '../deps.ts';
import { effectiveValues, overrideFields, type FetchedResult, type OverrideRow } from '../catalog/musicalDetails.ts';
import {
  ParamAllocator,
  catalogColumns,
  columnsOf,
  factsPredicate,
  joinClauses,
  monthIndex,
  royaltyLineColumns,
  summaryGroupColumns,
  summaryMeasureColumns,
  type ExportColumn,
  type ExportFormat,
} from './definitions.ts';
import { retentionSeconds, scheduleExpiry } from './expire.ts';
import { exportPrefix, type ExportRow } from './store.ts';
import { writeXlsx } from './xlsx.ts';

const FACTS = semantic.model.facts.table;

const contentTypes: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  parquet: 'application/vnd.apache.parquet',
};

/** One part to write: a SELECT whose columns are the type's columns, by name, and its row count. */
interface PartSource {
  sql: string;
  params: string[];
  rows: number;
}

interface WrittenFile {
  part: number;
  fileName: string;
  objectKey: string;
  contentType: string;
  rowCount: number;
  sizeBytes: number;
  sha256: string;
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
const sqlString = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * Text that a spreadsheet would read as a formula (=, +, -, @, tab, carriage return first, also
 * behind control characters and U+FFFE/U+FFFF, which the XLSX writer drops as XML cannot hold
 * them) gets a leading apostrophe, the usual neutralisation; number and date columns are left as
 * they are.
 */
export function neutralizedSql(expr: string): string {
  const lead = `left(${expr}, 1) IN ('=', '+', '-', '@', chr(9), chr(13))`;
  const behindControls = `((ascii(${expr}) < 32 OR ascii(${expr}) >= 65534) AND regexp_matches(${expr}, '^[\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x{FFFE}\\x{FFFF}]*[=+\\-@\\t\\r]'))`;
  return `CASE WHEN ${lead} OR ${behindControls} THEN '''' || ${expr} ELSE ${expr} END`;
}

// --- claiming and finishing ------------------------------------------------------------------

async function claim(deps: Deps, exportId: string): Promise<ExportRow | undefined> {
  const { rows } = await deps.pool.query<ExportRow>(
    `UPDATE exports SET status = 'running', attempts = attempts + 1, progress_done = 0, started_at = coalesce(started_at, clock_timestamp()),
       error_code = NULL, error_reason = NULL, updated_at = clock_timestamp()
     WHERE id = $1 AND status IN ('queued', 'running') RETURNING *`,
    [exportId],
  );
  return rows[0];
}

const actorOf = (e: ExportRow) => (e.requested_by ? { userId: e.requested_by, apiKey: null } : null);
const labelOf = (e: ExportRow) => `${e.type} (${e.format})`;

/** The prefix of one attempt's objects, under the export's. */
export function attemptPrefix(e: Pick<ExportRow, 'organization_id' | 'id'>, attempt: number): string {
  return `${exportPrefix(e.organization_id, e.id)}attempt-${attempt}/`;
}

/** Removes every object under the prefix except the named keys. */
export async function removeObjects(deps: Pick<Deps, 'store'>, prefix: string, keep: ReadonlySet<string> = new Set()): Promise<void> {
  const { client, bucket } = deps.store;
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of page.Contents ?? []) {
      if (o.Key && !keep.has(o.Key)) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key }));
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

/** An attempt that found the export finished by another one (or failed): it removes its objects and ends. */
class AttemptEnded extends Error {}

const OPEN = `status IN ('queued', 'running')`;

/**
 * Marks the export failed with its errorCode and reason; none of its objects stays. With `attempt`
 * (a retryable failure of that attempt) only when no later attempt runs the export: otherwise only
 * that attempt's objects go. The failure is committed before any object is removed, so an attempt
 * completing meanwhile either committed first (and the export stays completed, its files intact)
 * or finds the export failed.
 */
export async function failExport(deps: Deps, exportId: string, errorCode: string, reason: string, attempt?: number): Promise<void> {
  // the export as found (own), and whether this call failed it
  const { own, failed } = await withTransaction(deps.pool, async (client) => {
    const { rows } = await client.query<ExportRow>(`SELECT * FROM exports WHERE id = $1 FOR UPDATE`, [exportId]);
    const e = rows[0];
    if (!e || !(e.status === 'queued' || e.status === 'running') || (attempt !== undefined && e.attempts !== attempt)) return { own: e, failed: undefined };
    await client.query('DELETE FROM export_files WHERE export_id = $1', [exportId]);
    await client.query(
      `UPDATE exports SET status = 'failed', error_code = $2, error_reason = $3, row_count = NULL, file_count = NULL, total_bytes = NULL,
         finished_at = clock_timestamp(), updated_at = clock_timestamp() WHERE id = $1`,
      [exportId, errorCode, reason.slice(0, 1000)],
    );
    await recordActivity(client, actorOf(e), {
      organizationId: e.organization_id,
      action: 'export.failed',
      subjectType: 'export',
      subjectId: e.id,
      subjectLabel: labelOf(e),
      changes: { status: { before: e.status, after: 'failed' }, errorCode: { before: null, after: errorCode } },
    });
    return { own: e, failed: e };
  });
  if (failed) {
    // the export is failed whatever happens here; objects a failed removal leaves are the expiry
    // sweep's (it purges failed exports not yet purged)
    const id = failed.id;
    await removeObjects(deps, exportPrefix(failed.organization_id, id))
      .then(() => deps.pool.query('UPDATE exports SET purged_at = clock_timestamp() WHERE id = $1', [id]))
      .catch((error: unknown) => deps.log.warn({ err: error, exportId: id }, 'export failed; removing its objects failed (the expiry sweep removes them)'));
  } else if (own && attempt !== undefined) await removeObjects(deps, attemptPrefix(own, attempt));
}

/**
 * Back to queued for the next attempt, when this attempt is the latest one (a later attempt runs
 * the export otherwise); this attempt's objects are removed either way (the retry writes its own).
 */
export async function requeueExport(deps: Deps, exportId: string, attempt: number): Promise<void> {
  const { rows } = await deps.pool.query<ExportRow>(
    `UPDATE exports SET status = CASE WHEN status = 'running' AND attempts = $2 THEN 'queued' ELSE status END,
       progress_done = CASE WHEN status = 'running' AND attempts = $2 THEN 0 ELSE progress_done END, updated_at = clock_timestamp()
     WHERE id = $1 RETURNING *`,
    [exportId, attempt],
  );
  if (rows[0]) await removeObjects(deps, attemptPrefix(rows[0], attempt));
}

/**
 * Completes the export with this attempt's files, if no other attempt completed or failed it first
 * (answers false then). The other attempts' objects (and any stray one) go once it is committed.
 */
async function complete(deps: Deps, e: ExportRow, attempt: number, files: WrittenFile[]): Promise<boolean> {
  const rowCount = files.reduce((n, f) => n + f.rowCount, 0);
  const bytes = files.reduce((n, f) => n + f.sizeBytes, 0);
  const won = await withTransaction(deps.pool, async (client) => {
    // under the export's lock: the first attempt to get here while the export is open wins
    const { rows: locked } = await client.query<{ status: string }>(`SELECT status FROM exports WHERE id = $1 AND ${OPEN} FOR UPDATE`, [e.id]);
    if (!locked[0]) return false;
    // deleted while the export ran: the caller fails it, which removes its objects
    await organizationLive(client, e, true);
    await rightsholdersLive(client, e, true);
    await client.query('DELETE FROM export_files WHERE export_id = $1', [e.id]);
    for (const f of files) {
      await client.query(
        `INSERT INTO export_files (export_id, organization_id, part, file_name, object_key, content_type, row_count, size_bytes, sha256)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [e.id, e.organization_id, f.part, f.fileName, f.objectKey, f.contentType, f.rowCount, f.sizeBytes, f.sha256],
      );
    }
    const { rows: done } = await client.query<{ expires_at: Date }>(
      `UPDATE exports SET status = 'completed', progress_done = $2, progress_total = $2, row_count = $2, file_count = $3, total_bytes = $4,
         finished_at = clock_timestamp(), expires_at = clock_timestamp() + make_interval(secs => $5), updated_at = clock_timestamp()
       WHERE id = $1 RETURNING expires_at`,
      [e.id, rowCount, files.length, bytes, retentionSeconds(deps.config)],
    );
    // the files go when they expire (with the export's own commit, so no completed export lacks it)
    await scheduleExpiry(client, e.id, done[0]!.expires_at);
    await recordActivity(client, actorOf(e), {
      organizationId: e.organization_id,
      action: 'export.completed',
      subjectType: 'export',
      subjectId: e.id,
      subjectLabel: labelOf(e),
      changes: { status: { before: locked[0].status, after: 'completed' }, rowCount: { before: null, after: rowCount }, fileCount: { before: null, after: files.length } },
    });
    return true;
  });
  if (!won) return false;
  // the objects of the other attempts (and of a crashed one) go; an attempt still uploading finds
  // the export completed at its next part and removes its own. The export is completed whatever
  // happens here: a failure must not reach the attempt's failure path, which would remove this
  // attempt's (the export's) files; what stays goes with the whole prefix when the export expires.
  await removeObjects(deps, exportPrefix(e.organization_id, e.id), new Set(files.map((f) => f.objectKey))).catch((error: unknown) =>
    deps.log.warn({ err: error, exportId: e.id }, 'export completed; removing the objects of its other attempts failed (they go when it expires)'),
  );
  return true;
}

/**
 * Reports progress (the latest attempt only) and ends this attempt (AttemptEnded) when the export
 * is no longer open: another attempt completed it, or it failed.
 */
async function progress(deps: Deps, exportId: string, attempt: number, done: number, total: number): Promise<void> {
  const { rows } = await deps.pool.query<{ status: string }>(
    `WITH reported AS (
       UPDATE exports SET progress_done = $2, progress_total = $3, updated_at = clock_timestamp() WHERE id = $1 AND status = 'running' AND attempts = $4
     )
     SELECT status FROM exports WHERE id = $1`,
    [exportId, done, total, attempt],
  );
  const status = rows[0]?.status;
  if (status !== 'queued' && status !== 'running') throw new AttemptEnded(`export ${exportId}: ${status ?? 'gone'}, attempt ${attempt} ends`);
}

// --- access -----------------------------------------------------------------------------------

/**
 * The export's organization must not be deleted: nothing is built or kept for a deleted one. With
 * `lock` (inside the completing transaction) the row is share-locked, so organization.delete,
 * which locks it for update, either committed before (the export fails) or waits for the commit.
 */
async function organizationLive(db: Queryable, e: ExportRow, lock = false): Promise<void> {
  const { rowCount } = await db.query(`SELECT 1 FROM organizations WHERE id = $1 AND deleted_at IS NULL${lock ? ' FOR SHARE' : ''}`, [e.organization_id]);
  if (!rowCount) throw new AppError('ORGANIZATION_NOT_FOUND', 'The organization was deleted before the export was built');
}

/**
 * Every rightsholder the export names must still be there (not deleted, not flagged deleted): an
 * export is never built without one of them. With `lock` (inside the completing transaction) the
 * rows are share-locked, so a deletion either committed before (the export fails) or waits.
 */
async function rightsholdersLive(db: Queryable, e: ExportRow, lock = false): Promise<void> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id::text FROM rightsholders WHERE organization_id = $1 AND id = ANY ($2::uuid[]) AND deleted_at IS NULL${lock ? ' FOR SHARE' : ''}`,
    [e.organization_id, e.rightsholder_ids],
  );
  const live = new Set(rows.map((r) => r.id));
  const gone = e.rightsholder_ids.filter((id) => !live.has(id));
  if (gone.length > 0) {
    throw new AppError('RIGHTSHOLDER_NOT_FOUND', `The export names rightsholders deleted before it was built: ${gone.join(', ')}`, { details: { ids: gone } });
  }
}

/**
 * The requester's restrictions now: they must still be an active member who sees every rightsholder
 * named, or a platform operator (who acts in every organization by their platform role, whatever
 * their membership there, a disabled one included, as the API lets them).
 */
async function restrictionsOf(deps: Deps, e: ExportRow): Promise<Restrictions> {
  await organizationLive(deps.pool, e);
  await rightsholdersLive(deps.pool, e);
  const gone = () => new AppError('EXPORT_ACCESS_REVOKED', 'The member who requested the export no longer has access to all of its rightsholders');
  if (!e.requested_by) throw gone();
  const { rows } = await deps.pool.query<{ status: string | null; platform_role: string | null }>(
    `SELECT m.status, u.platform_role FROM users u LEFT JOIN memberships m ON m.user_id = u.id AND m.organization_id = $1 WHERE u.id = $2`,
    [e.organization_id, e.requested_by],
  );
  const requester = rows[0];
  if (requester?.status !== 'active' && !requester?.platform_role) throw gone();
  const scope = await rightsholderScope(deps.pool, e.organization_id, e.requested_by);
  if (scope !== null && !e.rightsholder_ids.every((id) => scope.includes(id))) throw gone();
  return { organizationId: e.organization_id, rightsholderIds: [...e.rightsholder_ids].sort() };
}

// --- the rows of each type --------------------------------------------------------------------

/** What the database holds that an export reads: a change while an export runs makes it start over. */
async function dataVersion(c: DuckDBConnection): Promise<string> {
  const rows = (
    await c.runAndReadAll(`SELECT
      (SELECT md5(coalesce(string_agg(statement_id || ':' || normalized_version, ',' ORDER BY statement_id), '')) FROM loaded),
      (SELECT md5(coalesce(string_agg(statement_id || currency || CAST(rate AS VARCHAR), ',' ORDER BY statement_id, currency), '')) FROM fx),
      (SELECT md5(coalesce(string_agg(id || name, ',' ORDER BY id), '')) FROM rightsholder),
      (SELECT md5(coalesce(string_agg(id || name, ',' ORDER BY id), '')) FROM distributor)`)
  ).getRows()[0]!;
  return rows.join('|');
}

const SORT_KEY = ['f.rightsholder_id', 'f.statement_id', 'f.source_row'];

/** royalty_lines: parts are ranges of the facts' sort key, planned from per-statement counts. */
async function royaltyLineParts(c: DuckDBConnection, e: ExportRow, r: Restrictions): Promise<PartSource[]> {
  const chunk = e.part_rows;
  const p = new ParamAllocator();
  const pred = factsPredicate(r, e.filters, p);
  const counts = (
    await c.runAndReadAll(
      `SELECT f.rightsholder_id, f.statement_id, (f.source_row - 1) // ${chunk} AS chunk, count(*) AS n
       FROM ${FACTS} f ${joinClauses(pred.joins)} WHERE ${pred.where} GROUP BY ALL ORDER BY 1, 2, 3`,
      p.params,
    )
  ).getRows();
  // consecutive chunks are packed into parts of at most part_rows rows; a part starts at a chunk's first row
  const plans: { start: [string, string, number]; rows: number }[] = [];
  for (const [rh, st, ch, n] of counts) {
    const rows = Number(n);
    const last = plans[plans.length - 1];
    if (last && last.rows + rows <= e.part_rows) last.rows += rows;
    else plans.push({ start: [String(rh), String(st), Number(ch) * chunk + 1], rows });
  }
  if (plans.length === 0) plans.push({ start: ['', '', 0], rows: 0 });
  const columns = royaltyLineColumns;
  const joins = joinClauses(pred.joins, ...columns.map((col) => col.joins));
  return plans.map((plan, i) => {
    const q = new ParamAllocator();
    const where = [factsPredicate(r, e.filters, q).where];
    // lexicographic bounds on the sort key, written out (DuckDB cannot range-compare row values)
    const bound = (k: [string, string, number], op: '>' | '<') => {
      const [rh, st, row] = [q.add(k[0]), q.add(k[1]), q.add(String(k[2]))];
      const [a, b, c] = SORT_KEY;
      return `(${a} ${op} ${rh} OR (${a} = ${rh} AND (${b} ${op} ${st} OR (${b} = ${st} AND ${c} ${op}${op === '>' ? '=' : ''} CAST(${row} AS BIGINT)))))`;
    };
    if (i > 0) where.push(bound(plan.start, '>'));
    const next = plans[i + 1];
    if (next) where.push(bound(next.start, '<'));
    return {
      sql: `SELECT ${columns.map((col) => `${col.sql} AS ${quoteIdent(col.name)}`).join(', ')}
        FROM ${FACTS} f ${joins} WHERE ${where.join(' AND ')}`,
      params: q.params,
      rows: plan.rows,
    };
  });
}

/** Parts of a table materialized with a row number (export_rn): ranges of it. */
async function materializedParts(c: DuckDBConnection, table: string, columns: ExportColumn[], partRows: number): Promise<PartSource[]> {
  const total = Number((await c.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0]![0]);
  const parts: PartSource[] = [];
  for (let from = 0; from < total || parts.length === 0; from += partRows) {
    parts.push({
      sql: `SELECT ${columns.map((col) => quoteIdent(col.name)).join(', ')} FROM ${table} WHERE export_rn > CAST($1 AS BIGINT) AND export_rn <= CAST($2 AS BIGINT) ORDER BY export_rn`,
      params: [String(from), String(from + partRows)],
      rows: Math.max(0, Math.min(partRows, total - from)),
    });
  }
  return parts;
}

/** earnings_summary: the model's measures grouped by rightsholder, period, distributor, source, territory and currency. */
async function summaryParts(c: DuckDBConnection, e: ExportRow, r: Restrictions, table: string): Promise<PartSource[]> {
  const p = new ParamAllocator();
  const pred = factsPredicate(r, e.filters, p);
  const all = [...summaryGroupColumns, ...summaryMeasureColumns];
  const joins = joinClauses(pred.joins, ...all.map((col) => col.joins));
  const order = ['rightsholder_name', 'rightsholder_id', 'stmt_period_full', 'distributor_name', 'distributor_id', 'source', 'territory', 'currency'];
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
     SELECT row_number() OVER (ORDER BY ${order.map((o) => `${quoteIdent(o)} ASC NULLS LAST`).join(', ')}) AS export_rn, g.*
     FROM (SELECT ${all.map((col) => `${col.sql} AS ${quoteIdent(col.name)}`).join(', ')}
           FROM ${FACTS} f ${joins} WHERE ${pred.where}
           GROUP BY ${summaryGroupColumns.map((_, i) => i + 1).join(', ')}) g`,
    p.params,
  );
  return materializedParts(c, table, columnsOf('earnings_summary'), e.part_rows);
}

// the statement period as year * 12 + its last month - 1 (the facts' month_index)
const PG_MONTH_INDEX = `CASE WHEN s.stmt_year IS NULL OR s.stmt_period IS NULL THEN NULL ELSE s.stmt_year * 12 + CASE s.stmt_cadence
  WHEN 'M' THEN CASE WHEN s.stmt_period BETWEEN 1 AND 12 THEN s.stmt_period END
  WHEN 'Q' THEN CASE WHEN s.stmt_period BETWEEN 1 AND 4 THEN s.stmt_period * 3 END
  WHEN 'H' THEN CASE WHEN s.stmt_period BETWEEN 1 AND 2 THEN s.stmt_period * 6 END
  WHEN 'Y' THEN CASE WHEN s.stmt_period = 1 THEN 12 END END - 1 END`;

const STAGE_COLUMNS = [
  'statement_id', 'file_name', 'custom_name', 'rightsholder_id', 'rightsholder_name', 'distributor_id', 'distributor_name', 'status',
  'failure_code', 'failure_reason', 'stmt_year', 'stmt_period', 'stmt_cadence', 'currency', 'sales_period_start', 'sales_period_end',
  'file_rows', 'kept_rows', 'removed_rows', 'net', 'gross', 'units', 'open_flags', 'open_flag_count', 'resolved_flag_count', 'uploaded_at', 'processed_at',
] as const;

/** statements: the inventory from PostgreSQL, joined in DuckDB with the analytics figures of each statement. */
async function statementParts(deps: Deps, c: DuckDBConnection, e: ExportRow, r: Restrictions, table: string): Promise<PartSource[]> {
  const f = e.filters;
  const { rows } = await deps.pool.query<Record<(typeof STAGE_COLUMNS)[number], string | null>>(
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
      e.organization_id,
      r.rightsholderIds,
      f.statementPeriod?.from ? monthIndex(f.statementPeriod.from) : null,
      f.statementPeriod?.to ? monthIndex(f.statementPeriod.to) : null,
      f.distributorIds ?? null,
      f.statementIds ?? null,
    ],
  );
  const stage = `${table}_stage`;
  await c.run(`CREATE OR REPLACE TEMP TABLE ${stage} (${STAGE_COLUMNS.map((s) => `${s} VARCHAR`).join(', ')})`);
  const appender = await c.createAppender(stage, 'main', 'temp');
  for (const row of rows) {
    for (const name of STAGE_COLUMNS) {
      const v = row[name];
      if (v === null) appender.appendNull();
      else appender.appendVarchar(v);
    }
    appender.endRow();
  }
  appender.closeSync();
  const p = new ParamAllocator();
  const scope = factsPredicate(r, {}, p).where;
  const usd = semantic.measures.get('royalty_earnings_usd')!;
  const dec = (expr: string) => `CAST(${expr} AS DECIMAL(38,12))`;
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
     SELECT row_number() OVER (ORDER BY i.rightsholder_name, i.rightsholder_id, i.stmt_year NULLS LAST, i.stmt_period NULLS LAST, i.file_name, i.statement_id) AS export_rn,
       i.statement_id, i.file_name, i.custom_name, i.rightsholder_id, i.rightsholder_name, i.distributor_id, i.distributor_name, i.status,
       i.failure_code, i.failure_reason, CAST(i.stmt_year AS INTEGER) AS stmt_year, CAST(i.stmt_period AS INTEGER) AS stmt_period, i.stmt_cadence,
       CASE WHEN i.stmt_year IS NOT NULL AND i.stmt_period IS NOT NULL AND i.stmt_cadence IS NOT NULL THEN i.stmt_year || i.stmt_cadence || lpad(i.stmt_period, 2, '0') END AS stmt_period_full,
       i.currency, CAST(i.sales_period_start AS DATE) AS sales_period_start, CAST(i.sales_period_end AS DATE) AS sales_period_end,
       CAST(i.file_rows AS BIGINT) AS file_rows, CAST(i.kept_rows AS BIGINT) AS kept_rows, CAST(i.removed_rows AS BIGINT) AS removed_rows,
       ${dec('i.net')} AS statement_royalty_earnings, ${dec('i.gross')} AS statement_gross_royalty_earnings, ${dec('i.units')} AS statement_units,
       a.analytics_rows, a.analytics_royalty_earnings, a.analytics_gross_royalty_earnings, a.analytics_units, a.analytics_royalty_earnings_usd,
       ${dec('i.net')} - a.analytics_royalty_earnings AS royalty_earnings_difference,
       i.open_flags, CAST(i.open_flag_count AS BIGINT) AS open_flag_count, CAST(i.resolved_flag_count AS BIGINT) AS resolved_flag_count,
       i.uploaded_at, i.processed_at
     FROM ${stage} i
     LEFT JOIN (
       SELECT f.statement_id, count(*) AS analytics_rows, sum(f.royalty_earnings) AS analytics_royalty_earnings,
         sum(f.gross_royalty_earnings) AS analytics_gross_royalty_earnings, sum(f.units) AS analytics_units, ${usd.sql} AS analytics_royalty_earnings_usd
       FROM ${FACTS} f ${joinClauses(usd.joins)}
       WHERE ${scope} AND f.statement_id IN (SELECT statement_id FROM ${stage})
       GROUP BY f.statement_id
     ) a ON a.statement_id = i.statement_id`,
    p.params,
  );
  return materializedParts(c, table, columnsOf('statements'), e.part_rows);
}

const CATALOG_STAGE = catalogColumns.map((c) => c.name);
const CATALOG_PAGE = 5_000;

const listText = (values: unknown): string | null => {
  if (!Array.isArray(values) || values.length === 0) return null;
  return values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('; ');
};

/**
 * catalog: the musical details of the rightsholders' blocks, read from PostgreSQL a page at a time,
 * with their effective values (src/catalog/musicalDetails.ts, the same rule the catalog applies),
 * their track product and its album; staged in DuckDB and cut into parts like the other tables.
 */
async function catalogParts(deps: Deps, c: DuckDBConnection, e: ExportRow, r: Restrictions, table: string): Promise<PartSource[]> {
  const stage = `${table}_stage`;
  await c.run(`CREATE OR REPLACE TEMP TABLE ${stage} (${CATALOG_STAGE.map((n) => `${n} VARCHAR`).join(', ')})`);
  const appender = await c.createAppender(stage, 'main', 'temp');
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const { rows } = await deps.pool.query<Record<string, unknown>>(
      `SELECT md.id::text AS musical_detail_id, md.block_id::text AS block_id, b.rightsholder_id::text AS rightsholder_id, r.name AS rightsholder_name,
         md.identity_key, md.isrc, md.title, md.artist, md.release_title, md.release_artist, jsonb_array_length(md.variants) AS variant_count,
         md.row_count::text AS row_count, md.earnings_usd::text AS earnings_usd, md.rows_without_rate::text AS rows_without_rate,
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
       ORDER BY md.id LIMIT ${CATALOG_PAGE}`,
      [e.organization_id, r.rightsholderIds, after],
    );
    for (const row of rows) {
      const result = (row.result ?? null) as FetchedResult | null;
      const overrides = row.overrides as OverrideRow[];
      const eff = effectiveValues({ title: String(row.title), artist: (row.artist as string | null) ?? null, result }, overrides);
      // the catalog's own overriddenFields: the corrected fields, in their order (an ignore is no field)
      const fields = overrideFields.filter((f) => overrides.some((o) => o.values?.[f] !== undefined));
      const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
      const values: Record<string, string | null> = {
        rightsholder_id: text(row.rightsholder_id),
        rightsholder_name: text(row.rightsholder_name),
        block_id: text(row.block_id),
        musical_detail_id: text(row.musical_detail_id),
        identity_key: text(row.identity_key),
        isrc: text(row.isrc),
        raw_title: text(row.title),
        raw_artist: text(row.artist),
        raw_release_title: text(row.release_title),
        raw_release_artist: text(row.release_artist),
        variant_count: text(row.variant_count),
        row_count: text(row.row_count),
        earnings_usd: text(row.earnings_usd),
        rows_without_rate: text(row.rows_without_rate),
        cluster_title: text(row.cluster_title),
        enrichment_state: text(row.state),
        ignored: text(row.ignored),
        provider: text(row.provider),
        provider_id: text(row.provider_id),
        fetched_title: text(result?.title),
        fetched_artist: text(result?.artist),
        fetched_isrc: text(result?.isrc),
        fetched_release_title: text(result?.releaseTitle),
        fetched_release_date: text(result?.releaseDate),
        fetched_genres: listText(result?.genres),
        fetched_confidence: typeof result?.confidence === 'number' && Number.isFinite(result.confidence) ? String(result.confidence) : null,
        fetched_at: text(row.fetched_at),
        title: text(eff.title),
        artist: text(eff.artist),
        release_date: text(eff.releaseDate),
        genres: listText(eff.genres),
        albums: listText(eff.albums),
        song_writers: listText(eff.songWriters),
        override_count: String(overrides.length),
        overridden_fields: fields.length ? fields.join('; ') : null,
        last_override_at: overrides.length ? overrides[overrides.length - 1]!.createdAt : null,
        track_product_id: text(row.track_id),
        track_link_source: text(row.link_source),
        track_title: text(row.track_title),
        track_artist: text(row.track_artist),
        track_isrc: text(row.track_isrc),
        track_release_date: text(row.track_release_date),
        track_genres: listText(row.track_genres),
        album_product_id: text(row.album_id),
        album_title: text(row.album_title),
        album_artist: text(row.album_artist),
        album_upc: text(row.album_upc),
        album_release_date: text(row.album_release_date),
      };
      for (const name of CATALOG_STAGE) {
        const v = values[name];
        if (v === null || v === undefined) appender.appendNull();
        else appender.appendVarchar(v);
      }
      appender.endRow();
    }
    if (rows.length < CATALOG_PAGE) break;
    after = String(rows[rows.length - 1]!.musical_detail_id);
  }
  appender.closeSync();
  const cast = (col: ExportColumn) =>
    col.kind === 'date'
      ? `CAST(${col.name} AS DATE) AS ${col.name}`
      : col.kind === 'number'
        ? `CAST(${col.name} AS ${col.name === 'earnings_usd' ? 'DECIMAL(38,26)' : col.name === 'fetched_confidence' ? 'DOUBLE' : 'BIGINT'}) AS ${col.name}`
        : col.name;
  await c.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
     SELECT row_number() OVER (ORDER BY rightsholder_name, rightsholder_id, CAST(earnings_usd AS DECIMAL(38,26)) DESC, musical_detail_id) AS export_rn,
       ${catalogColumns.map(cast).join(', ')}
     FROM ${stage}`,
  );
  return materializedParts(c, table, catalogColumns, e.part_rows);
}

// --- writing ----------------------------------------------------------------------------------

async function* chunksOf(c: DuckDBConnection, sql: string, params: string[]): AsyncIterable<(string | null)[][]> {
  const result = await c.stream(sql, params);
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) return;
    yield chunk.getRows() as (string | null)[][];
  }
}

/** Writes one part to `file`; answers the number of rows written. */
async function writePart(c: DuckDBConnection, format: ExportFormat, sheet: string, columns: ExportColumn[], part: PartSource, file: string): Promise<number> {
  const ref = (col: ExportColumn) => `q.${quoteIdent(col.name)}`;
  if (format === 'parquet') {
    const res = await c.runAndReadAll(`COPY (${part.sql}) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd)`, part.params);
    return Number(res.getRows()[0]?.[0] ?? 0);
  }
  if (format === 'csv') {
    const projection = columns.map((col) => `${col.kind === 'text' ? neutralizedSql(ref(col)) : ref(col)} AS ${quoteIdent(col.name)}`);
    const res = await c.runAndReadAll(`COPY (SELECT ${projection.join(', ')} FROM (${part.sql}) q) TO ${sqlString(file)} (FORMAT csv, HEADER true)`, part.params);
    return Number(res.getRows()[0]?.[0] ?? 0);
  }
  const projection = columns.map((col) => (col.kind === 'text' ? neutralizedSql(ref(col)) : `CAST(${ref(col)} AS VARCHAR)`));
  let written = 0;
  async function* counted(): AsyncIterable<(string | null)[][]> {
    for await (const rows of chunksOf(c, `SELECT ${projection.join(', ')} FROM (${part.sql}) q`, part.params)) {
      written += rows.length;
      yield rows;
    }
  }
  await writeXlsx(file, sheet, columns, counted());
  return written;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: 4 * 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export function partFileName(e: Pick<ExportRow, 'id' | 'type' | 'format'>, part: number): string {
  return `${e.type}-${e.id.slice(0, 8)}-part-${String(part).padStart(4, '0')}.${e.format}`;
}

/**
 * Runs one attempt of an export and records its outcome: 'completed' (this attempt's files are the
 * export's), 'failed' (a permanent failure, an AppError: recorded on the export with its
 * errorCode), 'skipped' (nothing to do: the export is finished, unknown, or another attempt
 * finished it meanwhile, this attempt's objects removed). Anything else is retryable: the export
 * goes back to queued (on the final attempt: fails with EXPORT_FAILED), unless a later attempt
 * runs it, and the error is thrown.
 */
export async function buildExport(deps: Deps, exportId: string, opts: { finalAttempt?: boolean } = {}): Promise<'completed' | 'failed' | 'skipped'> {
  const e = await claim(deps, exportId);
  if (!e) return 'skipped';
  const attempt = e.attempts;
  try {
    const files = await writeAttempt(deps, e, attempt);
    return (await complete(deps, e, attempt, files)) ? 'completed' : await ended(deps, e, attempt);
  } catch (error) {
    if (error instanceof AttemptEnded) return ended(deps, e, attempt);
    if (error instanceof AppError) {
      await failExport(deps, exportId, error.errorCode, error.message);
      return 'failed';
    }
    if (opts.finalAttempt) await failExport(deps, exportId, 'EXPORT_FAILED', 'Building the export failed on every attempt; the cause is in the server log.', attempt);
    else await requeueExport(deps, exportId, attempt);
    throw error;
  }
}

/** Another attempt finished the export first: this one's objects go. */
async function ended(deps: Deps, e: ExportRow, attempt: number): Promise<'skipped'> {
  await removeObjects(deps, attemptPrefix(e, attempt));
  return 'skipped';
}

/** Writes and uploads every part of the export under the attempt's prefix; answers the files. */
async function writeAttempt(deps: Deps, e: ExportRow, attempt: number): Promise<WrittenFile[]> {
  const restrictions = await restrictionsOf(deps, e);
  const engine = analyticsFor(deps);
  const facts = await engine.freshFacts(e.organization_id);
  const dir = path.join(deps.config.analytics.dir, 'exports', `${e.id}-${randomBytes(6).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  const table = `export_${randomBytes(6).toString('hex')}`;
  try {
    return await facts.withConnection(async (c) => {
      const before = await dataVersion(c);
      const parts =
        e.type === 'royalty_lines'
          ? await royaltyLineParts(c, e, restrictions)
          : e.type === 'earnings_summary'
            ? await summaryParts(c, e, restrictions, table)
            : e.type === 'statements'
              ? await statementParts(deps, c, e, restrictions, table)
              : await catalogParts(deps, c, e, restrictions, table);
      const total = parts.reduce((n, p) => n + p.rows, 0);
      await progress(deps, e.id, attempt, 0, total);
      const columns = columnsOf(e.type);
      const written: WrittenFile[] = [];
      let done = 0;
      for (const [i, part] of parts.entries()) {
        const fileName = partFileName(e, i + 1);
        const file = path.join(dir, fileName);
        const rows = await writePart(c, e.format, e.type, columns, part, file);
        if (rows !== part.rows) throw new Error(`export ${e.id} part ${i + 1}: ${rows} rows written, ${part.rows} planned (the data changed)`);
        const objectKey = `${attemptPrefix(e, attempt)}${fileName}`;
        const [{ size }, sha256] = await Promise.all([stat(file), sha256Of(file)]);
        await deps.store.put(objectKey, createReadStream(file), contentTypes[e.format]);
        await rm(file, { force: true });
        written.push({ part: i + 1, fileName, objectKey, contentType: contentTypes[e.format], rowCount: rows, sizeBytes: size, sha256 });
        done += rows;
        await progress(deps, e.id, attempt, done, total);
      }
      if ((await dataVersion(c)) !== before) throw new Error(`export ${e.id}: the organization's data changed while it was written`);
      await c.run(`DROP TABLE IF EXISTS ${table}`);
      await c.run(`DROP TABLE IF EXISTS ${table}_stage`);
      return written;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
