// Enqueues statement ingestion. The job key makes a second request for the same statement
// replace the queued one instead of running twice; the job itself is idempotent.
//
// One organization cannot take every job slot: its statements run in INGEST_ORG_CONCURRENCY
// queues of its own (`statement_ingest:<org>:<n>`), each statement always in the same one (by a
// hash of its id). graphile-worker runs one job of a queue at a time and locks the queue in
// PostgreSQL, so the cap holds across every worker process. A request made while a run is under
// way (a redrive of a statement being processed) lands in the same queue and waits for it instead
// of running beside it, which would have the two write the same version.
//
// Fairness across organizations: graphile-worker takes the job of lowest priority first, then the
// oldest. A statement's priority is the number of its organization's statements already waiting,
// so the organizations' first waiting statements go before anyone's second: one that uploads 200
// at once does not hold back another's single statement until all 200 are done.
import { createHash } from 'node:crypto';
import type { Deps } from '../trpc/context.ts';

export const STATEMENT_INGEST_TASK = 'statement_ingest';

export interface StatementIngestPayload {
  organizationId: string;
  statementId: string;
  /** why it runs: 'complete', 'reprocess', 'redrive', 'callback', ... (logged) */
  reason: string;
}

/** The queue of a statement's ingest jobs: one of its organization's `slots`. */
export function statementQueue(organizationId: string, statementId: string, slots: number): string {
  const slot = createHash('sha256').update(statementId).digest().readUInt32BE(0) % Math.max(1, slots);
  return `${STATEMENT_INGEST_TASK}:${organizationId}:${slot}`;
}

export async function enqueueStatementIngest(
  deps: Pick<Deps, 'jobs' | 'pool' | 'config'>,
  organizationId: string,
  statementIds: readonly string[],
  reason: string,
): Promise<void> {
  const { rows } = await deps.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM graphile_worker.jobs
     WHERE task_identifier = $1 AND queue_name LIKE $2 AND locked_at IS NULL AND attempts < max_attempts`,
    [STATEMENT_INGEST_TASK, `${STATEMENT_INGEST_TASK}:${organizationId}:%`],
  );
  let waiting = rows[0]?.n ?? 0;
  for (const statementId of statementIds) {
    const payload: StatementIngestPayload = { organizationId, statementId, reason };
    await deps.jobs.addJob(STATEMENT_INGEST_TASK, payload, {
      jobKey: `${STATEMENT_INGEST_TASK}:${statementId}`,
      queueName: statementQueue(organizationId, statementId, deps.config.ingest.orgConcurrency),
      maxAttempts: 5,
      // graphile-worker's priority is a smallint
      priority: Math.min(waiting++, 32_767),
    });
  }
}
