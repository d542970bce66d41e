// Enqueues statement ingestion. The job key makes a second request for the same statement
// replace the queued one instead of running twice; the job itself is idempotent.
//
// One organization cannot take every job slot: its statements run in INGEST_ORG_CONCURRENCY
// queues of its own (`statement_ingest:<org>:<n>`). graphile-worker runs one job of a queue at a
// time and locks the queue in PostgreSQL, so the cap holds across every worker process. A
// statement joins the queue its job is already in (a redrive of a statement being processed then
// waits for that run instead of running beside it, which would have the two write the same
// version), else the organization's queue holding the fewest jobs.
//
// Fairness across organizations: graphile-worker takes the job of lowest priority first, then the
// oldest. A statement's priority is the number of its organization's statements already waiting,
// so the organizations' first waiting statements go before anyone's second: one that uploads 200
// at once does not hold back another's single statement until all 200 are done.
import type { Queryable } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { TASK } from '../jobs/payloads.ts';

export const STATEMENT_INGEST_TASK = TASK.statement_ingest;

/**
 * Where a statement's job goes: the queue of its job already there, else the least busy of its
 * organization's `slots` queues; and its priority, the organization's statements waiting.
 */
async function placement(
  db: Queryable,
  organizationId: string,
  statementId: string,
  slots: number,
): Promise<{ queueName: string; priority: number }> {
  const prefix = `${STATEMENT_INGEST_TASK}:${organizationId}:`;
  const { rows } = await db.query<{ own: string | null; slot: number; waiting: number }>(
    `WITH org_jobs AS (
       SELECT queue_name, key, locked_at, attempts, max_attempts FROM graphile_worker.jobs
       WHERE task_identifier = $1 AND starts_with(queue_name, $2))
     SELECT (SELECT queue_name FROM org_jobs WHERE key = $3 LIMIT 1) AS own,
       (SELECT count(*)::int FROM org_jobs WHERE locked_at IS NULL AND attempts < max_attempts) AS waiting,
       (SELECT n FROM generate_series(0, $4 - 1) n ORDER BY (SELECT count(*) FROM org_jobs WHERE queue_name = $2 || n), n LIMIT 1) AS slot`,
    [STATEMENT_INGEST_TASK, prefix, `${STATEMENT_INGEST_TASK}:${statementId}`, Math.max(1, slots)],
  );
  const row = rows[0]!;
  // graphile-worker's priority is a smallint
  return { queueName: row.own ?? `${prefix}${row.slot}`, priority: Math.min(row.waiting, 32_767) };
}

/**
 * Queues the statements' jobs; `reason` says why they run ('complete', 'reprocess', 'redrive',
 * 'callback', ...: logged). `db` is the pool, or a transaction the jobs are added with.
 */
export async function enqueueStatementIngest(
  deps: Pick<Deps, 'pool' | 'config'>,
  organizationId: string,
  statementIds: readonly string[],
  reason: string,
  db: Queryable = deps.pool,
): Promise<void> {
  for (const statementId of statementIds) {
    const { queueName, priority } = await placement(
      db,
      organizationId,
      statementId,
      deps.config.ingest.orgConcurrency,
    );
    await enqueue(
      db,
      TASK.statement_ingest,
      { organizationId, statementId, reason },
      {
        jobKey: `${STATEMENT_INGEST_TASK}:${statementId}`,
        queueName,
        maxAttempts: 5,
        // graphile-worker's priority is 0 when none is given
        priority,
      },
    );
  }
}

/**
 * Whether statements of the rightsholder have their ingestion job waiting or running (a job that
 * has used up its attempts is neither): a block refresh waits for them (catalog_block_refresh).
 */
export async function ingestionsInFlight(
  db: Queryable,
  organizationId: string,
  rightsholderId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM statements s JOIN graphile_worker.jobs j ON j.key = $3 || ':' || s.id
     WHERE s.organization_id = $1 AND s.rightsholder_id = $2 AND s.status IN ('uploaded', 'processing') AND s.deleted_at IS NULL
       AND j.attempts < j.max_attempts
     LIMIT 1`,
    [organizationId, rightsholderId, STATEMENT_INGEST_TASK],
  );
  return (rowCount ?? 0) > 0;
}
