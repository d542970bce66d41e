// Work whose job is gone. A statement or export is queued in its own transaction and its job added
// right after it commits; a job's last attempt records the failure on its statement or export. Two
// things escape that: the job never added (the process died, or the database refused, between the
// commit and addJob), and a last attempt whose runner died (the dead runner's job is unlocked by
// recoverDeadRunnerJobs with its attempts spent, so nothing runs it again). Either would leave a
// statement `uploaded`/`processing` or an export `queued`/`running` for good. Every minute, with
// the dead runners' recovery: such work with no job that may still run is queued again, and such
// work whose job has spent its attempts fails as its last attempt would have failed it.
import { failExport } from '../exports/run.ts';
import { enqueueExportBuild } from '../exports/queue.ts';
import { enqueueStatementIngest } from '../ingest/queue.ts';
import { failWaiting } from '../ingest/statementStatus.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { TASK, type TaskId } from './payloads.ts';

/** Work this recently changed is left alone: its job may be about to be added. */
const QUIET = `interval '2 minutes'`;

/** Per row: whether a job of its key could still run, and whether one spent its attempts. */
const jobState = (task: TaskId, id: string) => `
  EXISTS (SELECT 1 FROM graphile_worker.jobs j WHERE j.key = '${task}:' || ${id}::text AND (j.locked_at IS NOT NULL OR j.attempts < j.max_attempts)) AS live,
  EXISTS (SELECT 1 FROM graphile_worker.jobs j WHERE j.key = '${task}:' || ${id}::text AND j.locked_at IS NULL AND j.attempts >= j.max_attempts) AS spent`;

export interface StrandedResult {
  requeued: number;
  failed: number;
}

export async function recoverStrandedWork(deps: Deps): Promise<StrandedResult> {
  const out: StrandedResult = { requeued: 0, failed: 0 };
  const statements = await deps.pool.query<{
    id: string;
    organization_id: string;
    live: boolean;
    spent: boolean;
  }>(
    `SELECT * FROM (SELECT s.id, s.organization_id, ${jobState(TASK.statement_ingest, 's.id')} FROM statements s
       WHERE s.status IN ('uploaded', 'processing') AND s.deleted_at IS NULL AND s.updated_at < clock_timestamp() - ${QUIET}) x
     WHERE NOT live LIMIT 500`,
  );
  for (const s of statements.rows) {
    if (s.spent) {
      await failWaiting(
        deps.pool,
        s.id,
        'INGEST_FAILED',
        'Processing failed repeatedly; see the server log.',
      );
      out.failed++;
    } else {
      await enqueueStatementIngest(deps, s.organization_id, [s.id], 'recover');
      out.requeued++;
    }
  }
  const exports = await deps.pool.query<{
    id: string;
    organization_id: string;
    live: boolean;
    spent: boolean;
  }>(
    `SELECT * FROM (SELECT e.id, e.organization_id, ${jobState(TASK.export_build, 'e.id')} FROM exports e
       WHERE e.status IN ('queued', 'running') AND e.updated_at < clock_timestamp() - ${QUIET}) x
     WHERE NOT live LIMIT 500`,
  );
  for (const e of exports.rows) {
    if (e.spent) {
      await failExport(
        deps,
        e.id,
        'EXPORT_FAILED',
        'Building the export failed on every attempt; the cause is in the server log.',
      );
      out.failed++;
    } else {
      await enqueueExportBuild(deps, e.organization_id, e.id);
      out.requeued++;
    }
  }
  // each statement's jobs have a queue of their own (src/ingest/queue.ts): the empty ones go
  await collectEmptyJobQueues(deps.pool);
  return out;
}

/**
 * Removes the job queues no job is in; answers how many, or null when it gave way to jobs being
 * added. graphile-worker's own GC_JOB_QUEUES races add_job: add_job's `insert … on conflict do
 * nothing` leaves an existing empty queue unlocked, so the GC could delete it while a job for it
 * was being added, and that job, pointing at no queue, would never run (an export stayed `queued`
 * for good). Under a table lock that conflicts with add_job's insert, the GC waits for jobs being
 * added to commit (then sees them) and holds new ones back for the moment it takes; a lock not
 * had within 2 s leaves the queues to the next minute.
 */
export async function collectEmptyJobQueues(pool: Pool): Promise<number | null> {
  return withTransaction(pool, async (db) => {
    await db.query(`SET LOCAL lock_timeout = '2s'`);
    try {
      await db.query('LOCK TABLE graphile_worker._private_job_queues IN SHARE ROW EXCLUSIVE MODE');
    } catch (error) {
      if ((error as { code?: string }).code === '55P03') return null;
      throw error;
    }
    // a job left pointing at no queue by that race (before this) runs on its own rather than never
    await db.query(
      `UPDATE graphile_worker._private_jobs j SET job_queue_id = NULL
       WHERE j.job_queue_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM graphile_worker._private_job_queues q WHERE q.id = j.job_queue_id)`,
    );
    const { rowCount } = await db.query(
      `DELETE FROM graphile_worker._private_job_queues q
       WHERE q.locked_at IS NULL AND NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs j WHERE j.job_queue_id = q.id)`,
    );
    return rowCount ?? 0;
  });
}
