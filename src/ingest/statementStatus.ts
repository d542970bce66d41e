// A statement's status as one state machine: every change of `statements.status` is one of the
// edges below, written by this module only. Each edge names the statuses it leaves (`from`) and
// the one it enters (`to`); its UPDATE carries `status IN (from)` in its WHERE clause, so a
// statement in any other status is left as it is and the edge answers the rows it moved (none:
// refused). A caller that must move the statement says so with `moved()`, which turns "none" into
// STATEMENT_STATE_CONFLICT.
//
// The lifecycle (docs/ingestion.md "Statement lifecycle"): uploading → uploaded → processing →
// processed, or needs_mapping, failed, skipped, bad, aborted, expired, deleted.
import { inRightsholderScope } from '../access/dataAccess.ts';
import type { Pool, Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import type { StatementStatus } from './statements.ts';
import type { MappingMatch } from './library.ts';

/** Every status but `deleted`: a delete takes any of them, a restore gives one back. */
const UNDELETED = [
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
] as const;

/**
 * The transitions. `to: 'before_delete'` is restore's: the status the statement had when it was
 * deleted (one deleted while processing was remembered as uploaded: its run has ended by then).
 */
export const statementTransitions = {
  /** upload.uploadAction complete: the bytes are PUT; a direct upload not read by a run yet */
  complete: { from: ['uploading', 'uploaded'], to: 'uploaded' },
  /** a direct upload whose time-to-live ran out (statement_upload_expire, or before any action on it) */
  expireUpload: { from: ['uploading'], to: 'expired' },
  /** upload.aborted: a direct upload not read by a run yet is given up */
  abortUpload: { from: ['uploading', 'uploaded'], to: 'aborted' },
  /**
   * upload.uploadAction reprocess and `admin reprocess`: the same file again, with the current
   * mapping. A statement being processed is sent back too: its run commits nothing.
   */
  reprocess: {
    from: ['processed', 'failed', 'needs_mapping', 'skipped', 'bad', 'uploaded', 'processing'],
    to: 'uploaded',
  },
  /** mapping.updateById redriveFileIds: processed again with the saved mapping */
  redrive: {
    from: ['uploaded', 'processing', 'processed', 'needs_mapping', 'failed'],
    to: 'uploaded',
  },
  /** upload.callback: a statement waiting for a mapping is released to be processed */
  release: { from: ['needs_mapping'], to: 'uploaded' },
  /** upload.callback action skip: a statement waiting for a mapping is set aside */
  skipWaiting: { from: ['needs_mapping'], to: 'skipped' },
  /** upload.callback action bad */
  markWaitingBad: { from: ['needs_mapping'], to: 'bad' },
  /** upload.uploadAction skip: kept, out of analytics (a statement being processed too: its run commits nothing) */
  skip: { from: ['processed', 'failed', 'needs_mapping', 'uploaded', 'processing'], to: 'skipped' },
  /** upload.uploadAction bad */
  markBad: {
    from: ['processed', 'failed', 'needs_mapping', 'uploaded', 'processing', 'skipped'],
    to: 'bad',
  },
  /** upload.uploadAction delete (soft) */
  delete: { from: UNDELETED, to: 'deleted' },
  /** upload.uploadAction restore */
  restore: { from: ['deleted'], to: 'before_delete' },
  /** a pipeline run takes the statement (a second delivery of its job takes it again) */
  startRun: {
    from: ['uploaded', 'processing', 'processed', 'needs_mapping', 'failed'],
    to: 'processing',
  },
  /** the run found no mapping for the file */
  awaitMapping: { from: ['processing'], to: 'needs_mapping' },
  /** the run commits its version */
  finishRun: { from: ['processing'], to: 'processed' },
  /** the run failed for good (bad input, its time budget, its last attempt) */
  failRun: { from: ['processing'], to: 'failed' },
  /** the run failed and graphile-worker will try again: back to a state the retry picks up */
  retryRun: { from: ['processing'], to: 'uploaded' },
  /** work with no job left to run it (src/jobs/stranded.ts), or of a deleted organization, fails */
  failWaiting: { from: ['uploaded', 'processing'], to: 'failed' },
} as const satisfies Record<
  string,
  { from: readonly StatementStatus[]; to: StatementStatus | 'before_delete' }
>;

export type StatementTransition = keyof typeof statementTransitions;

/** Whether the edge leaves `status` (the table above, for a caller's own message before it moves). */
export function transitionAllows(edge: StatementTransition, status: string): boolean {
  return (statementTransitions[edge].from as readonly string[]).includes(status);
}

/** A run has read the file (it failed, was processed or located): no upload in progress any more. */
export const WAS_READ = `(located IS NOT NULL OR normalized_key IS NOT NULL OR failure_code IS NOT NULL)`;
/** Beside `status = 'processing'`, what says a run still has the statement (the run edges' guard). */
const RUN_OWNS = `deleted_at IS NULL`;

const quoted = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * A condition of a write's WHERE clause that lets its transaction commit without waiting for its
 * WAL to reach the disk (synchronous_commit off for that transaction only: a flush less, a
 * millisecond or more on a busy disk). For a run's transient writes to its statement (its start,
 * its layout, its progress), each sent on the pool as a transaction of its own: a crash of
 * PostgreSQL may lose the last of them, never a later synchronous commit (the run's commit, a
 * deletion, a reprocess: it flushes every WAL record before its own), and a lost one leaves the
 * statement as before the run's start, a state its job's retry takes again. Never in a
 * transaction of more statements: the whole transaction would commit so. In the WHERE clause,
 * every row written has evaluated it (a transaction that wrote nothing has nothing to flush).
 */
export const TRANSIENT_COMMIT = `set_config('synchronous_commit', 'off', true) = 'off'`;

interface Move {
  /** more columns to set, SQL (`size_bytes = $2`), or '' */
  set?: string;
  /** which statements, SQL over `statements` (`id = $1`); the edge's `status IN (from)` is added */
  where: string;
  params: unknown[];
  /** RETURNING list; `id` by default */
  returning?: string;
  /** a run's transient write, on the pool: committed without waiting for the disk (TRANSIENT_COMMIT) */
  transient?: boolean;
}

/**
 * The one UPDATE of statements.status: the edge's target (restore: the status before the delete)
 * and the edge's `from` in the WHERE clause. Answers the rows moved.
 */
async function transition<R extends object = { id: string }>(
  db: Queryable,
  edge: StatementTransition,
  move: Move,
): Promise<R[]> {
  const { from, to } = statementTransitions[edge];
  const target = to === 'before_delete' ? `coalesce(status_before_delete, 'uploaded')` : `'${to}'`;
  const { rows } = await db.query<R & object>(
    `UPDATE statements SET status = ${target}${move.set ? `, ${move.set}` : ''}, updated_at = clock_timestamp()
     WHERE (${move.where}) AND status IN (${quoted(from)})${move.transient ? ` AND ${TRANSIENT_COMMIT}` : ''}
     RETURNING ${move.returning ?? 'id'}`,
    move.params,
  );
  return rows;
}

/** The rows an edge moved, or STATEMENT_STATE_CONFLICT when it moved none. */
export function moved<R>(
  rows: R[],
  message = 'The statement is not in a status that allows this',
): R[] {
  if (rows.length === 0) throw new AppError('STATEMENT_STATE_CONFLICT', message);
  return rows;
}

// ---- uploads -----------------------------------------------------------------------------------

/** complete: the object as checked (its size and ETag: every later read compares it). */
export function completeUpload(
  db: Queryable,
  statementId: string,
  object: { size: number; etag: string | null },
) {
  return transition(db, 'complete', {
    set: 'size_bytes = $2, object_etag = $3, upload_expires_at = NULL',
    where: `id = $1 AND NOT ${WAS_READ}`,
    params: [statementId, object.size, object.etag],
  });
}

/**
 * Marks `expired` the direct uploads whose time-to-live has run out: every one (the minute job),
 * or among the given statements (by id, or every one of an upload) before anything acts on them,
 * so a heartbeat or a complete arriving after the TTL is refused the same way at any moment.
 */
export function expireDueUploads(
  db: Queryable,
  which:
    | { organizationId: string; statementIds: readonly string[] }
    | { organizationId: string; uploadId: string }
    | 'all',
) {
  const due = 'upload_expires_at <= clock_timestamp()';
  if (which === 'all') return transition(db, 'expireUpload', { where: due, params: [] });
  const byUpload = 'uploadId' in which;
  return transition(db, 'expireUpload', {
    where: `organization_id = $1 AND ${byUpload ? 'upload_id = $2' : 'id = ANY ($2)'} AND ${due}`,
    params: [which.organizationId, byUpload ? which.uploadId : which.statementIds],
  });
}

export function abortUpload(db: Queryable, statementId: string, reason: string) {
  return transition(db, 'abortUpload', {
    set: `failure_code = 'UPLOAD_ABORTED', failure_reason = $2, upload_expires_at = NULL`,
    where: `id = $1 AND NOT ${WAS_READ}`,
    params: [statementId, reason],
  });
}

// ---- actions on a statement --------------------------------------------------------------------

export function reprocessStatement(db: Queryable, statementId: string) {
  return transition(db, 'reprocess', { where: 'id = $1', params: [statementId] });
}

/**
 * `admin reprocess`: the organization's statements that match, among the given statuses, are
 * queued; answers each with its status before.
 */
export function reprocessMatching(
  db: Queryable,
  filter: {
    organizationId: string;
    statuses: readonly string[];
    rightsholderId?: string | undefined;
    distributorId?: string | undefined;
    mappingId?: string | undefined;
    since?: string | undefined;
  },
) {
  return transition<{ id: string; before: string; rightsholder_id: string }>(db, 'reprocess', {
    where: `id IN (SELECT m.id FROM statements m
       WHERE m.organization_id = $1 AND m.deleted_at IS NULL AND m.status = ANY ($2)
         AND ($3::uuid IS NULL OR m.rightsholder_id = $3) AND ($4::uuid IS NULL OR m.distributor_id = $4)
         AND ($5::uuid IS NULL OR m.mapping_id = $5) AND ($6::timestamptz IS NULL OR m.created_at >= $6)
       FOR UPDATE)`,
    params: [
      filter.organizationId,
      filter.statuses,
      filter.rightsholderId ?? null,
      filter.distributorId ?? null,
      filter.mappingId ?? null,
      filter.since ?? null,
    ],
    // the status before: this row as it was before the UPDATE (RETURNING sees the new one)
    returning: `id, (SELECT o.status FROM statements o WHERE o.id = statements.id) AS before, rightsholder_id`,
  });
}

export function markRedriven(
  db: Queryable,
  organizationId: string,
  statementIds: readonly string[],
) {
  return transition(db, 'redrive', {
    where: 'organization_id = $1 AND id = ANY ($2::uuid[])',
    params: [organizationId, statementIds],
  });
}

/**
 * upload.callback: the organization's statements waiting for a mapping of this header hash
 * (one, those of an upload, or every one; within the caller's rightsholder scope) are released,
 * or set aside; a distributor given is assigned on the way.
 */
export function settleWaiting(
  db: Queryable,
  outcome: 'release' | 'skipWaiting' | 'markWaitingBad',
  which: {
    organizationId: string;
    headerHash: string;
    statementId: string | null;
    uploadId: string | null;
    scope: string[] | null;
    distributorId: string | null;
  },
) {
  return transition<{ id: string; file_name: string; rightsholder_id: string; had_rows: boolean }>(
    db,
    outcome,
    {
      set: 'distributor_id = coalesce($6, distributor_id)',
      where: `organization_id = $1 AND header_hash = $2 AND deleted_at IS NULL
      AND ($3::uuid IS NULL OR id = $3) AND ($4::uuid IS NULL OR upload_id = $4) AND ${inRightsholderScope('rightsholder_id', '$5')}`,
      params: [
        which.organizationId,
        which.headerHash,
        which.statementId,
        which.uploadId,
        which.scope,
        which.distributorId,
      ],
      returning: 'id, file_name, rightsholder_id, normalized_key IS NOT NULL AS had_rows',
    },
  );
}

export function skipStatement(db: Queryable, statementId: string) {
  return transition(db, 'skip', { where: 'id = $1', params: [statementId] });
}

export function markStatementBad(db: Queryable, statementId: string) {
  return transition(db, 'markBad', { where: 'id = $1', params: [statementId] });
}

/** Soft delete; the status is remembered for a restore (processing as uploaded: its run ends). */
export function deleteStatement(db: Queryable, statementId: string) {
  return transition(db, 'delete', {
    set: `status_before_delete = CASE status WHEN 'processing' THEN 'uploaded' ELSE status END, deleted_at = clock_timestamp()`,
    where: 'id = $1',
    params: [statementId],
  });
}

/** Back to the status before the delete; answers it (uploaded: to be queued again). */
export function restoreStatement(db: Queryable, statementId: string) {
  return transition<{ id: string; status: StatementStatus }>(db, 'restore', {
    set: 'status_before_delete = NULL, deleted_at = NULL',
    where: 'id = $1',
    params: [statementId],
    returning: 'id, status',
  });
}

// ---- a pipeline run ----------------------------------------------------------------------------

/** The columns a run reads of its statement. */
export interface RunStatement {
  id: string;
  organization_id: string;
  rightsholder_id: string;
  distributor_id: string | null;
  file_name: string;
  object_key: string;
  status: string;
  normalized_key: string | null;
  normalized_version: number;
  variants: Record<string, string>;
  mapping_id: string | null;
  /** how the mapping of its processed version was found (null before the first) */
  mapping_match: MappingMatch | null;
  created_by: string | null;
  /** the SHA-256 announced in upload.uploadFile (lower-case hex), if any */
  declared_sha256: string | null;
  /** the ETag of the object as upload.uploadAction complete checked it (null before migration 22) */
  object_etag: string | null;
  /** values of the mapping's variables, given with the upload */
  variables: Record<string, string>;
  /** the text encoding named with the upload, read instead of the detected one */
  encoding: string | null;
}

/**
 * A run takes the statement: its failure and progress of an earlier run are cleared. A transient
 * write (TRANSIENT_COMMIT): `db` is the pool.
 */
export async function startRun(
  db: Pool,
  organizationId: string,
  statementId: string,
): Promise<RunStatement | undefined> {
  const rows = await transition<RunStatement>(db, 'startRun', {
    set: `failure_code = NULL, failure_reason = NULL, failure_details = NULL, progress_done = 0, progress_stage = 'reading', progress_stage_at = clock_timestamp()`,
    // a deleted organization's statement is not started (the job then fails it): no look of its own first
    where: `id = $1 AND organization_id = $2 AND ${RUN_OWNS} AND EXISTS (SELECT 1 FROM organizations WHERE id = $2 AND deleted_at IS NULL)`,
    params: [statementId, organizationId],
    transient: true,
    returning: `id, organization_id, rightsholder_id, distributor_id, file_name, object_key, status, normalized_key,
       normalized_version, variants, mapping_id, mapping_match, created_by, declared_sha256, object_etag, variables, encoding`,
  });
  return rows[0];
}

/** The run found no mapping: the statement waits with a suggestion. */
export function awaitMapping(db: Queryable, statementId: string, suggestion: unknown) {
  return transition(db, 'awaitMapping', {
    set: 'suggested_mapping = $2',
    where: `id = $1 AND ${RUN_OWNS}`,
    params: [statementId, JSON.stringify(suggestion)],
  });
}

/**
 * The run's commit: `set` the columns of its version (parameters from $2). Called under the
 * statement's row lock after checking the run still has it.
 */
export function finishRun(db: Queryable, statementId: string, set: string, params: unknown[]) {
  return transition(db, 'finishRun', {
    set,
    where: `id = $1 AND ${RUN_OWNS}`,
    params: [statementId, ...params],
  });
}

/**
 * The run failed for good (no retry). Only a statement still processing and not deleted: one
 * deleted, or sent back to be processed again, while the run worked is no longer the run's to end.
 */
export function failRun(
  db: Queryable,
  statementId: string,
  errorCode: string,
  message: string,
  details?: Record<string, unknown>,
) {
  return transition(db, 'failRun', {
    set: 'failure_code = $2, failure_reason = $3, failure_details = $4',
    where: `id = $1 AND ${RUN_OWNS}`,
    params: [
      statementId,
      errorCode,
      message.slice(0, 1000),
      details === undefined ? null : JSON.stringify(details),
    ],
  });
}

/** The run failed and will be tried again; the previous version's rows stay meanwhile. */
export function retryRun(db: Queryable, statementId: string) {
  return transition(db, 'retryRun', { where: 'id = $1', params: [statementId] });
}

/**
 * A statement waiting to be processed (or processing) that no run will end fails: its job spent
 * its attempts, or its organization is deleted.
 */
export function failWaiting(
  db: Queryable,
  statementId: string,
  errorCode: string,
  message: string,
  opts: { organizationId?: string } = {},
) {
  return transition(db, 'failWaiting', {
    set: 'failure_code = $2, failure_reason = $3, failure_details = NULL',
    where: `id = $1 AND deleted_at IS NULL${opts.organizationId ? ' AND organization_id = $4' : ''}`,
    params: opts.organizationId
      ? [statementId, errorCode, message, opts.organizationId]
      : [statementId, errorCode, message],
  });
}
